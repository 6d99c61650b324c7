import Foundation
import LMDB

/// The `entries` table of a projection generation (`pN.goalEntries`): under each goal's id,
/// one duplicate per entry row, its day (4 bytes, big-endian) and event id (16), then the row's
/// value. Duplicates sort by their bytes, so a goal's rows come by day, then event, as they did
/// when the day and event were part of a row's key (projection version 14 and before, `pN.entries`:
/// a row per entry, the goal's 16 bytes repeated in each).
///
/// A goal's new entries are nearly always its latest, so a batch appends them after the goal's
/// last duplicate (`MDB_APPENDDUP`), where LMDB fills a page before it starts the next: a table
/// keyed by goal, day and event instead split the goal's last page in halves each time it
/// filled, and kept its pages half full.
///
/// Everything else reads and writes a row as the 36-byte key (goal, day, event) and the value
/// it stands for, through these methods.
extension StoreTransaction {
    /// Visits the entry rows of the goal `from` starts with (its first 16 bytes), from the day
    /// (and event) that follow in `from` on, in key order, each as its 36-byte key and its
    /// value, until `body` returns false. A stored duplicate too short for a day and an event
    /// comes as a key shorter than 36 bytes (callers take that for damage).
    func scanEntries(
        _ db: Database, from: [UInt8], _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let goal = Array(from.prefix(16))
        var key = goal
        key.reserveCapacity(36)
        try lmdb.scanDuplicates(db, key: goal, from: from.count > 16 ? Array(from[16...]) : nil) { dup in
            key.removeSubrange(16...)
            key.append(contentsOf: dup.prefix(20))
            let value = dup.count > 20 ? UnsafeRawBufferPointer(rebasing: dup[20...]) : UnsafeRawBufferPointer(start: nil, count: 0)
            return try key.withUnsafeBytes { try body($0, value) }
        }
    }

    /// Visits every entry row of the table, in key order, as ``scanEntries(_:from:_:)`` gives
    /// them.
    func scanAllEntries(_ db: Database, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        var key: [UInt8] = []
        key.reserveCapacity(36)
        try lmdb.scan(db) { goal, dup in
            key.removeAll(keepingCapacity: true)
            key.append(contentsOf: goal)
            key.append(contentsOf: dup.prefix(20))
            let value = dup.count > 20 ? UnsafeRawBufferPointer(rebasing: dup[20...]) : UnsafeRawBufferPointer(start: nil, count: 0)
            return try key.withUnsafeBytes { try body($0, value) }
        }
    }

    /// Whether the table holds a row under the 36-byte `key`.
    func hasEntry(_ db: Database, key: [UInt8]) throws -> Bool {
        var found = false
        try lmdb.scanDuplicates(db, key: Array(key.prefix(16)), from: Array(key[16...])) { dup in
            found = dup.count >= 20 && dup.prefix(20).elementsEqual(key[16..<36])
            return false
        }
        return found
    }

    /// Writes the row `value` under the 36-byte `key`, in place of one the table holds under it.
    func putEntry(_ db: Database, key: [UInt8], value: some Collection<UInt8>) throws {
        try deleteEntry(db, key: key)
        try lmdb.put(db, key: Array(key.prefix(16)), value: Array(key[16...]) + value)
    }

    /// Removes the row under the 36-byte `key`; false when there is none.
    @discardableResult
    func deleteEntry(_ db: Database, key: [UInt8]) throws -> Bool {
        var stored: [UInt8]?
        try lmdb.scanDuplicates(db, key: Array(key.prefix(16)), from: Array(key[16...])) { dup in
            if dup.count >= 20, dup.prefix(20).elementsEqual(key[16..<36]) { stored = Array(dup) }
            return false
        }
        guard let stored else { return false }
        return try lmdb.delete(db, key: Array(key.prefix(16)), value: stored)
    }

    /// Writes a batch's entry rows (`rows`, in key order, each its key and its value's place in
    /// `values`): each goal's after its last (appended: the page fills before the next starts)
    /// when they sort after it, as new entries do; among them otherwise (a late entry of an
    /// earlier day).
    func putEntries(
        _ db: Database, _ rows: [(key: PendingTable.EntryKey, offset: UInt32, count: UInt32)], values: UnsafeRawBufferPointer
    ) throws {
        var dup: [UInt8] = []
        var i = 0
        while i < rows.count {
            let goal = rows[i].key.goal
            let goalBytes = goal.bytes
            var j = i
            while j < rows.count, rows[j].key.goal == goal { j += 1 }
            // Whether the group's first row sorts after the goal's last stored one (or the
            // goal has none: then after the table's last key, for a new goal at the end).
            let first = Array(rows[i].key.bytes[16...])
            let last = try lmdb.withLastDuplicate(db, key: goalBytes) { Array($0.prefix(20)) }
            var options: Transaction.PutOptions
            if let last {
                options = last.lexicographicallyPrecedes(first) ? .appendDuplicate : []
            } else {
                options = try lmdb.sortsAfterLast(db, goalBytes) ? .append : []
            }
            for k in i..<j {
                let (key, offset, count) = rows[k]
                dup.removeAll(keepingCapacity: true)
                withUnsafeBytes(of: key.day.bigEndian) { dup.append(contentsOf: $0) }
                key.event.write(into: &dup)
                dup.append(contentsOf: UnsafeRawBufferPointer(rebasing: values[Int(offset)..<Int(offset) + Int(count)]))
                try lmdb.put(db, key: goalBytes, value: dup, options: options)
                // After the first row the goal's key exists: the rest follow it as duplicates.
                if options == .append { options = .appendDuplicate }
            }
            i = j
        }
    }
}
