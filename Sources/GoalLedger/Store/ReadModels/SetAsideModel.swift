import Foundation

/// The set-aside read model: `setAside` (per position, the gate's message for a stored event
/// that fails the gate; only a store written before every event passed it can hold one, or
/// receive one from such a store).
///
/// The driver writes a refused event here (`setAside(at:_:_:_:)`) instead of folding
/// it, so an event that reaches `apply` changes nothing here.
struct SetAsideModel: ReadModel {
    static let tables: [ProjectionTable] = [.setAside]

    mutating func apply(_ e: Event, at position: UInt64, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {}

    mutating func flush(_ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {}

    /// Records that the event at `position` failed the gate with `error`.
    func setAside(at position: UInt64, _ error: FieldError, _ state: FoldState, _ txn: borrowing StoreTransaction) throws {
        try txn.put(state.tables.setAside, key: position.bigEndianBytes, value: Array(SetAsideEvent.reason(error).utf8))
    }

    /// `setAside`: the events the log's read found failing the gate.
    static func freshRows(of replay: FreshReplay) throws -> [FreshReplay.Rows] { [.keyed(replay.setAsideRows)] }
}
