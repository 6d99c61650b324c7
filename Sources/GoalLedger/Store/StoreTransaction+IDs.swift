import Foundation
import LMDB

/// The form of the id index's rows (the `ids` table, store format 3): under the first 8 bytes of
/// an event's id, the event's position, big-endian without its leading zero bytes (1 to 8
/// bytes), one duplicate per event whose id starts with those bytes.
///
/// The key is half the id and the value a third of a fixed-width position, so a row takes about
/// 19 bytes of a page where the id and a full position took 32 (format 2 and before: the
/// `eventIds` table). Ids arrive in no order, so the index is filled by inserts at random
/// places (its pages are about two-thirds full): its rows' size is what decides its pages.
/// Two ids may share their first 8 bytes (by chance, rarely; by design, when a peer makes
/// them so): a lookup reads the id of each candidate's event in the log, so it never answers
/// for another event, and any number of such ids are held.
///
/// The index is two tables of rows of this form (store format 6). A batch's rows go to
/// `recentIds`, a table of at most about `recentRows` rows; once it holds that many, they are
/// moved into `ids` in one pass in key order, and `recentIds` is emptied. Random ids (a caller's
/// own, or another device's) then make a commit rewrite the pages of the small table, not pages
/// all over the large one: each page of `ids` is rewritten once per `recentRows` new events
/// instead of about once per commit. A batch of `recentRows` rows or more goes to `ids` at once.
/// A lookup reads both tables.
enum IDIndex {
    /// The rows `recentIds` holds before they are moved into `ids`.
    static let recentRows = 65_536

    /// The row's key for an id: its first 8 bytes, as a number (stored big-endian).
    static func key(_ id: IDWords) -> UInt64 { id.high }

    /// Runs `body` with the stored form of `position` (on the stack).
    static func withValue<R>(_ position: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let skip = min(7, position.leadingZeroBitCount / 8)
        return try withUnsafeBytes(of: position.bigEndian) { try body(UnsafeRawBufferPointer(rebasing: $0[skip...])) }
    }

    /// The position a stored value holds; nil unless it is the form `withValue` writes (1 to
    /// 8 bytes, no leading zero byte, a position from 1).
    static func position(_ value: UnsafeRawBufferPointer) -> UInt64? {
        guard (1...8).contains(value.count), value[0] != 0 else { return nil }
        var p: UInt64 = 0
        for b in value { p = p << 8 | UInt64(b) }
        return p
    }
}

// The id index: each event's position by its id.
extension StoreTransaction {
    /// The position of the event with id `id`, through the id index; nil when the store does not
    /// hold it. Each position stored under the id's first 8 bytes is checked against the id its
    /// record holds.
    func position(of id: UUID) throws -> UInt64? {
        let words = IDWords(id)
        let key = IDIndex.key(words).bigEndianBytes
        var found: UInt64?
        for table in [layout.recentIDs, layout.ids] {
            try lmdb.scanDuplicates(table, key: key) { value in
                found = try position(in: value, naming: words)
                return found == nil
            }
            if found != nil { return found }
        }
        return nil
    }

