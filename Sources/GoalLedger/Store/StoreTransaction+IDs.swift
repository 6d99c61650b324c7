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
enum IDIndex {
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
        var found: UInt64?
        try lmdb.scanDuplicates(layout.ids, key: IDIndex.key(words).bigEndianBytes) { value in
            guard let p = IDIndex.position(value), try recordID(at: p) == words else { return true }
            found = p
            return false
        }
        return found
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
    func putIDs(_ ids: inout [(key: IDWords, position: UInt64)]) throws {
        ids.sort { $0.key < $1.key }
        guard let first = ids.first else { return }
        let appending = try lmdb.sortsAfterLast(layout.ids, IDIndex.key(first.key).bigEndianBytes)
        var previous: UInt64?
        for (id, position) in ids {
            let key = IDIndex.key(id)
            // A second id of the same first 8 bytes joins the key's duplicates by a plain put.
            let options: Transaction.PutOptions = appending && key != previous ? .append : []
            try withUnsafeBytes(of: key.bigEndian) { k in
                try IDIndex.withValue(position) { v in try lmdb.put(layout.ids, key: k, value: v, options: options) }
            }
            previous = key
        }
    }

    /// Writes the row of `id` at `position` (for tests that damage the index).
    func putIDRow(_ id: UUID, at position: UInt64) throws {
        try IDIndex.withValue(position) { v in try lmdb.put(layout.ids, key: IDIndex.key(IDWords(id)).bigEndianBytes, value: Array(v)) }
    }

    /// Removes the row of the event `id` names; false when the index has none (for tests that
    /// damage the index).
    @discardableResult
    func deleteIDRow(_ id: UUID) throws -> Bool {
        guard let p = try position(of: id) else { return false }
        return try IDIndex.withValue(p) { v in
            try lmdb.delete(layout.ids, key: IDIndex.key(IDWords(id)).bigEndianBytes, value: Array(v))
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
        try putIDs(&ids)
        try lmdb.dropDatabase(named: "eventIds")
    }
}
