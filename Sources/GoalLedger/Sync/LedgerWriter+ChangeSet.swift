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
