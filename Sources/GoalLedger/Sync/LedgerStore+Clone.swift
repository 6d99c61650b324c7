import Foundation

extension LedgerStore {
    /// The events a clone copies per write transaction: each chunk's change set and its import
    /// are held in memory, never the whole log.
    static let cloneChunkEvents = 100_000

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
            try store.readTransaction { store.releaseMappedPages($0) }
            chunks += 1
            try afterChunk?(chunks)
        } while !walk.isDone
        return store
    }
}

/// Where a clone is in the source's log: each origin's next sequence to copy and the last one,
/// and the next event of each origin read ahead. Chunks follow the canonical order (clock, then
/// origin), the order one import of the whole log writes, except where a chunk finishes an
/// origin's signed run; every event comes after what it rests on (its chain's predecessor, its
/// device's enrolment, which its clock follows), so each chunk verifies against the chunks
/// before it, and a store that holds the first chunks holds a prefix of each origin.
struct CloneWalk {
    /// Per origin: the next sequence to read, and the last to copy (its head when the clone
    /// began, or the revoked device's last counted sequence).
    var next: [String: UInt64]
    let last: [String: UInt64]
    /// Per origin, its next event and record, read but not yet copied.
    var ahead: [String: (event: Event, record: [UInt8])] = [:]

    /// Whether every event is copied.
    var isDone: Bool { ahead.isEmpty && next.allSatisfy { $0.value > (last[$0.key] ?? 0) } }
}

extension LedgerSnapshot {
    /// A walk over every event of this store, for a clone (events of a revoked device after its
    /// revocation left out, as every exchange does).
    func cloneWalk() throws(LedgerError) -> CloneWalk {
        try run {
            var next: [String: UInt64] = [:]
            var last: [String: UInt64] = [:]
            for (origin, head) in try txn.originHeads() {
                next[origin] = 1
                last[origin] = Swift.min(head, try txn.revokedAfter(origin) ?? .max)
            }
            return CloneWalk(next: next, last: last)
        }
    }

    /// The next `limit` events of `walk`, in canonical order, as a change set; past `limit`,
    /// each origin's run goes on to the event whose signature closes it (a run is at most
    /// `LedgerStore.signedRunLength` events in a store that signs long batches in runs).
    func next(_ limit: Int, of walk: inout CloneWalk) throws(LedgerError) -> ChangeSet {
        try run {
            var events: [Event] = []
            var records: [[UInt8]] = []
            // Each origin's next event, read once: the earliest of them goes next.
            for origin in walk.next.keys where walk.ahead[origin] == nil {
                if let e = try read(origin, &walk) { walk.ahead[origin] = e }
            }
            // An import takes a chained run only up to the signature closing it: past the
            // limit, the origins whose runs are open go on to their next signed event.
            var open = Set<String>()
            while true {
                let full = events.count >= limit
                guard
                    let origin = walk.ahead.lazy.filter({ !full || open.contains($0.key) })
                        .min(by: { $0.value.event.key < $1.value.event.key })?.key,
                    let e = walk.ahead.removeValue(forKey: origin)
                else { break }
                events.append(e.event)
                records.append(e.record)
                if e.event.previousHash != nil && e.event.signature == nil { open.insert(origin) } else { open.remove(origin) }
                if let n = try read(origin, &walk) { walk.ahead[origin] = n }
            }
            // The pages read are not kept resident from one chunk to the next.
            store.releaseMappedPages(txn)
            return ChangeSet(ledger: ledgerID, events: events, records: records)
        }
    }

    /// The next event of `origin` in `walk`, with its record; nil past the last to copy.
    private func read(_ origin: String, _ walk: inout CloneWalk) throws -> (event: Event, record: [UInt8])? {
        guard let sequence = walk.next[origin], sequence <= walk.last[origin] ?? 0 else { return nil }
        guard let p = try txn.get(layout.origins, key: StoreLayout.originKey(origin, sequence)) else {
            throw LedgerError.damaged("the origin index has no entry for \(origin)/\(sequence), below its head")
        }
        let position = UInt64(bigEndianBytes: p)
        let read = try txn.withValue(layout.events, key: position.bigEndianBytes) { (bytes) throws in
            (try LedgerStore.decodeRecord(bytes, position: position), Array(bytes))
        }
        guard let read else {
            throw LedgerError.damaged("the origin index names position \(position), which holds no event", position: position)
        }
        walk.next[origin] = sequence + 1
        return read
    }
}
