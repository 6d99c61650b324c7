import Foundation

extension LedgerStore {
    /// Exchanges events with `peer` both ways: each side receives exactly the events it lacks,
    /// decided by comparing their last origin sequences. Each direction is one transaction.
    @available(*, noasync, message: "use the async form of sync(with:)")
    public func sync(with peer: LedgerStore) throws(LedgerError) -> SyncResult {
        try checkSameLedger(peer.ledgerID, source: peer.path)
        guard peer.device != device else {
            throw LedgerError(.store, "\(peer.path) is also device \(device): two stores of one ledger cannot share a device")
        }
        // The one path every transport takes: a state one way, a change set the other.
        let pulled = try exchange(from: peer, into: self)
        let pushed = try exchange(from: self, into: peer)
        return SyncResult(pulled: pulled, pushed: pushed)
    }

    /// ``sync(with:)-6ncyr``, off the caller's actor, on the store's writer queue.
    public func sync(with peer: LedgerStore) async throws(LedgerError) -> SyncResult {
        let result: Result<SyncResult, LedgerError> = await withCheckedContinuation { continuation in
            writer.async { continuation.resume(returning: Result { () throws(LedgerError) in try self.sync(with: peer) }) }
        }
        return try result.get()
    }

    /// Applies to `target` what `source` holds that it lacks.
    private func exchange(from source: LedgerStore, into target: LedgerStore) throws(LedgerError) -> ImportResult {
        let state = try target.reading { try $0.syncState() }
        let changes = try source.reading { try $0.changeSet(since: state) }
        return try target.writing { try $0.apply(changes, from: source.path) }
    }

    /// Creates a store for this ledger at `path` for a new device, holding all of this store's events.
    ///
    /// The events are copied in chunks (100,000 events each), one write transaction per chunk,
    /// in the order one import of the whole log would write them, so that memory does not grow
    /// with the log. A clone interrupted part way (a crash, a full disk) leaves a valid store of
    /// the ledger at `path` holding a prefix of each origin's events, every one verified: it
    /// opens and verifies, and a ``sync(with:)-6ncyr`` with this store completes it (or remove it
    /// and clone again).
    public func clone(to path: String, device: String, now: Instant = .systemNow) throws(LedgerError) -> LedgerStore {
        try clone(to: path, device: device, now: now, chunk: Self.cloneChunkEvents)
    }

    func checkSameLedger(_ other: UUID, source: String) throws(LedgerError) {
        guard other == ledgerID else {
            throw LedgerError(
                .store,
                "\(source) belongs to ledger \(other.uuidString), this store to \(ledgerID.uuidString): stores of different ledgers never exchange events"
            )
        }
    }
}
