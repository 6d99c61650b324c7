import Foundation
import LMDB

// The log's upkeep when a batch of new events is written, appended or imported.
extension StoreTransaction {
    /// The last step of every batch of new events, appended or imported: the projection's rows,
    /// the clock, and the projection's checkpoint at the batch's last position.
    func finish(_ batch: inout StoredProjection.Batch, clock: HLC, through position: UInt64) throws {
        try batch.flush(self)
        try putClock(clock)
        try put(layout.meta, key: MetaKey.projectionCheckpoint, value: position.bigEndianBytes)
    }

    /// Keeps the store's clock reading (`MetaKey.hlc`), which the next batch goes on from.
    func putClock(_ clock: HLC) throws {
        try put(layout.meta, key: MetaKey.hlc, value: clock.rawValue.bigEndianBytes)
    }

    /// Writes `events[order[k]]` (stored as `records[order[k]]`) and its index entries at
    /// position `first + k`: the log appended at its end, and each index's entries written in
    /// its key order, so that a large batch visits each B-tree page once instead of at random.
    /// The id index's rows go to `recentIds`, or to `ids` for a large batch (see `putIDs`).
    func index(_ events: [Event], records: [[UInt8]], order: [Int], from first: UInt64) throws {
        try putRecords(records, order: order, from: first)
        var ids = try indexHoldingIDs(events, order: order, from: first)
        try putIDs(&ids)
    }

    /// Writes `records[order[k]]` at position `first + k`, the log appended at its end.
    func putRecords(_ records: [[UInt8]], order: [Int], from first: UInt64) throws {
        var position = first
        // Through one cursor, which stays at the table's end between puts.
        try lmdb.withPutCursor(layout.events) { log in
            for i in order {
                try withUnsafeBytes(of: position.bigEndian) { pos in
                    try records[i].withUnsafeBytes { try log.put(key: pos, value: $0, options: .append) }
                }
                position += 1
            }
        }
    }

    /// What `index` writes but the log's records (`putRecords`) and the id index's rows, which
    /// it returns for the caller to put (`putIDs`) before the transaction commits: a long
    /// append holds them (`HeldIDRows`). It reads no record: a batch whose records are still
    /// being encoded writes its indexes meanwhile.
    func indexHoldingIDs(_ events: [Event], order: [Int], from first: UInt64) throws -> [(key: IDWords, position: UInt64)] {
        var ids: [(key: IDWords, position: UInt64)] = []
        var goals: [(key: IDWords, position: UInt64)] = []
        var origins: [(at: Int, position: UInt64)] = []
        ids.reserveCapacity(order.count)
        goals.reserveCapacity(order.count)
        origins.reserveCapacity(order.count)
        var position = first
        // The device index's keys are positions: a batch's sort after every stored one.
        let deviceOptions: Transaction.PutOptions = try sortsAfterLast(layout.deviceEvents, first.bigEndianBytes) ? .append : []
        try lmdb.withPutCursor(layout.deviceEvents) { devices in
            for i in order {
                ids.append((IDWords(events[i].id), position))
                if let goal = events[i].payload.goal {
                    goals.append((IDWords(goal), position))
                } else {
                    try withUnsafeBytes(of: position.bigEndian) { pos in
                        try devices.put(key: pos, value: UnsafeRawBufferPointer(start: nil, count: 0), options: deviceOptions)
                    }
                }
                origins.append((i, position))
                position += 1
            }
        }
        try putGoalPositions(&goals)
        try putOrigins(&origins, of: events)
        return ids
    }
}
