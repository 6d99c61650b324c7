import Foundation
import LMDB
import Sodium

/// The store's one write transaction, inside ``LedgerStore/write(_:)-9fstg``: every change to the
/// ledger is made through a writer, and what one closure writes commits together or not at all.
///
///     let goal = try store.write { writer in
///         let goal = try writer.createGoal(title: "Read", cadence: .daily, now: now)
///         try writer.setReminder(goal, at: ReminderTime(hour: 20, minute: 0), now: now)
///         return goal
///     }
///
/// Each call checks what it writes against the store as the transaction has changed it so
/// far, so the calls of one closure compose: a goal created by the first is there for the
/// second. An error thrown from the closure (by a call of the writer, or by the closure itself)
/// rolls the whole transaction back. A call that throws ends the write: every later call of the
/// writer throws, and the write commits nothing even if the closure catches the error and
/// returns. Writes of a process run one at a time; reads go on
/// beside them and see a write once it commits. A writer cannot be copied or kept.
public struct LedgerWriter: ~Copyable {
    let txn: Transaction
    let store: LedgerStore
    /// The event schema the store is on: 1 (legacy) until `migrate`, then 2.
    public let schema: Int
    let effects: WriteEffects

    init(_ txn: consuming Transaction, store: LedgerStore, effects: WriteEffects) throws {
        schema = try LedgerStore.schema(txn, store.layout)
        self.txn = txn
        self.store = store
        self.effects = effects
    }

    var layout: StoreLayout { store.layout }
    /// The name of the store's device, the origin of the events this writer appends.
    public var device: String { store.device }
    /// How schema-1 history writes count: the old rule until migration.
    public var historyRule: HistoryRule { HistoryRule(schema: schema) }

    /// Runs `body` inside the transaction, turning storage failures into store errors that say
    /// what was being done (`doing`: "appending to …").
    func run<R>(_ doing: @autoclosure () -> String, _ body: () throws -> R) throws(LedgerError) -> R {
        if let failure = effects.failure {
            throw LedgerError(.invalidArgument, "this write already failed (\(failure.message)); nothing of it is written")
        }
        do {
            return try body()
        } catch {
            // A call may have written part of its work: the transaction must not commit.
            let failure =
                (error as? LedgerError)
                ?? ((error as? LMDBError)?.isDamage == true
                    ? LedgerError(
                        "\(doing()) failed: \(error); the file is damaged: restore a backup or recover",
                        reason: .fileDamaged(position: nil))
                    : LedgerError(.store, "\(doing()) failed: \(error)"))
            effects.failure = failure
            // A full map is no failure of the write: it runs again on a larger map.
            if let e = error as? LMDBError, e.isMapFull { effects.mapFull = e }
            throw failure
        }
    }
}

/// What a write does once its transaction has committed: work that must not happen for a
/// transaction that rolls back (keeping a rotated key), or that needs transactions of its own
/// (rebuilding the projection after a revocation cut folded events).
final class WriteEffects {
    /// A key that replaces the device's key once the rotation that enrolled it commits; until
    /// then, the writer signs with it.
    var rotatedKey: SigningKey?
    /// Whether the projection is to be rebuilt after the commit.
    var rebuild = false
    /// The error of a call that failed: the write commits nothing.
    var failure: LedgerError?
    /// The map filled up during a call: the write is to run again on a larger map.
    var mapFull: LMDBError?
}

extension LedgerStore {
    /// Runs `body` with a writer in one write transaction and commits it, then what the write
    /// leaves to do after its commit (see ``WriteEffects``). Errors pass as they are.
    func commit<R>(_ body: (borrowing LedgerWriter) throws -> R) throws -> R {
        // A write retried on a grown map runs `body` again, with effects of its own.
        let (result, effects) = try env.withWriteTransaction { txn in
            let effects = WriteEffects()
            let writer = try LedgerWriter(txn, store: self, effects: effects)
            let result: R
            do {
                result = try body(writer)
            } catch {
                throw effects.mapFull ?? error
            }
            if let full = effects.mapFull { throw full }
            if let failure = effects.failure { throw failure }
            return (result, effects)
        }
        if let key = effects.rotatedKey { try keys.replace(key, ledger: ledgerID, device: device) }
        if effects.rebuild { try rebuild() }
        return result
    }

    /// `write` with every failure a ``LedgerError`` (an error `body` throws of another type
    /// becomes a store error): for the calls of the store and its companion modules.
    @discardableResult
    package func writing<R>(_ body: (borrowing LedgerWriter) throws -> R) throws(LedgerError) -> R {
        try failing(as: "writing to \(path)") { try commit(body) }
    }

    /// Runs `body` with a snapshot in one read transaction. Errors pass as they are.
    func snapshot<R>(_ body: (borrowing LedgerSnapshot) throws -> R) throws -> R {
        try env.withReadTransaction { txn in try body(try LedgerSnapshot(txn, store: self)) }
    }

    /// `read` with every failure a ``LedgerError`` (an error `body` throws of another type
    /// becomes a store error): for the calls of the store and its companion modules.
    package func reading<R>(_ body: (borrowing LedgerSnapshot) throws -> R) throws(LedgerError) -> R {
        try failing(as: "reading \(path)") { try snapshot(body) }
    }
}
