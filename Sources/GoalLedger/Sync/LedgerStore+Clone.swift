import Foundation

extension LedgerStore {
    /// The events a clone copies per write transaction: each chunk's change set and its import
    /// are held in memory, never the whole log.
    package static let cloneChunkEvents = 100_000

    /// `clone(to:device:now:)` in chunks of `chunk` events, each applied in a write transaction
    /// of its own; `afterChunk` runs after each commit with the number of chunks committed (a
    /// test stops the copy there, as an interrupted process would).
    func clone(
        to path: String, device: String, now: Instant, chunk: Int, afterChunk: ((Int) throws(LedgerError) -> Void)? = nil
    ) throws(LedgerError) -> LedgerStore {
        let (origins, trust, schema, enrolled) = try reading { s in
            (try s.originHeads(), try s.trustState(), s.schema, try s.enrolledDevices().contains(where: { $0.device == self.device }))
        }
        guard origins[device] == nil, device != self.device, trust.devices[device] == nil else {
            throw LedgerError(
                .invalidArgument, "device \(device) already belongs to this ledger (enrolled, revoked or writing); choose another name")
        }
        let store = try LedgerStore.create(at: path, device: device, ledger: ledgerID, schema: schema)
        // Room for the copy at once (about what the source uses), not by a chunk run again on
        // each doubling of the map.
        try store.reserveRoom(env.usedBytes / 4, times: 5)
        // This device vouches for the new one: it enrols the new store's key, signed, before
        // the new store copies the log (a source that does not sign, a schema-1 store, does not).
        if enrolled, let key = try store.keys.key(ledger: ledgerID, device: device) {
            try writing { try $0.enrol(device: device, key: key.publicKey, from: 1, now: now) }
        }
        // What the log holds now (the enrolment included) is copied; later appends are a sync's.
        var walk = try reading { (s) throws(LedgerError) in try s.cloneWalk() }
        var chunks = 0
        repeat {
            let changes = try reading { (s) throws(LedgerError) in try s.next(Swift.max(chunk, 1), of: &walk) }
            try store.writing { try $0.apply(changes, from: self.path) }
            try store.releaseMappedPages()
            chunks += 1
            try afterChunk?(chunks)
        } while !walk.isDone
        return store
    }
}

extension LedgerStore {
    /// Lets the pages of the data file this process read go from its memory (they stay in the
    /// page cache): a copy in chunks keeps its resident memory flat however large the log.
    package func releaseMappedPages() throws(LedgerError) {
        try readTransaction { releaseMappedPages($0) }
    }

    /// The room a write of events received reserves for each: about twice what an event takes in
    /// a store (its record, its index entries and its projection rows: 255 bytes at 1,000,000
    /// events of the benchmark's).
    package static let roomPerEvent = 512

    /// Grows the store's map so that `count` times `factor` bytes more than the file uses fit
    /// (the product clamped): a write that fills the map runs again from its start on a map
    /// twice the size, so a write known to be large reserves its room first. Called inside a
    /// transaction of this thread, it does nothing (the write grows the map as it fills it).
    package func reserveRoom(_ count: Int, times factor: Int = 1) throws(LedgerError) {
        let (bytes, overflow) = max(0, count).multipliedReportingOverflow(by: max(0, factor))
        _ = try failing(as: "growing the map of \(path)") { try env.reserve(overflow ? .max : bytes) }
    }
}
