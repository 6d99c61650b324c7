import Foundation
import LMDB

/// A transaction on the store's tables, read or write: the log's reads, trust's rows and the
/// stored projection's reads are its methods, so that code holding one asks it, rather than
/// passing a transaction and the tables around.
///
/// ``LedgerSnapshot`` and ``LedgerWriter`` each own one; the store's own upkeep (opening,
/// rebuild, migration, trust) opens one with ``LedgerStore/readTransaction(_:)`` or
/// ``LedgerStore/writeTransaction(_:_:)``. Like the LMDB transaction it owns, it cannot be
/// copied or kept past the closure it is handed to.
struct StoreTransaction: ~Copyable {
    let lmdb: Transaction
    let layout: StoreLayout

    init(_ txn: consuming Transaction, layout: StoreLayout) {
        self.lmdb = txn
        self.layout = layout
    }

    /// LMDB's number of the transaction: a write transaction's is one more than the last
    /// committed one's, a read transaction's that of the commit it reads.
    var number: Int { lmdb.snapshotID }

    // MARK: The log

    /// The number of events (the last position; 0 when the log is empty).
    func lastPosition() throws -> UInt64{
        guard let last = try lmdb.last(layout.events) else { return 0 }
        return UInt64(bigEndianBytes: last.key)
    }

    /// Calls `body` with each of `reads` and the record stored at its position (nil: none is),
    /// until it returns false. One cursor reads them all, each read starting from the record
    /// the last one left it on: positions in ascending order read each page of the log once
    /// for the events it holds, where as many `get`s would each search from the root. A
    /// position up to `stepLimit` after the last one read is reached by stepping through the
    /// records between (the log's positions run without gaps), a farther one by a lookup.
    func records<C: Collection>(
        _ reads: C, at position: (C.Element) -> UInt64, _ body: (C.Element, UnsafeRawBufferPointer?) throws -> Bool
    ) throws {
        try lmdb.withLookupCursor(layout.events) { cursor in
            var last: UInt64?
            for read in reads {
                let p = position(read)
                let steps = last.map { p > $0 && p - $0 <= Self.stepLimit ? Int(p - $0) : 0 } ?? 0
                let record = try withUnsafeBytes(of: p.bigEndian) { try cursor.value(at: $0, steps: steps) }
                last = record == nil ? nil : p
                guard try body(read, record) else { return }
            }
        }
    }

    /// How far `records` steps from one record to the next rather than looking it up: a step
    /// reads one record's node on a page mostly at hand, a lookup searches from a branch page
    /// (measured on a log of 1,000,000 events read at one position in eight: 270 ns a lookup,
    /// 174 ns a read when stepping up to 32).
    static let stepLimit: UInt64 = 32

    /// The store's clock as the next event starts from it. A store written before the gate
    /// bounded clocks may hold an event whose reading lies past ``HLC/latest`` and a clock moved
    /// to it; such a reading is ignored: the clock is the latest supported reading the log holds
    /// (found once, then written back by the next batch), so the store keeps appending.
    func clock() throws -> HLC {
        let stored = HLC(rawValue: try u64(layout.meta, MetaKey.hlc) ?? 0)
        if stored.isSupported { return stored }
        var clock = HLC(rawValue: 0)
        try lmdb.scan(layout.events, from: UInt64(1).bigEndianBytes) { key, value in
            let e = try LedgerStore.decodeRecord(value, position: UInt64(bigEndianBytes: key))
            if e.hlc.isSupported, e.hlc > clock { clock = e.hlc }
            return true
        }
        return clock
    }

    /// The event stored at `position`; nil past the log's end.
    func event(at position: UInt64) throws -> Event?{
        var decoded: Event?
        _ = try lmdb.withValue(layout.events, key: position.bigEndianBytes) { bytes in
            decoded = try LedgerStore.decodeRecord(bytes, position: position)
        }
        return decoded
    }

    /// `origin`'s event of origin sequence `sequence`; nil when the store does not hold it.
    func event(origin: String, sequence: UInt64) throws -> Event? {
        guard let p = try position(origin: origin, sequence: sequence) else { return nil }
        return try event(at: p)
    }

    /// The event with id `id`, through the id index; nil when the store does not hold it.
    func event(id: UUID) throws -> Event? {
        guard let position = try position(of: id) else { return nil }
        return try event(at: position)
    }

    /// The events about `goal` that the fold counts, in position order: not set aside, and not
    /// of a revoked device after its cutoff (a store may hold such an event, its own or one it
    /// received before the revocation; no view, audit or conflict reads it).
    func events(ofGoal goal: UUID) throws -> [(position: UInt64, event: Event)] {
        let revoked = try revocations()
        return try positions(ofGoal: goal).compactMap { p in
            guard let e = try event(at: p) else {
                throw LedgerError.damaged("the goal index names position \(p), which holds no event", position: p)
            }
            return e.isCounted(revokedAfter: revoked) ? (p, e) : nil
        }
    }

    /// The last origin sequence of `device`'s events the log holds (0: none), the one the
    /// device's next event follows (`checkedOwnHead`).
    func ownHead(_ device: String) throws -> UInt64 {
        try LedgerStore.checkedOwnHead(try u64(layout.originHeads, Array(device.utf8)) ?? 0, device: device)
    }

    /// For each origin device, the last origin sequence the log holds.
    func originHeads() throws -> [String: UInt64]{
        var heads: [String: UInt64] = [:]
        try lmdb.scan(layout.originHeads) { key, value in
            heads[String(decoding: key, as: UTF8.self)] = UInt64(bigEndianBytes: value)
            return true
        }
        return heads
    }

    /// A big-endian u64 row of `db`.
    func u64(_ db: Database, _ key: [UInt8]) throws -> UInt64? {
        try lmdb.withValue(db, key: key) { UInt64(bigEndianBytes: $0) }
    }
}

extension StoreTransaction {
    /// The event schema recorded in the store (1 when the record is missing, as in the oldest stores).
    func schema() throws -> Int { Int(clamping: try u64(layout.meta, MetaKey.schema) ?? 1) }

    /// How schema-1 history writes count: the old rule until migration.
    func historyRule() throws -> HistoryRule { HistoryRule(schema: try schema()) }

    /// Migration identifiers recorded in the store, in the order of ``Migrator/migrations``
    /// (unknown ones last, by name).
    func appliedMigrations() throws -> [String] {
        var found: [String] = []
        let prefix = Array("migration:".utf8)
        try lmdb.scan(layout.meta, from: prefix) { k, _ in
            guard k.starts(with: prefix) else { return false }
            found.append(String(decoding: k.dropFirst(prefix.count), as: UTF8.self))
            return true
        }
        let order = Migrator.migrations.map(\.identifier)
        return found.sorted { (order.firstIndex(of: $0) ?? Int.max, $0) < (order.firstIndex(of: $1) ?? Int.max, $1) }
    }
}
