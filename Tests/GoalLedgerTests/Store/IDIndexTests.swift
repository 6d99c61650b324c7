import Foundation
import LMDB
import Testing

@testable import GoalLedger

/// The id index keys each event by its id's first 8 bytes, with positions of a few bytes
/// (format 3): every id is found at its own event, ids that share their first 8 bytes included,
/// and a store of format 2 is brought to it when opened.
struct IDIndexTests {
    let now = instant("2026-11-05T12:00:00Z")

    /// An id whose first 8 bytes are `high`'s and last 8 `low`'s.
    func id(_ high: UInt64, _ low: UInt64) -> UUID {
        (high.bigEndianBytes + low.bigEndianBytes).withUnsafeBytes { IDWords($0).uuid }
    }

    /// A device event of `device` at `sequence` with id `id`.
    func event(_ id: UUID, _ device: String, _ sequence: UInt64) -> Event {
        Event(
            id: id, origin: device, sequence: sequence, hlc: HLC(milliseconds: now.milliseconds - 100_000 + Int64(sequence) * 100, counter: 0),
            at: Instant(milliseconds: now.milliseconds - 100_000), schema: 2,
            payload: .notificationAuthorization(NotificationAuthorization(status: sequence.isMultiple(of: 2) ? .authorized : .denied)))
    }

    /// Every event of the log, as (id, position).
    func logged(_ store: LedgerStore) throws -> [(id: UUID, position: UInt64)] {
        try store.readTransaction { txn in
            var out: [(UUID, UInt64)] = []
            var p: UInt64 = 1
            while let e = try txn.event(at: p) {
                out.append((e.id, p))
                p += 1
            }
            return out
        }
    }

    func expectEveryLookup(_ store: LedgerStore) throws {
        let events = try logged(store)
        #expect(!events.isEmpty)
        let found = try store.readTransaction { txn in try events.map { try txn.position(of: $0.id) } }
        #expect(found == events.map(\.position))
    }

    @Test(arguments: [UInt64(1), 2, 255, 256, 65_535, 65_536, 1 << 24, UInt64(UInt32.max), 1 << 40, UInt64.max])
    func aPositionIsStoredInItsFewestBytesAndReadBack(_ position: UInt64) {
        IDIndex.withValue(position) { v in
            #expect(v.count == max(1, 8 - position.leadingZeroBitCount / 8))
            #expect(IDIndex.position(v) == position)
        }
    }

    @Test func aValueOfAnotherFormIsNoPosition() {
        for bad: [UInt8] in [[], [0], [0, 1], [1, 2, 3, 4, 5, 6, 7, 8, 9], Array(repeating: 0, count: 8)] {
            bad.withUnsafeBytes { #expect(IDIndex.position($0) == nil, "\(bad)") }
        }
    }

    /// Ids that share their first 8 bytes are each found at their own event, one that only
    /// shares them is not found, and offering one again is taken for the duplicate it is.
    @Test func idsThatShareTheirFirstHalfAreEachFoundAtTheirOwnEvent() throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        let high: UInt64 = 0x1234_5678_9ABC_4DEF
        let shared = (1...5).map { id(high, 0x8000_0000_0000_0000 | UInt64($0)) }
        _ = try t.store.importEvents(shared.prefix(3).enumerated().map { event($1, "phone", UInt64($0 + 1)) }, from: "test")
        _ = try t.store.importEvents(shared.suffix(2).enumerated().map { event($1, "phone", UInt64($0 + 4)) }, from: "test")
        let rows = try t.store.readTransaction { txn in try txn.duplicateCount(txn.layout.ids, key: high.bigEndianBytes) }
        #expect(rows == 5)
        try expectEveryLookup(t.store)
        let strangers = try t.store.readTransaction { txn in
            try [id(high, 0x8000_0000_0000_0009), id(high + 1, 0x8000_0000_0000_0001)].map { try txn.position(of: $0) }
        }
        #expect(strangers == [nil, nil])
        // The third id again, under another origin's sequence: a duplicate, not a new event.
        let before = try logged(t.store).count
        _ = try? t.store.importEvents([event(shared[2], "tablet", 1)], from: "test")
        #expect(try logged(t.store).count == before)
        let report = try t.store.verify()
        #expect(report.isClean, "\(report.problems)")
    }

    /// An append's ids that all sort after the index's last are appended in one sweep; ids among
    /// them are put in their places; both are found.
    @Test func idsInAndOutOfOrderAreAllFound() throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        _ = try t.store.importEvents((1...4).map { event(id(UInt64($0) << 60, 1), "phone", UInt64($0)) }, from: "test")
        _ = try t.store.importEvents((5...8).map { event(id(UInt64(9 - $0) << 56 | 7, 2), "phone", UInt64($0)) }, from: "test")
        try expectEveryLookup(t.store)
        #expect(try t.store.verify().isClean)
    }

    /// A store of format 2 (the `eventIds` table: the whole id to a full position) is brought to
    /// format 3 when opened: its old table is gone and every id is found.
    @Test func aFormatTwoStoreIsUpgradedWhenOpened() throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        try t.store.append([try draft(#"{"type":"goalCreated","goal":"\#(goalID(1))","title":"Run"}"#)], now: now)
        _ = try t.store.importEvents((1...6).map { event(UUID(), "phone", UInt64($0)) }, from: "test")
        let events = try logged(t.store)
        try t.store.writeTransaction { txn in
            let old = try txn.openDatabase(named: "eventIds", create: true)
            for e in events { try txn.put(old, key: e.id.bytes, value: e.position.bigEndianBytes) }
            try txn.clear(txn.layout.ids)
            try txn.put(txn.layout.meta, key: MetaKey.format, value: UInt64(2).bigEndianBytes)
        }
        let reopened = try LedgerStore.open(at: t.store.path)
        #expect(try reopened.readTransaction { try $0.u64($0.layout.meta, MetaKey.format) } == LedgerStore.format)
        #expect(try reopened.readTransaction { try $0.count($0.layout.ids) } == events.count)
        #expect(try reopened.writeTransaction { try $0.dropDatabase(named: "eventIds") } == false)
        try expectEveryLookup(reopened)
        #expect(try reopened.verify().isClean)
    }

    /// An id index row re-pointed at another event, or dropped, is named by verify (the full
    /// check and the streaming one agree that the store is not clean).
    @Test func aRowThatPointsElsewhereIsNamed() throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        _ = try t.store.importEvents((1...6).map { event(UUID(), "phone", UInt64($0)) }, from: "test")
        let events = try logged(t.store)
        let last = events[events.count - 1]
        try t.store.writeTransaction { txn in
            #expect(try txn.deleteIDRow(last.id))
            try txn.putIDRow(last.id, at: 1)
        }
        #expect(try t.store.readTransaction { txn in try txn.position(of: last.id) } == nil)
        let problems = try t.store.verify().problems
        #expect(problems.contains("ids: id \(last.id.uuidString) does not point to position \(last.position)"), "\(problems)")
    }
}
