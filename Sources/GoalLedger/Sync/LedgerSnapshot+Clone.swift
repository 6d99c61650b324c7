import Foundation

extension LedgerSnapshot {
    /// A walk over every event of this store, for a clone (events of a revoked device after its
    /// revocation left out, as every exchange does).
    func cloneWalk() throws(LedgerError) -> CloneWalk {
        try run {
            let last = try txn.exchangedHeads()
            return CloneWalk(next: last.mapValues { _ in 1 }, last: last)
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
        guard let position = try txn.position(origin: origin, sequence: sequence) else {
            throw LedgerError.damaged("the origin index has no entry for \(origin)/\(sequence), below its head")
        }
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
