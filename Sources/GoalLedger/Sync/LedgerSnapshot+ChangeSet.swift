import Foundation

extension LedgerSnapshot {
    /// This store's ``SyncState``: what a peer needs to compute the change set this store lacks.
    public func syncState() throws(LedgerError) -> SyncState {
        try run {
            var state = SyncState(ledger: ledgerID)
            for (origin, head) in try txn.originHeads() {
                state.heads[origin] = SyncState.Head(sequence: head, hash: try txn.chainHash(origin, head))
            }
            return state
        }
    }

    /// The signed records this store holds that a store in state `peer` lacks (with the peer's
    /// last event of each origin both hold, for the peer to compare), events of revoked devices
    /// after their revocation left out. Refuses a state of another ledger.
    public func changeSet(since peer: SyncState) throws(LedgerError) -> ChangeSet {
        try store.checkSameLedger(peer.ledger, source: "the peer")
        var events: [Event] = []
        var records: [[UInt8]] = []
        try visitRecords(missingFrom: peer.heads.mapValues(\.sequence), overlap: true) { (e, bytes) throws(LedgerError) in
            events.append(e)
            records.append(Array(bytes))
        }
        return ChangeSet(ledger: ledgerID, events: events, records: records)
    }
}
