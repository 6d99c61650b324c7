import Foundation

/// Which write a goal's field holds: the guard of an edit that should change the field only if
/// no one else has changed it since it was read (``LedgerWriter/editGoal(_:title:details:cadence:targetDate:target:unit:ifUnchangedSince:expectedVersion:now:)``).
///
/// Unlike the goal's version, which counts every event about the goal, a field's version moves
/// only when the field is written: progress, tags, a reminder or an edit of another field leave
/// it as it is, while an edit of the same field, here or on another device and synced, moves it.
///
/// It is opaque: compare versions, keep them, encode them (as the id of the event that wrote the
/// value, or null for a field no event has written yet), but do not make them up.
public struct FieldVersion: Hashable, Sendable, CustomStringConvertible {
    /// The id of the event whose write the field holds; nil before any event has written it.
    let event: UUID?

    /// The version of a field no event has written yet (a goal whose creation has not arrived).
    public static let neverWritten = FieldVersion(event: nil)

    init(event: UUID?) { self.event = event }

    /// The writing event's id (upper case), or `never written`.
    public var description: String { event?.uuidString ?? "never written" }
}

extension FieldVersion: Codable {
    /// The id of the event that wrote the value, as an upper-case UUID string, or null.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .neverWritten
            return
        }
        let text = try c.decode(String.self)
        guard let id = UUID.parse(text) else {
            throw DecodingError.ledgerField(c.codingPath, "must be an event id (a UUID) or null, got \"\(text.prefix(64))\"")
        }
        self.init(event: id)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if let event { try c.encode(event.uuidString) } else { try c.encodeNil() }
    }
}

extension GoalState {
    /// The version of `field`: the write its current value comes from, by canonical order
    /// (``stamp(of:)-(GoalField)``).
    public func version(of field: GoalField) -> FieldVersion { FieldVersion(event: stamp(of: field)?.event) }

    /// The version of every editable field.
    var fieldVersions: [GoalField: FieldVersion] {
        Dictionary(uniqueKeysWithValues: GoalField.allCases.map { ($0, version(of: $0)) })
    }
}

extension Goal {
    /// The version of `field` when this value was read (``FieldVersion``): pass it back as
    /// `ifUnchangedSince` to edit the field only if no one has changed it since. A goal decoded
    /// from a form without versions has none: every field is then ``FieldVersion/neverWritten``,
    /// which no guard of an existing goal matches.
    public func version(of field: GoalField) -> FieldVersion { fieldVersions[field] ?? .neverWritten }
}
