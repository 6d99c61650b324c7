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
        var ids: [(key: IDWords, position: UInt64)] = []
        var goals: [(key: IDWords, position: UInt64)] = []
        var origins: [(at: Int, position: UInt64)] = []
        ids.reserveCapacity(order.count)
        goals.reserveCapacity(order.count)
        origins.reserveCapacity(order.count)
        var position = first
        for i in order {
            try withUnsafeBytes(of: position.bigEndian) { pos in
                try records[i].withUnsafeBytes { try put(layout.events, key: pos, value: $0, options: .append) }
            }
            ids.append((IDWords(events[i].id), position))
            if let goal = events[i].payload.goal {
                goals.append((IDWords(goal), position))
            } else {
                try put(layout.deviceEvents, key: StoreLayout.deviceKey(events[i].origin, position), value: [])
            }
            origins.append((i, position))
            position += 1
        }
        try putIDs(&ids)
        try putGoalPositions(&goals)
        try putOrigins(&origins, of: events)
    }

    /// The id index's entries of a batch, in key order. Where every key of the batch sorts
    /// after the table's last (a store's first pull), LMDB appends them to the table's last
    /// page instead of searching for each.
    private func putIDs(_ ids: inout [(key: IDWords, position: UInt64)]) throws {
        ids.sort { $0.key < $1.key }
        guard let first = ids.first else { return }
        let options = try orderedPutOptions(layout.eventIds, from: first.key.bytes, .noOverwrite)
        for (key, position) in ids {
            try withUnsafeBytes(of: position.bigEndian) { pos in
                try key.withBytes { try put(layout.eventIds, key: $0, value: pos, options: options) }
            }
        }
    }

    /// The goal index's entries of a batch, in key order. A batch's positions are past every
    /// stored one, so a goal's new positions go after its last (`MDB_APPENDDUP`: LMDB fills the
    /// goal's last page before it starts another, where a put among them splits it in halves);
    /// a new goal's first position is appended as a new key where it sorts after the table's
    /// last.
    private func putGoalPositions(_ goals: inout [(key: IDWords, position: UInt64)]) throws {
        goals.sort { $0.key == $1.key ? $0.position < $1.position : $0.key < $1.key }
        var previous: IDWords?
        var options: Transaction.PutOptions = []
        for (key, position) in goals {
            if key != previous {
                previous = key
                let bytes = key.bytes
                if try duplicateCount(layout.goalEvents, key: bytes) > 0 {
                    options = .appendDuplicate
                } else {
                    options = try sortsAfterLast(layout.goalEvents, bytes) ? .append : []
                }
            }
            try withUnsafeBytes(of: position.bigEndian) { pos in
                try key.withBytes { try put(layout.goalEvents, key: $0, value: pos, options: options) }
            }
            // Once the goal's key is there, its further positions follow the one just put.
            options = .appendDuplicate
        }
    }
}
