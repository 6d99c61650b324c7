import Foundation
import LMDB
import Testing

@testable import GoalLedger

/// The id index keys each event by its id's first 8 bytes, with positions of a few bytes
/// (format 3), its newest rows in a small table moved into the large one in bulk (format 6):
/// every id is found at its own event, ids that share their first 8 bytes included (in either
/// table), and a store of format 2 is brought to it when opened.
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
        // Looked up together in key order, with ids the store does not hold, some of them
        // sharing their first 8 bytes with a stored one: exactly the stored ones.
        let held = Set(events.map(\.id))
        let nearby = events.map { e in
            let w = IDWords(e.id)
            return id(w.high, w.low &+ 1)
        }
        var generator = SeededRandom(seed: UInt64(events.count))
        let absent = nearby.filter { !held.contains($0) } + (0..<100).map { _ in generator.uuid() }
        let asked = (Array(held) + absent).shuffled(using: &generator)
        let positions = Dictionary(uniqueKeysWithValues: events.map { ($0.id, $0.position) })
        let all = try store.readTransaction { try $0.storedIDs(among: asked) }
        #expect(all.stored == positions && all.repeated.isEmpty)
        #expect(try store.readTransaction { try $0.storedIDs(among: absent) }.stored.isEmpty)
        // An id asked twice is repeated, stored or not; ids that only share their first 8 bytes
        // with another are not.
        let twice = [asked[0], absent[0]]
        let again = try store.readTransaction { try $0.storedIDs(among: (asked + twice).shuffled(using: &generator)) }
        #expect(again.stored == positions && again.repeated == Set(twice))
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
        let rows = try t.store.readTransaction { txn in
            try txn.duplicateCount(txn.layout.ids, key: high.bigEndianBytes) + txn.duplicateCount(txn.layout.recentIDs, key: high.bigEndianBytes)
        }
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
            try txn.clear(txn.layout.recentIDs)
            try txn.put(txn.layout.meta, key: MetaKey.format, value: UInt64(2).bigEndianBytes)
        }
        let reopened = try LedgerStore.open(at: t.store.path)
        #expect(try reopened.readTransaction { try $0.u64($0.layout.meta, MetaKey.format) } == LedgerStore.format)
        #expect(try reopened.readTransaction { try $0.count($0.layout.ids) + $0.count($0.layout.recentIDs) } == events.count)
        #expect(try reopened.writeTransaction { try $0.dropDatabase(named: "eventIds") } == false)
        try expectEveryLookup(reopened)
        #expect(try reopened.verify().isClean)
    }

    /// An id index row re-pointed at another event, in either table, is named by verify (the
    /// full check and the streaming one agree that the store is not clean); moved in bulk, a
    /// row of the small table stays as it was stored, and is still named.
    @Test(arguments: ["ids", "recentIds"])
    func aRowThatPointsElsewhereIsNamed(_ table: String) throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        _ = try t.store.importEvents((1...6).map { event(UUID(), "phone", UInt64($0)) }, from: "test")
        let events = try logged(t.store)
        let last = events[events.count - 1]
        try t.store.writeTransaction { txn in
            #expect(try txn.deleteIDRow(last.id))
            let db = table == "ids" ? txn.layout.ids : txn.layout.recentIDs
            try IDIndex.withValue(1) { v in try txn.lmdb.put(db, key: IDIndex.key(IDWords(last.id)).bigEndianBytes, value: Array(v)) }
        }
        #expect(try t.store.readTransaction { txn in try txn.position(of: last.id) } == nil)
        let expected = "ids: id \(last.id.uuidString) does not point to position \(last.position)"
        #expect(try t.store.verify().problems.contains(expected))
        try t.store.writeTransaction { txn in try txn.mergeRecentIDs() }
        #expect(try rowCounts(t.store) == (6, 0))
        #expect(try t.store.verify().problems.contains(expected))
    }

    /// The rows of the id index's two tables, as (ids, recentIds).
    func rowCounts(_ store: LedgerStore) throws -> (Int, Int) {
        try store.readTransaction { txn in (try txn.count(txn.layout.ids), try txn.count(txn.layout.recentIDs)) }
    }

    /// A batch's rows go to the small table; moved into the large one, every id is still found,
    /// and ids that share their first 8 bytes with one in the other table are each found at
    /// their own event; verify is clean at each step.
    @Test func recentRowsMovedInBulkAreStillFoundBesideNewOnes() throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        let high: UInt64 = 0x0FED_CBA9_8765_4321
        var sequence: UInt64 = 0
        func importing(_ ids: [UUID]) throws {
            _ = try t.store.importEvents(
                ids.map { id in
                    sequence += 1
                    return event(id, "phone", sequence)
                }, from: "test")
        }
        try importing([id(high, 1), UUID(), UUID()])
        #expect(try rowCounts(t.store) == (0, 3))
        try t.store.writeTransaction { txn in try txn.mergeRecentIDs() }
        #expect(try rowCounts(t.store) == (3, 0))
        try expectEveryLookup(t.store)
        // A second id under the same first 8 bytes, now in the small table while the first is in the large one.
        try importing([id(high, 2), UUID()])
        #expect(try rowCounts(t.store) == (3, 2))
        try expectEveryLookup(t.store)
        #expect(try t.store.readTransaction { txn in try txn.position(of: id(high, 3)) } == nil)
        #expect(try t.store.verify().isClean)
        #expect(try t.store.reading { try $0.streamingVerification() } != nil)
        // Offered again, an id of either table is a duplicate.
        let before = try logged(t.store).count
        _ = try? t.store.importEvents([event(id(high, 1), "tablet", 1)], from: "test")
        _ = try? t.store.importEvents([event(id(high, 2), "tablet", 1)], from: "test")
        #expect(try logged(t.store).count == before)
    }

    /// The small table is moved into the large one once it reaches its limit, and a batch as
    /// large as the limit goes to the large table at once.
    @Test func theSmallTableIsMovedAtItsLimitAndALargeBatchSkipsIt() throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        let layout = t.store.layout
        let counts = try t.store.writeTransaction { txn -> [[Int]] in
            func rows(_ range: ClosedRange<UInt64>) -> [(key: IDWords, position: UInt64)] {
                range.map { (IDWords(UUID()), $0) }
            }
            var out: [[Int]] = []
            for range: ClosedRange<UInt64> in [1...2, 3...4, 5...9, 10...10] {
                var batch = rows(range)
                try txn.putIDs(&batch, recentLimit: 4)
                out.append([try txn.count(layout.ids), try txn.count(layout.recentIDs)])
            }
            return out
        }
        // 2 recent; 4 reach the limit and move; 5 at once to the large table; 1 recent.
        #expect(counts == [[0, 2], [4, 0], [9, 0], [9, 1]])
    }

    /// A store of format 5 (no `recentIds`) is brought to format 6 when opened: the table is
    /// made, every id is found, and new rows go to it.
    @Test func aFormatFiveStoreGainsTheSmallTableWhenOpened() throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        _ = try t.store.importEvents((1...5).map { event(UUID(), "phone", UInt64($0)) }, from: "test")
        try t.store.writeTransaction { txn in
            try txn.mergeRecentIDs()
            #expect(try txn.dropDatabase(named: "recentIds"))
            try txn.put(txn.layout.meta, key: MetaKey.format, value: UInt64(5).bigEndianBytes)
        }
        let reopened = try LedgerStore.open(at: t.store.path)
        #expect(try reopened.readTransaction { try $0.u64($0.layout.meta, MetaKey.format) } == 6)
        #expect(try rowCounts(reopened) == (5, 0))
        try expectEveryLookup(reopened)
        _ = try reopened.importEvents([event(UUID(), "phone", 6)], from: "test")
        #expect(try rowCounts(reopened) == (5, 1))
        try expectEveryLookup(reopened)
        #expect(try reopened.verify().isClean)
    }
}
