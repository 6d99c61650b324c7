import Foundation

extension LedgerWriter {
    /// Imports events written by other stores of the same ledger, in one transaction.
    ///
    /// Events already held are skipped. Each origin's new events are taken in sequence order
    /// for as long as they can be verified: they continue the origin's sequence and hash chain
    /// without a gap or a fork, every signature present verifies, and the signature closing
    /// each run was made by the key the ledger's trust (<doc:TrustAndTheThreatModel>) gives the origin at that
    /// sequence. The first event that fails, and every later event of its origin, wait: they
    /// are reported in ``ImportResult/waiting`` and named by ``LedgerSnapshot/waitingEvents()``, nothing of
    /// them is written, and the rest of the import goes on. Events of a revoked device after its
    /// revocation are left out (``ImportResult/revoked``). Business rules are not applied:
    /// another device's events are facts; one that fails the gate is kept and set aside
    /// (``SetAsideEvent``). The clock advances past every imported event.
    @discardableResult
    public func importEvents(_ incoming: [Event], from source: String) throws(LedgerError) -> ImportResult {
        try importEvents(incoming, records: nil, from: source, unreadable: [])
    }

    /// `importEvents`, with the records the events were received as (aligned with `incoming`;
    /// written as they are, nil: encoded), where the transport could not read some records:
    /// `unreadable` names the first of each origin, which waits with every later one of its
    /// origin. `beforeCommit` runs last, once every check has passed: when it throws, nothing is
    /// written (a hub commits its side of a sync there).
    @discardableResult
    package func importEvents(
        _ incoming: [Event], records incomingRecords: [[UInt8]]?, from source: String, unreadable: [WaitingEvents],
        beforeCommit: (() throws(LedgerError) -> Void)? = nil, recovering: Bool = false
    ) throws(LedgerError) -> ImportResult {
        if let newer = incoming.first(where: { Int($0.schema) > schema }) {
            throw LedgerError(
                "\(source): event \(newer.id.uuidString) was written under schema \(newer.schema); this store is on schema \(schema)",
                reason: .needsMigration
            )
        }
        let (result, rebuildAfter) = try run("importing into \(store.path)") {
            try store.importEvents(
                incoming, records: incomingRecords, unreadable: unreadable, beforeCommit: beforeCommit, recovering: recovering, txn)
        }
        // A revocation that cut events the projection had folded: rebuilt once this commits.
        if rebuildAfter { effects.rebuild = true }
        return result
    }
}
