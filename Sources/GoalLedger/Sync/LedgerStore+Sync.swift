import Foundation

extension LedgerStore {
    /// Exchanges events with `peer` both ways: each side receives exactly the events it lacks,
    /// decided by comparing their last origin sequences. Each direction is one transaction,
    /// which reads the other store 100,000 events at a time: memory does not grow with how far
    /// behind a side is.
    @available(*, noasync, message: "use the async form of sync(with:)")
    public func sync(with peer: LedgerStore) throws(LedgerError) -> SyncResult {
        try sync(with: peer, pageEvents: Self.cloneChunkEvents)
    }

    /// `sync(with:)`, each way read and imported `pageEvents` events at a time.
    package func sync(with peer: LedgerStore, pageEvents: Int) throws(LedgerError) -> SyncResult {
        try checkSameLedger(peer.ledgerID, source: peer.path)
        guard peer.device != device else {
            throw LedgerError(.store, "\(peer.path) is also device \(device): two stores of one ledger cannot share a device")
        }
        let pulled = try exchange(from: peer, into: self, pageEvents: pageEvents)
        let pushed = try exchange(from: self, into: peer, pageEvents: pageEvents)
        return SyncResult(pulled: pulled, pushed: pushed)
    }

    /// ``sync(with:)-6ncyr``, off the caller's actor, on the store's writer queue.
    public func sync(with peer: LedgerStore) async throws(LedgerError) -> SyncResult {
        let result: Result<SyncResult, LedgerError> = await withCheckedContinuation { continuation in
            writer.async { continuation.resume(returning: Result { () throws(LedgerError) in try self.sync(with: peer) }) }
        }
        return try result.get()
    }

    /// Applies to `target` what `source` holds that it lacks, in one write of `target`'s, read
    /// from `source` a page at a time (``PageWalk``): each origin from the last event `target`
    /// holds of it (so that the import finds a fork), as a change set since `target`'s state
    /// would hold them.
    private func exchange(from source: LedgerStore, into target: LedgerStore, pageEvents: Int) throws(LedgerError) -> ImportResult {
        let held = try target.reading { try $0.originHeads() }
        let heads = try source.reading { try $0.exchangedHeads() }
        var ranges: [(origin: String, first: UInt64, last: UInt64)] = []
        for (origin, head) in heads.sorted(by: { String.bytesPrecede($0.key, $1.key) }) where head >= max(held[origin] ?? 0, 1) {
            ranges.append((origin, max(held[origin] ?? 0, 1), head))
        }
        // Room for what is behind: a write that fills the map runs again from its start.
        let behind = ranges.saturatingSum { Int(clamping: $0.last - $0.first + 1) }
        try target.reserveRoom(behind, times: Self.roomPerEvent)
        return try target.writing { (w) throws(LedgerError) in
            // Made again if the write runs again (on a larger map).
            var walk = PageWalk(ledger: source.ledgerID, source: StoreSource(source), pageEvents: pageEvents)
            for r in ranges { walk.add(r.origin, from: r.first, through: r.last) }
            return try walk.importPages(
                unreadable: [],
                apply: { (changes, unreadable, _) throws(LedgerError) in
                    // The pages of the source's file read for this page need not stay in memory.
                    try source.releaseMappedPages()
                    return try w.apply(changes, from: source.path, unreadable: unreadable)
                },
                heads: { () throws(LedgerError) in try w.originHeads() },
                rename: { (entry) throws(LedgerError) in try w.renameWaiting(entry) })
        }
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
