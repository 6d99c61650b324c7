import Foundation

/// A read model of the stored projection: a processor that owns some tables of a projection
/// generation and keeps them in line with the log, in the transaction that folds the events
/// (an append, an import, a rebuild chunk). `StoredProjection.Batch` drives the models, each
/// a concrete stored property, in one fixed order (``StoredProjection/Batch/models``).
///
/// The contract:
/// - ``tables`` names the tables the model owns. Every table of a generation has exactly one
///   owner, and only its owner writes it; a model may read any table.
/// - ``apply(_:at:_:_:)`` folds one event, in position order, after the gate and the revocation
///   cut (an event that fails either reaches no model). What several models read goes through
///   the batch's ``FoldState``: a model reads there only what a model before it in the order
///   recorded.
/// - ``recompute(_:_:_:)`` takes a goal whose entries are not additive (schema-1 history
///   writes), read whole once for every model; a model that keeps sums over entries computes
///   them again from it. Called between the flushes of the pending and the digest models.
/// - ``flush(_:_:)`` writes what the batch changed, once, after its last event, in key order
///   where the rows are many (a page is then visited once). The models flush in the same
///   order they apply; a model's flush may read what an earlier model flushed.
/// - ``clear(_:_:)`` empties the model's tables (a rebuild starts from nothing).
/// - ``freshRows(of:)`` gives the rows a fresh replay puts in the model's tables, one entry per
///   table of ``tables``, which `verify` compares with the stored ones.
///
/// The fold is the hot path of append and rebuild: the driver calls the models through their
/// concrete types; the protocol is used as such only where a list of models is natural
/// (clearing, `verify`, the tables' owners).
protocol ReadModel {
    /// The tables this model owns.
    static var tables: [ProjectionTable] { get }

    /// A model with nothing folded yet.
    init()

    /// Folds `e`, stored at `position`.
    mutating func apply(_ e: Event, at position: UInt64, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws

    /// Computes again from `goal`'s whole state (its live entries under the store's history
    /// rule) whatever this model keeps as a sum over its entries.
    mutating func recompute(_ goal: GoalState, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws

    /// Writes what the batch changed in this model's tables.
    mutating func flush(_ state: inout FoldState, _ txn: borrowing StoreTransaction) throws

    /// The rows of a fresh replay in this model's tables, in the order of ``tables``.
    static func freshRows(of replay: FreshReplay) throws -> [FreshReplay.Rows]
}

extension ReadModel {
    /// A model that keeps no sum over a goal's entries has nothing to compute again.
    mutating func recompute(_ goal: GoalState, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {}

    /// Empties this model's tables of generation `t`.
    static func clear(_ t: ProjectionTables, _ txn: borrowing StoreTransaction) throws {
        for table in tables { try txn.clear(t[table]) }
    }
}
