import Foundation
import LMDB

// The log's upkeep when a batch of new events is written, appended or imported.
extension StoreTransaction {
    /// The last step of every batch of new events, appended or imported: the projection's rows,
    /// the clock, and the projection's checkpoint at the batch's last position.
    func finish(_ batch: inout StoredProjection.Batch, clock: HLC, through position: UInt64) throws {
        try batch.flush(self)
        try put(layout.meta, key: MetaKey.hlc, value: clock.rawValue.bigEndianBytes)
        try put(layout.meta, key: MetaKey.projectionCheckpoint, value: position.bigEndianBytes)
    }

    /// Writes `events[order[k]]` (stored as `records[order[k]]`) and its index entries at
    /// position `first + k`: the log appended at its end, and each index's entries written in
    /// its key order, so that a large batch visits each B-tree page once instead of at random.
    func index(_ events: [Event], records: [[UInt8]], order: [Int], from first: UInt64) throws {
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
                try records[i].withUnsafeBytes { try put(layout.events, key: pos, value: $0, options: .append) }
            }
            ids.append((sortKey(events[i].id), position))
            if let goal = events[i].payload.goal {
                goals.append((sortKey(goal), position))
            } else {
                try put(layout.deviceEvents, key: StoreLayout.deviceKey(events[i].origin, position), value: [])
            }
            origins.append((i, position))
            position += 1
        }
        func bytes(_ key: (UInt64, UInt64)) -> [UInt8] { key.0.bigEndianBytes + key.1.bigEndianBytes }
        // Where every key of the batch sorts after the table's last (a store's first pull, a
        // new goal), LMDB appends them to the table's last page instead of searching for each.
        ids.sort { $0.key < $1.key }
        if let first = ids.first {
            let options = try orderedPutOptions(layout.eventIds, from: bytes(first.key), .noOverwrite)
            for (key, position) in ids {
                try withUnsafeBytes(of: position.bigEndian) { pos in
                    try withUnsafeBytes(of: (key.0.bigEndian, key.1.bigEndian)) {
                        try put(layout.eventIds, key: $0, value: pos, options: options)
                    }
                }
            }
        }
        goals.sort { $0.key == $1.key ? $0.position < $1.position : $0.key < $1.key }
        if let first = goals.first {
            // A goal's first position is appended as a new key, its later ones as duplicates.
            let appending = try sortsAfterLast(layout.goalEvents, bytes(first.key))
            var previous: (UInt64, UInt64)?
            for (key, position) in goals {
                let options: Transaction.PutOptions = !appending ? [] : previous.map { $0 == key } == true ? .appendDuplicate : .append
                previous = key
                try withUnsafeBytes(of: position.bigEndian) { pos in
                    try withUnsafeBytes(of: (key.0.bigEndian, key.1.bigEndian)) {
                        try put(layout.goalEvents, key: $0, value: pos, options: options)
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
            let options = try orderedPutOptions(layout.origins, from: firstKey, .noOverwrite)
            for (i, position) in origins {
                try put(
                    layout.origins, key: StoreLayout.originKey(events[i].origin, events[i].sequence), value: position.bigEndianBytes,
                    options: options)
            }
        }
    }
}
