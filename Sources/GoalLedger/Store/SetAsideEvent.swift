import Foundation

/// A stored event that fails the gate, which no fold, read, report or reminder ever sees.
///
/// Only a store written before every event passed the gate can hold one (an app could then
/// append, say, a NaN amount as a typed value). The event stays in the log byte for byte: it is
/// signed, and its origin's later events chain through it, so it still travels with its
/// origin's history and every store sets it aside in the same way. Every store of the ledger
/// then folds the same events, and the ledger converges; `verify` and `status` name it.
public struct SetAsideEvent: Equatable, Sendable {
    /// The event's position in this store's log.
    public var position: UInt64
    /// The event's id.
    public var id: UUID
    /// The device that wrote it.
    public var origin: String
    /// Its origin sequence.
    public var sequence: UInt64
    /// What the gate says of it: the field and the rule (`field "amount": must be a number …`).
    public var reason: String

    static func reason(_ error: FieldError) -> String {
        error.field.map { "field \"\($0)\": \(error.message)" } ?? error.message
    }

    /// One line for people: `phone/6 (event …) is set aside: field "amount": …`.
    public var description: String { "\(origin)/\(sequence) (event \(id.uuidString)) is set aside: \(reason)" }
}
