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
    var fieldVersions: FieldVersions {
        var out = FieldVersions()
        for field in GoalField.allCases { out[field] = version(of: field) }
        return out
    }
}

/// A version per editable field, each absent until set: what a ``Goal`` read from the ledger
/// carries for ``Goal/version(of:)`` (every field), or a decoded one (the fields its form held).
/// One stored property per field, so a goal of a list costs no table of its own.
struct FieldVersions: Hashable, Sendable {
    private var title, details, cadence, targetDate, target, unit: FieldVersion?

    subscript(field: GoalField) -> FieldVersion? {
        get {
            switch field {
            case .title: title
            case .details: details
            case .cadence: cadence
            case .targetDate: targetDate
            case .target: target
            case .unit: unit
            }
        }
        set {
            switch field {
            case .title: title = newValue
            case .details: details = newValue
            case .cadence: cadence = newValue
            case .targetDate: targetDate = newValue
            case .target: target = newValue
            case .unit: unit = newValue
            }
        }
    }

    /// Whether no field has a version.
    var isEmpty: Bool { GoalField.allCases.allSatisfy { self[$0] == nil } }
}

extension Goal {
    /// The version of `field` when this value was read (``FieldVersion``): pass it back as
    /// `ifUnchangedSince` to edit the field only if no one has changed it since. A goal decoded
    /// from a form without versions has none: every field is then ``FieldVersion/neverWritten``,
    /// which no guard of an existing goal matches.
    public func version(of field: GoalField) -> FieldVersion { fieldVersions[field] ?? .neverWritten }
}
