import Foundation

extension LedgerSnapshot {
    /// The next blob to hand to a relay: the events this store holds past `token` (nil: a relay
    /// that holds nothing), and the token that covers them once the relay confirms the upload.
    ///
    /// Each origin's events follow its mark in sequence order, origins in UTF-8 byte order,
    /// without the anchor records of ``changeSet(since:)``: a receiver links the first of them
    /// to the event it holds before it, by its chain. Events this store received from the
    /// relay are not handed out again once ``LedgerWriter/applyRelayed(_:token:)`` has moved the
    /// token past them; events it received any other way (another store, an export, the hub)
    /// are, so that the relay carries them on. Events of a revoked device after its revocation
    /// are left out.
    ///
    /// A blob holds at most `limit` events and `byteLimit` record bytes, and is cut only where a
    /// signed run ends, so every blob verifies on its own once its predecessors have arrived; a
    /// first blob exceeds them by the rest of one signed run (at most
    /// 4,096 events by the rule of an append) rather than be empty. Call again with the returned
    /// token until the change set is empty. Refuses a token of another ledger, and limits
    /// below 1.
    public func outgoing(
        since token: RelayToken?, limit: Int = RelayToken.defaultLimit, byteLimit: Int = RelayToken.defaultByteLimit
    ) throws(LedgerError) -> (changes: ChangeSet, next: RelayToken) {
        let token = token ?? RelayToken(ledger: ledgerID)
        try store.checkSameLedger(token.ledger, source: "the relay token")
        guard limit >= 1, byteLimit >= 1 else {
            throw LedgerError(.invalidArgument, "a relay blob's limits must be at least 1 (limit \(limit), byte limit \(byteLimit))")
        }
        var blob = RelayBlob(limit: limit, byteLimit: byteLimit)
        var next = token
        try run {
            for (origin, head) in try txn.originHeads().sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
                let first = token.mark(of: origin) + 1
                guard head >= first, !blob.isFull else { continue }
                try txn.scanRecords(of: origin, from: first) { position, bytes in
                    blob.offer(try LedgerStore.decodeRecord(bytes, position: position), Array(bytes))
                }
                // What is left of the origin has no signature after it: it goes as it is.
                blob.closeOrigin()
                if let last = blob.lastSequence(of: origin) { next.advance(origin, to: last) }
            }
        }
        return (ChangeSet(ledger: ledgerID, events: blob.events, records: blob.records), next)
    }
}
