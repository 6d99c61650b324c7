import Foundation

/// What `append` did with one submitted event.
public struct AppendResult: Equatable, Sendable {
    /// The event's id: the draft's, or the one the ledger made.
    public var id: UUID
    /// The event's position in the store's log (for a duplicate, the original's).
    public var position: UInt64
    /// The event's clock reading (for a duplicate, the original's).
    public var hlc: HLC
    /// True when an event with this id was already in the store (nothing was written for it).
    public var duplicate: Bool

    /// `{"id","position","hlc","duplicate"}`, the clock as 16 hex digits.
    public var json: JSONValue {
        .object([
            ("id", .string(id.uuidString)), ("position", .number(Double(position))),
            ("hlc", .string(hlc.description)), ("duplicate", .bool(duplicate)),
        ])
    }
}
