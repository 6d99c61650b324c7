import Foundation
import LMDB

extension Benchmark {
    /// The size of the stand-in rows `rebuildLimit` writes: the average of a ledger's entry rows
    /// (a duplicate of `entries`: day, clock reading, event id, then the rest of the value, 36
    /// bytes on average in the benchmark's workload).
    static let limitRowSize = 36

    /// The storage work of a rebuild that keeps a row per progress entry, and nothing else, in
    /// raw LMDB: the log of the store at `store` read through one cursor; for each record a
    /// 36-byte row made of its bytes (its clock reading's high half for a day, the clock reading,
    /// the event id, 8 bytes more), nothing decoded; under one of `keys` 16-byte keys (the
    /// goals; a record's drawn from its id); the rows grouped by key in the order they came, then
    /// written as the ledger writes its entries, each key's after its last (`MDB_APPEND`, then
    /// `MDB_APPENDDUP`), into a table of duplicates in a new environment at `out`, and committed.
    /// The rows written.
    ///
    /// A rebuild does all of this and more (it decodes every event, folds five read models, hashes
    /// each entry for the digest, writes the other tables): this is how fast it could be if all of
    /// that cost nothing.
    public static func rebuildLimit(store: String, into out: String, keys: Int) throws -> Int {
        precondition(keys > 0)
        let size = limitRowSize
        // Each record's row, in the order they come, and its key.
        var rows: [UInt8] = []
        var keyOfRow: [Int] = []
        let log = try Environment.shared(path: store)
        let events = try log.existingDatabase(named: "events")
        try log.read { txn in
            try txn.scan(events) { _, record in
                // version (1), checksum (4), id (16), clock reading (8, big-endian), then the rest.
                guard record.count >= 29, let base = record.baseAddress else { return true }
                let start = rows.count
                rows.append(contentsOf: repeatElement(0, count: size))
                rows.withUnsafeMutableBytes { all in
                    let row = all.baseAddress! + start
                    row.copyMemory(from: base + 21, byteCount: 4)
                    (row + 4).copyMemory(from: base + 21, byteCount: 8)
                    (row + 12).copyMemory(from: base + 5, byteCount: 16)
                    (row + 28).copyMemory(from: base + 29, byteCount: min(record.count - 29, size - 28))
                }
                let id = record.loadUnaligned(fromByteOffset: 5, as: UInt64.self)
                keyOfRow.append(Int(id % UInt64(keys)))
                return true
            }
        }
        // A counting sort by key that keeps each key's rows in the order they came.
        var first = [Int](repeating: 0, count: keys + 1)
        for k in keyOfRow { first[k + 1] += 1 }
        for k in 0..<keys { first[k + 1] += first[k] }
        var next = first
        var grouped = [UInt8](repeating: 0, count: rows.count)
        grouped.withUnsafeMutableBytes { to in
            rows.withUnsafeBytes { from in
                for (row, k) in keyOfRow.enumerated() {
                    (to.baseAddress! + next[k] * size).copyMemory(from: from.baseAddress! + row * size, byteCount: size)
                    next[k] += 1
                }
            }
        }
        let target = try Environment(path: out)
        try target.write { txn in
            let db = try txn.openDatabase(named: "entries", create: true, duplicates: .anySize)
            try txn.withPutCursor(db) { cursor in
                try grouped.withUnsafeBytes { all in
                    for k in 0..<keys where first[k] < first[k + 1] {
                        let key = [UInt8](repeating: 0, count: 8) + UInt64(k).bigEndianKey
                        var previous: UnsafeRawBufferPointer?
                        try key.withUnsafeBytes { key in
                            for row in first[k]..<first[k + 1] {
                                let value = UnsafeRawBufferPointer(rebasing: all[row * size..<(row + 1) * size])
                                // After the key's last row where it sorts after it, as new entries do.
                                let options: Transaction.PutOptions =
                                    previous == nil ? .append : previous!.lexicographicallyPrecedes(value) ? .appendDuplicate : []
                                try cursor.put(key: key, value: value, options: options)
                                previous = value
                            }
                        }
                    }
                }
            }
        }
        return keyOfRow.count
    }

    /// `rebuildLimit` of `store` in a process of its own (`--child-rebuild-limit`), or in this
    /// one when the benchmark has no executable (its tests): its seconds.
    func rebuildLimitProcess(_ store: String) throws -> Double {
        let out = try fresh("rebuild-limit")
        if let executable { return try measure(executable, ["--child-rebuild-limit", store, out, String(sizes.goals)]).seconds }
        return try Self.seconds { _ = try Self.rebuildLimit(store: store, into: out, keys: sizes.goals) }
    }
}