    /// Those of `ids` the store holds, with their positions as `position(of:)` finds them, and
    /// those that `ids` names more than once. The ids are looked up in key order through one cursor of each
    /// table, each lookup starting where the last one left the cursor, instead of a search from
    /// each table's root per id: a batch's ids, checked for duplicates before its events are
    /// written. `held`: rows of this transaction not yet in the index, asked as well. `order`:
    /// the indices of `ids` in key order, which the batch's id rows can take again. `filter`:
    /// a `KeyFilter` holding every key of the index (`StoredIDFilter`); an id whose key it does
    /// not hold is not sought in the tables.
    func storedIDs(
        among ids: [UUID], held: HeldIDRows? = nil, filter: KeyFilter? = nil
    ) throws -> (stored: [UUID: UInt64], repeated: Set<UUID>, order: [Int]) {
        var found: [UUID: UInt64] = [:]
        var repeated = Set<UUID>()
        guard !ids.isEmpty else { return (found, repeated, []) }
        let order = ids.sortedIndices(byIDWords: IDWords.init)
        let wanted = order.map { (key: IDWords(ids[$0]), id: ids[$0]) }
        for i in wanted.indices.dropFirst() where wanted[i].key == wanted[i - 1].key { repeated.insert(wanted[i].id) }
        if let held, !held.isEmpty { held.positions(ofSorted: wanted, into: &found) }
        // The held rows are not in the index: the filter only decides which ids the tables are
        // asked for, once for both.
        let sought = filter.map { f in wanted.filter { f.mayHold(IDIndex.key($0.key)) } } ?? wanted
        guard !sought.isEmpty else { return (found, repeated, order) }
        for table in [layout.recentIDs, layout.ids] where try count(table) > 0 {
            try lmdb.withLookupCursor(table) { cursor in
                for (words, id) in sought where found.isEmpty || found[id] == nil {
                    try withUnsafeBytes(of: IDIndex.key(words).bigEndian) { k in
                        try cursor.values(at: k) { value in
                            guard let p = try position(in: value, naming: words) else { return true }
                            found[id] = p
                            return false
                        }
                    }
                }
            }
        }
        return (found, repeated, order)
    }

    /// How many rows the id index holds, in both its tables.
    func idRowCount() throws -> Int { try count(layout.recentIDs) + count(layout.ids) }

