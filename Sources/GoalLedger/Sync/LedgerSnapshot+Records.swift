import Foundation

extension LedgerSnapshot {
    /// Visits the events this store holds that a peer with origin heads `heads` lacks, each with
    /// its stored record (the `EventCodec` bytes, checked by decoding), origin by origin in
    /// sequence order, from one read snapshot. For a peer that is not a store (the hub), which
    /// keeps the records as they are.
    ///
    /// With `overlap`, each origin starts at the peer's last event instead of the one after it:
    /// the peer compares that one with its own copy, so two histories of one origin are found
    /// even when both have the same length.
    ///
    /// The pages of the log read are let go every 65,536 records (they stay in the file cache):
    /// a visit of a large log (an export, a push to a hub) does not keep it resident.
    package func visitRecords(
        missingFrom heads: [String: UInt64], overlap: Bool = false, _ body: (Event, UnsafeRawBufferPointer) throws(LedgerError) -> Void
    ) throws(LedgerError) {
        var visited = 0
        try run {
            for (origin, head) in try txn.originHeads().sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
                let theirs = heads[origin] ?? 0
                let first = overlap ? max(theirs, 1) : theirs + 1
                guard head >= first else { continue }
                try txn.scanRecords(of: origin, from: first) { position, bytes in
                    try body(try LedgerStore.decodeRecord(bytes, position: position), bytes)
                    visited += 1
                    if visited & 0xFFFF == 0 { store.releaseMappedPages(txn) }
                    return true
                }
            }
        }
    }

    /// Up to `limit` of `origin`'s events from sequence `first` through `last` (none past its
    /// revocation's cut), decoded, with their records as stored.
    package func records(of origin: String, from first: UInt64, through last: UInt64, limit: Int) throws(LedgerError) -> PageChunk {
        var chunk = PageChunk()
        try run {
            try txn.scanRecords(of: origin, from: first) { position, bytes in
                let event = try LedgerStore.decodeRecord(bytes, position: position)
                guard event.sequence <= last else { return false }
                chunk.events.append(event)
                chunk.records.append(Array(bytes))
                return chunk.events.count < limit
            }
        }
        return chunk
    }

    /// Each origin's last event an exchange reads: its head, or its revocation's cut.
    package func exchangedHeads() throws(LedgerError) -> [String: UInt64] {
        try run { try txn.exchangedHeads() }
    }

    /// The event of `origin` with origin sequence `sequence`, if this store holds it.
    package func event(origin: String, sequence: UInt64) throws(LedgerError) -> Event? {
        try run { try txn.event(origin: origin, sequence: sequence) }
    }
}
