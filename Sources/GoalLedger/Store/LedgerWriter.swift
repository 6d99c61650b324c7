import Foundation
import LMDB

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
    /// The transaction, with the store's tables: the log's reads are its methods.
    let txn: StoreTransaction
    let store: LedgerStore
    /// The event schema the store is on: 1 (legacy) until `migrate`, then 2.
    public let schema: Int
    let effects: WriteEffects

    init(_ txn: consuming StoreTransaction, store: LedgerStore, effects: WriteEffects) throws {
        schema = try txn.schema()
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