    /// Calls `body` with each key of the id index, in both its tables, once however many rows
    /// share it. A key of another width (damage, which `verify` names) matches no id's lookup:
    /// a longer one is given as the 8 bytes it starts with, a shorter one not at all.
    func forEachIDKey(_ body: (UInt64) -> Void) throws {
        for table in [layout.recentIDs, layout.ids] {
            try lmdb.scanKeys(table) { key in
                if key.count >= 8 { body(UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))) }
                return true
            }
        }
    }

    /// The position a row of the id index holds, when the event there has the id `words` (two
    /// ids may share the row's key); nil otherwise.
    private func position(in value: UnsafeRawBufferPointer, naming words: IDWords) throws -> UInt64? {
        guard let p = IDIndex.position(value), try recordID(at: p) == words else { return nil }
        return p
    }

    /// The id of the event stored at `position`, read from its record without decoding it; nil
    /// when there is none there, or its record is too short to hold one.
    private func recordID(at position: UInt64) throws -> IDWords? {
        try lmdb.withValue(layout.events, key: position.bigEndianBytes) { record in
            // The codec version (1), the checksum (4), then the id (16): see `EventCodec`.
            record.count >= 21 ? IDWords(UnsafeRawBufferPointer(rebasing: record[5..<21])) : nil
        } ?? nil
    }

    /// The id index's rows of a batch, in key order. Where every key of the batch sorts after
    /// the table's last (a store's first pull, or ids made by the library, which follow its
    /// clock), LMDB appends them to the table's last page instead of searching for each.
    ///
    /// The rows go to `recentIds`, or to `ids` for a batch of `recentLimit` rows or more; a
    /// `recentIds` that reaches `recentLimit` rows is moved into `ids` (`mergeRecentIDs`).
    func putIDs(_ ids: inout [(key: IDWords, position: UInt64)], recentLimit: Int = IDIndex.recentRows) throws {
        ids.sortStably(byIDWords: \.key)
        guard !ids.isEmpty else { return }
        let table = ids.count >= recentLimit ? layout.ids : layout.recentIDs
        try putSortedRows(ids.count, into: table) { i, body in
            try withUnsafeBytes(of: IDIndex.key(ids[i].key).bigEndian) { k in try IDIndex.withValue(ids[i].position) { v in try body(k, v) } }
        }
        if try count(layout.recentIDs) >= recentLimit { try mergeRecentIDs() }
    }

    /// The rows of the id index, in both its tables.
    func idIndexRowCount() throws -> Int {
        try count(layout.ids) + count(layout.recentIDs)
    }

    /// Moves every row of `recentIds` into `ids`, as stored (a damaged row stays one for
    /// `verify` to name), in key order, then empties `recentIds`.
    func mergeRecentIDs() throws {
        // The rows' bytes one after another, each row's key and value where `rows` says.
        let count = try count(layout.recentIDs)
        var bytes: [UInt8] = []
        var rows: [(key: Range<Int>, value: Range<Int>)] = []
        // A key of 8 bytes and a position of up to 8 a row.
        bytes.reserveCapacity(count * 16)
        rows.reserveCapacity(count)
        try lmdb.scan(layout.recentIDs) { k, v in
            let start = bytes.count
            bytes.append(contentsOf: k)
            bytes.append(contentsOf: v)
            rows.append((start..<start + k.count, start + k.count..<bytes.count))
            return true
        }
        try bytes.withUnsafeBytes { all in
            try putSortedRows(rows.count, into: layout.ids) { i, body in
                try body(UnsafeRawBufferPointer(rebasing: all[rows[i].key]), UnsafeRawBufferPointer(rebasing: all[rows[i].value]))
            }
        }
        try lmdb.clear(layout.recentIDs)
    }

    /// Puts `count` rows, in key order, into a table of the id index: `row(i, put)` hands row
    /// `i`'s key and value to `put`. Where every key sorts after the table's last (a store's
    /// first pull, or ids made by the library, which follow its clock), LMDB appends them to the
    /// table's last page instead of searching for each.
    private func putSortedRows(
        _ count: Int, into table: Database,
        _ row: (Int, (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws {
        guard count > 0 else { return }
        var appending = false
        try row(0) { k, _ in appending = try lmdb.sortsAfterLast(table, Array(k)) }
        var previous: [UInt8] = []
        // Through one cursor: in key order, each put starts from where the last one left off.
        try lmdb.withPutCursor(table) { cursor in
            for i in 0..<count {
                try row(i) { k, v in
                    // A second id of the same first 8 bytes joins the key's duplicates by a plain put.
                    let options: Transaction.PutOptions = appending && !k.elementsEqual(previous) ? .append : []
                    try cursor.put(key: k, value: v, options: options)
                    previous.removeAll(keepingCapacity: true)
                    previous.append(contentsOf: k)
                }
            }
        }
    }

    /// Writes the row of `id` at `position` (for tests that damage the index).
    func putIDRow(_ id: UUID, at position: UInt64) throws {
        try IDIndex.withValue(position) { v in try lmdb.put(layout.ids, key: IDIndex.key(IDWords(id)).bigEndianBytes, value: Array(v)) }
    }

    /// Removes the row of the event `id` names, from whichever table holds it; false when the
    /// index has none (for tests that damage the index).
    @discardableResult
    func deleteIDRow(_ id: UUID) throws -> Bool {
        guard let p = try position(of: id) else { return false }
        return try IDIndex.withValue(p) { v in
            let key = IDIndex.key(IDWords(id)).bigEndianBytes
            return try lmdb.delete(layout.recentIDs, key: key, value: Array(v)) || lmdb.delete(layout.ids, key: key, value: Array(v))
        }
    }

    /// Fills the id index from the log (the format-3 upgrade: the rows of the `eventIds` table
    /// of format 2 and before take a new form), then drops the old table. A record too short to
    /// hold an id is left out (damage, which `verify` names).
    func rebuildIDIndex() throws {
        var ids: [(key: IDWords, position: UInt64)] = []
        try lmdb.scan(layout.events) { k, record in
            guard k.count == 8, record.count >= 21 else { return true }
            ids.append((IDWords(UnsafeRawBufferPointer(rebasing: record[5..<21])), UInt64(bigEndianBytes: k)))
            return true
        }
        try lmdb.clear(layout.ids)
        try lmdb.clear(layout.recentIDs)
        try putIDs(&ids)
        try lmdb.dropDatabase(named: "eventIds")
    }
}
