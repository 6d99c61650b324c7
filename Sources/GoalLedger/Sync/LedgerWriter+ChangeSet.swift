import Foundation

extension LedgerWriter {
    /// Applies a change set from `source` with every check of an import
    /// (``importEvents(_:from:)``): what cannot be verified waits, the rest is written in this
    /// transaction. Refuses a change set of another ledger.
    @discardableResult
    public func apply(_ changeSet: ChangeSet, from source: String) throws(LedgerError) -> ImportResult {
        try apply(changeSet, from: source, unreadable: [])
    }

    /// `apply`, where the transport could not read some records (`unreadable`: the first of
    /// each origin, which waits with the rest of its origin), with `beforeCommit` run last
    /// inside the write transaction (a hub commits its side there).
    @discardableResult
    package func apply(
        _ changeSet: ChangeSet, from source: String, unreadable: [WaitingEvents], beforeCommit: (() throws(LedgerError) -> Void)? = nil
    ) throws(LedgerError) -> ImportResult {
        try store.checkSameLedger(changeSet.ledger, source: source)
        // The records as received are written as they are: no second encoding.
        return try importEvents(
            changeSet.events, records: changeSet.records, from: source, unreadable: unreadable, beforeCommit: beforeCommit)
    }
}

extension LedgerWriter {
    /// Each origin's last sequence held, as this transaction has it so far (an import in parts
    /// tells from it what a part took).
    package func originHeads() throws(LedgerError) -> [String: UInt64] {
        try run("reading \(store.path)") { try txn.originHeads() }
    }
}

extension LedgerWriter {
    /// Names `entry` as what waits of its origin, in place of the entry an import named (when it
    /// named one): an import in parts counts what waits of an origin across its parts.
    package func renameWaiting(_ entry: WaitingEvents) throws(LedgerError) {
        try run("importing into \(store.path)") {
            let key = MetaKey.waiting + Array(entry.origin.utf8)
            guard try txn.get(layout.meta, key: key) != nil else { return }
            try txn.put(layout.meta, key: key, value: entry.storedValue)
        }
    }
}
