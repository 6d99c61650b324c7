import Foundation
import LMDB

/// The `entries` table of a projection generation (`pN.goalEntries`): under each goal's id,
/// one duplicate per entry row, made of the row's day (4 bytes, big-endian), the clock reading
/// its value starts with (8), its event id (16), then the rest of its value. Duplicates sort by
/// their bytes, so a goal's rows come by day, then clock, then event (projection version 14 and
/// before kept them in `pN.entries`, a row per entry keyed by goal, day and event).
///
/// A goal's new entries are nearly always its latest, and their clock readings later than any
/// it holds, so a batch appends them after the goal's last duplicate (`MDB_APPENDDUP`), where
/// LMDB fills a page before it starts the next, whatever the events' ids: a table keyed by
/// goal, day and event instead put them among the day's others in id order, and split the
/// goal's pages in halves.
///
/// Everything else reads and writes a row as the 36-byte key (goal, day, event) and the value
/// it stands for, through these methods.
extension StoreTransaction {
    /// The size of a duplicate's head: day, clock reading, event (`EntryKey.writeHead`).
    private static let head = PendingTable.EntryKey.headSize

    /// Visits the entry rows of the goal `from` starts with (its first 16 bytes), from the day
    /// that follows in `from` on (when it does), in stored order, each as its 36-byte key and
    /// its value, until `body` returns false. A stored duplicate too short for its head comes
    /// as a shorter key (callers take that for damage).
    func scanEntries(
        _ db: Database, from: [UInt8], _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let goal = Array(from.prefix(16))
        var row = Row(goal: goal)
        try lmdb.scanDuplicates(db, key: goal, from: from.count > 16 ? Array(from[16..<min(from.count, 20)]) : nil) { dup in
            try row.visit(dup, body)
        }
    }

    /// Calls `body` with each recorded entry the table holds for `goal`, in stored order, read
    /// in place from its duplicate (a history write's row is passed over); throws at a row out
    /// of form.
    func forEachRecordedEntry(_ db: Database, goal: UUID, _ body: (ProgressEntry) throws -> Void) throws {
        try lmdb.scanDuplicates(db, key: goal.bytes) { dup in
            if let entry = try PendingTable.entry(duplicate: dup) { try body(entry) }
            return true
        }
    }

    /// Visits every entry row of the table, in stored order, as ``scanEntries(_:from:_:)``
    /// gives them.
    func scanAllEntries(_ db: Database, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        var row = Row(goal: [])
        try lmdb.scan(db) { goal, dup in
            row.goal.removeAll(keepingCapacity: true)
            row.goal.append(contentsOf: goal)
            return try row.visit(dup, body)
        }
    }

    /// A row made from a stored duplicate, in buffers kept from one row to the next.
    private struct Row {
        var goal: [UInt8]
        var key: [UInt8] = []
        var value: [UInt8] = []

        init(goal: [UInt8]) {
            self.goal = goal
            key.reserveCapacity(36)
            value.reserveCapacity(64)
        }

        mutating func visit(
            _ dup: UnsafeRawBufferPointer, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
        ) throws -> Bool {
            key.removeAll(keepingCapacity: true)
            value.removeAll(keepingCapacity: true)
            key.append(contentsOf: goal)
            if dup.count >= StoreTransaction.head {
                key.append(contentsOf: dup[0..<4])
                key.append(contentsOf: dup[12..<28])
                value.append(contentsOf: dup[4..<12])
                value.append(contentsOf: dup[28...])
            } else {
                key.append(contentsOf: dup)
            }
            return try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try body(k, v) } }
        }
    }

    /// Whether the table holds the row of `key`.
    func hasEntry(_ db: Database, _ key: PendingTable.EntryKey) throws -> Bool {
        var w = ByteWriter(capacity: Self.head)
        key.writeHead(into: &w)
        let head = w.bytes
        var found = false
        try lmdb.scanDuplicates(db, key: key.goal.bytes, from: head) { dup in
            found = dup.count >= Self.head && dup.prefix(Self.head).elementsEqual(head)
            return false
        }
        return found
    }

    /// Writes the row `value` under the 36-byte `key`, in place of one the table holds under it
    /// (a value shorter than a clock reading is stored as it is: damage, for tests).
    func putEntry(_ db: Database, key: [UInt8], value: [UInt8]) throws {
        try deleteEntry(db, key: key)
        let duplicate = Array(key[16..<20]) + value.prefix(8) + key[20..<36] + value.dropFirst(8)
        try lmdb.put(db, key: Array(key.prefix(16)), value: duplicate)
    }

    /// Removes the row under the 36-byte `key`; false when there is none.
    @discardableResult
    func deleteEntry(_ db: Database, key: [UInt8]) throws -> Bool {
        var stored: [UInt8]?
        try lmdb.scanDuplicates(db, key: Array(key.prefix(16)), from: Array(key[16..<20])) { dup in
            guard dup.count >= 4, dup.prefix(4).elementsEqual(key[16..<20]) else { return false }
            if dup.count >= Self.head, dup[12..<28].elementsEqual(key[20..<36]) { stored = Array(dup) }
            return stored == nil
        }
        guard let stored else { return false }
        return try lmdb.delete(db, key: Array(key.prefix(16)), value: stored)
    }

    /// Writes a batch's entry rows, `goals` in id order, each with its `rows` (in order), each
    /// row where its duplicate (head, then the rest of its value) lies in `duplicates`. Each
    /// goal's go after its last (appended: the page fills before the next starts) when they
    /// sort after it, as new entries do; among them otherwise (an entry whose clock reading is
    /// earlier than the goal's latest, or of an earlier day).
    func putEntries(
        _ db: Database, _ goals: [(goal: IDWords, rows: Range<Int>)], rows: [(offset: Int, count: Int)], duplicates: UnsafeRawBufferPointer
    ) throws {
        try lmdb.withPutCursor(db) { cursor in
            for (goal, range) in goals where !range.isEmpty {
                let key = goal.bytes
                let first = rows[range.lowerBound]
                // After the goal's last stored row (or the goal has none: then after the table's
                // last key, for a new goal at the end).
                var options: Transaction.PutOptions
                if let last = try lmdb.withLastDuplicate(db, key: key, { Array($0.prefix(Self.head)) }) {
                    let head = UnsafeRawBufferPointer(rebasing: duplicates[first.offset..<first.offset + min(first.count, Self.head)])
                    options = last.lexicographicallyPrecedes(head) ? .appendDuplicate : []
                } else {
                    options = try lmdb.sortsAfterLast(db, key) ? .append : []
                }
                try key.withUnsafeBytes { k in
                    for row in rows[range] {
                        try cursor.put(key: k, value: UnsafeRawBufferPointer(rebasing: duplicates[row.offset..<row.offset + row.count]), options: options)
                        // After the first row the goal's key exists: the rest follow it as duplicates.
                        if options == .append { options = .appendDuplicate }
                    }
                }
            }
        }
    }
}
