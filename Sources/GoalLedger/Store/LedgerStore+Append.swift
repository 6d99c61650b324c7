import Foundation
import LMDB
import Sodium

extension LedgerStore {
    /// The longest run of a device's events one signature closes: a batch longer than this is
    /// signed every this many events too (a signature costs about 43 µs).
    package static let signedRunLength = 4_096

    /// The body of ``LedgerWriter/append(_:lines:expectedVersion:now:)`` in the write
    /// transaction `txn`, for a store on `schema`: each draft passes the gate and the rules and
    /// becomes the next event of one `LocalBatch`, which then signs, indexes and folds them.
    func append(
        _ drafts: [EventDraft], lines: [Int]?, expectedVersion: Int?, now: Instant, enrolling: Bool, signingKey: SigningKey?,
        schema: Int, _ txn: borrowing Transaction
    ) throws -> [AppendResult] {
        try self.checkBeforeWriting(txn, layout)
        var batch = try LocalBatch(store: self, drafts: drafts, schema: schema, enrolling: enrolling, signingKey: signingKey, txn)
        if let expectedVersion { try batch.checkVersion(expectedVersion, of: drafts, txn) }
        for (index, draft) in drafts.enumerated() {
            let line = lines.map { index < $0.count ? $0[index] : index + 1 } ?? draft.line
            try batch.add(draft, index: index, line: line, now: now, txn)
        }
        return try batch.commit(txn)
    }

    /// The last step of every batch of new events, appended or imported: the projection's rows,
    /// the clock, and the projection's checkpoint at the batch's last position.
    static func finish(
        _ batch: inout StoredProjection.Batch, clock: HLC, through position: UInt64, _ txn: borrowing Transaction, _ layout: StoreLayout
    ) throws {
        try batch.flush(txn)
        try txn.put(layout.meta, key: MetaKey.hlc, value: clock.rawValue.bigEndianBytes)
        try txn.put(layout.meta, key: MetaKey.projectionCheckpoint, value: position.bigEndianBytes)
    }

    /// Writes `events[order[k]]` (stored as `records[order[k]]`) and its index entries at
    /// position `first + k`: the log appended at its end, and each index's entries written in
    /// its key order, so that a large batch visits each B-tree page once instead of at random.
    static func index(
        _ events: [Event], records: [[UInt8]], order: [Int], from first: UInt64, _ txn: borrowing Transaction, _ layout: StoreLayout
    ) throws {
        func sortKey(_ id: UUID) -> (UInt64, UInt64) {
            withUnsafeBytes(of: id.uuid) {
                ($0.loadUnaligned(as: UInt64.self).bigEndian, $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).bigEndian)
            }
        }
        var ids: [(key: (UInt64, UInt64), position: UInt64)] = []
        var goals: [(key: (UInt64, UInt64), position: UInt64)] = []
        var origins: [(at: Int, position: UInt64)] = []
        ids.reserveCapacity(order.count)
        goals.reserveCapacity(order.count)
        origins.reserveCapacity(order.count)
        var position = first
        for i in order {
            try withUnsafeBytes(of: position.bigEndian) { pos in
                try records[i].withUnsafeBytes { try txn.put(layout.events, key: pos, value: $0, options: .append) }
            }
            ids.append((sortKey(events[i].id), position))
            if let goal = events[i].payload.goal {
                goals.append((sortKey(goal), position))
            } else {
                try txn.put(layout.deviceEvents, key: StoreLayout.deviceKey(events[i].origin, position), value: [])
            }
            origins.append((i, position))
            position += 1
        }
        func bytes(_ key: (UInt64, UInt64)) -> [UInt8] { key.0.bigEndianBytes + key.1.bigEndianBytes }
        // Where every key of the batch sorts after the table's last (a store's first pull, a
        // new goal), LMDB appends them to the table's last page instead of searching for each.
        ids.sort { $0.key < $1.key }
        if let first = ids.first {
            let options = try txn.orderedPutOptions(layout.eventIds, from: bytes(first.key), .noOverwrite)
            for (key, position) in ids {
                try withUnsafeBytes(of: position.bigEndian) { pos in
                    try withUnsafeBytes(of: (key.0.bigEndian, key.1.bigEndian)) {
                        try txn.put(layout.eventIds, key: $0, value: pos, options: options)
                    }
                }
            }
        }
        goals.sort { $0.key == $1.key ? $0.position < $1.position : $0.key < $1.key }
        if let first = goals.first {
            // A goal's first position is appended as a new key, its later ones as duplicates.
            let appending = try txn.sortsAfterLast(layout.goalEvents, bytes(first.key))
            var previous: (UInt64, UInt64)?
            for (key, position) in goals {
                let options: Transaction.PutOptions = !appending ? [] : previous.map { $0 == key } == true ? .appendDuplicate : .append
                previous = key
                try withUnsafeBytes(of: position.bigEndian) { pos in
                    try withUnsafeBytes(of: (key.0.bigEndian, key.1.bigEndian)) {
                        try txn.put(layout.goalEvents, key: $0, value: pos, options: options)
                    }
                }
            }
        }
        origins.sort { a, b in
            let x = events[a.at]
            let y = events[b.at]
            return x.origin == y.origin ? x.sequence < y.sequence : String.bytesPrecede(x.origin, y.origin)
        }
        if let first = origins.first {
            let firstKey = StoreLayout.originKey(events[first.at].origin, events[first.at].sequence)
            let options = try txn.orderedPutOptions(layout.origins, from: firstKey, .noOverwrite)
            for (i, position) in origins {
                try txn.put(
                    layout.origins, key: StoreLayout.originKey(events[i].origin, events[i].sequence), value: position.bigEndianBytes,
                    options: options)
            }
        }
    }
}
