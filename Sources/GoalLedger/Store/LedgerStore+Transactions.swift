import Foundation

extension LedgerStore {
    /// Runs `body` with a writer in one write transaction and commits it, then what the write
    /// leaves to do after its commit (see ``WriteEffects``). Errors pass as they are.
    func commit<R>(_ body: (borrowing LedgerWriter) throws -> R) throws -> R {
        // A write retried on a grown map runs `body` again, with effects of its own.
        let (result, effects, number) = try env.withWriteTransaction { txn in
            let effects = WriteEffects()
            let number = txn.snapshotID
            let writer = try LedgerWriter(StoreTransaction(txn, layout: layout), store: self, effects: effects)
            // The id filter is only used where it follows this store's own writes.
            let rows = try writer.txn.idRowCount()
            idFilter.withLock { $0.begin(txn: number, rows: rows) }
            let result: R
            do {
                result = try body(writer)
            } catch {
                throw effects.mapFull ?? error
            }
            if let full = effects.mapFull { throw full }
            if let failure = effects.failure { throw failure }
            let rowsAtEnd = try writer.txn.idRowCount()
            idFilter.withLock { $0.ending(txn: number, rows: rowsAtEnd) }
            return (result, effects, number)
        }
        idFilter.withLock { $0.didCommit(txn: number) }
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
        try env.withReadTransaction { txn in try body(try LedgerSnapshot(StoreTransaction(txn, layout: layout), store: self)) }
    }

    /// `read` with every failure a ``LedgerError`` (an error `body` throws of another type
    /// becomes a store error): for the calls of the store and its companion modules.
    package func reading<R>(_ body: (borrowing LedgerSnapshot) throws -> R) throws(LedgerError) -> R {
        try failing(as: "reading \(path)") { try snapshot(body) }
    }
}
