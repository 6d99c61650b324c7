import Foundation
import LMDB

extension LedgerSnapshot {
    /// Visits the events this store holds that a peer with origin heads `heads` lacks, each with
    /// its stored record (the `EventCodec` bytes, checked by decoding), origin by origin in
    /// sequence order, from one read snapshot. For a peer that is not a store (the hub), which
    /// keeps the records as they are.
    ///
    /// With `overlap`, each origin starts at the peer's last event instead of the one after it:
    /// the peer compares that one with its own copy, so two histories of one origin are found
    /// even when both have the same length.
    package func visitRecords(
        missingFrom heads: [String: UInt64], overlap: Bool = false, _ body: (Event, UnsafeRawBufferPointer) throws(LedgerError) -> Void
    ) throws(LedgerError) {
        try run {
            for (origin, head) in try LedgerStore.originHeads(txn, layout).sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
                let theirs = heads[origin] ?? 0
                let first = overlap ? max(theirs, 1) : theirs + 1
                guard head >= first else { continue }
                try LedgerStore.scanRecords(of: origin, from: first, txn, layout) { position, bytes in
                    try body(try LedgerStore.decodeRecord(bytes, position: position), bytes)
                    return true
                }
            }
        }
    }

    /// The event of `origin` with origin sequence `sequence`, if this store holds it.
    package func event(origin: String, sequence: UInt64) throws(LedgerError) -> Event? {
        try run {
            guard let p = try txn.get(layout.origins, key: StoreLayout.originKey(origin, sequence)) else { return nil }
            return try LedgerStore.event(at: UInt64(bigEndianBytes: p), txn, layout)
        }
    }
}

extension LedgerStore {
    /// Visits the stored records of `origin` from sequence `first` on, in sequence order, each
    /// with its log position, until `body` returns false. Events of a revoked device after its
    /// revocation are not visited: no exchange passes them on. An origin index entry whose
    /// position holds no event is damage.
    static func scanRecords(
        of origin: String, from first: UInt64, _ txn: borrowing Transaction, _ layout: StoreLayout,
        _ body: (_ position: UInt64, _ bytes: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let prefix = Array(origin.utf8) + [0]
        let revokedAfter = try TrustTable.revokedAfter(origin, txn, layout) ?? .max
        try txn.scan(layout.origins, from: StoreLayout.originKey(origin, first)) { key, value in
            guard key.count == prefix.count + 8, key.prefix(prefix.count).elementsEqual(prefix),
                UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[prefix.count...])) <= revokedAfter
            else { return false }
            let p = UInt64(bigEndianBytes: value)
            var goOn = true
            let found: Void? = try txn.withValue(layout.events, key: p.bigEndianBytes) { bytes in goOn = try body(p, bytes) }
            guard found != nil else {
                throw LedgerError.damaged("the origin index names position \(p), which holds no event", position: p)
            }
            return goOn
        }
    }
}
