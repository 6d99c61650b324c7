import Foundation
import LMDB
import Testing

@testable import GoalLedger

/// The origin index keeps runs (format 2): a row per stretch of an origin's consecutive sequences
/// at consecutive positions, found by the run that starts at or before a sequence.
struct OriginIndexTests {
    let now = instant("2026-11-05T12:00:00Z")

    /// An event of `device` at `sequence`, its clock at `tick` (by default its sequence): an
    /// import writes a batch in clock order.
    func event(_ device: String, _ sequence: UInt64, tick: Int64? = nil) -> Event {
        let status: AuthorizationStatus = sequence.isMultiple(of: 2) ? .authorized : .denied
        return Event(
            id: UUID(), origin: device, sequence: sequence,
            hlc: HLC(milliseconds: now.milliseconds - 100_000 + (tick ?? Int64(sequence)) * 100, counter: 0),
            at: Instant(milliseconds: now.milliseconds - 100_000), schema: 2,
            payload: .notificationAuthorization(NotificationAuthorization(status: status)))
    }

    /// Every event of the log, as (origin, sequence, position).
    func logged(_ store: LedgerStore) throws -> [(origin: String, sequence: UInt64, position: UInt64)] {
        try store.readTransaction { txn in
            var out: [(String, UInt64, UInt64)] = []
            var p: UInt64 = 1
            while let e = try txn.event(at: p) {
                out.append((e.origin, e.sequence, p))
                p += 1
            }
            return out
        }
    }

    /// Each logged event is found at its position by its origin and sequence; the sequences
    /// around each origin's are not found.
    func expectEveryLookup(_ store: LedgerStore) throws {
        let events = try logged(store)
        try store.readTransaction { txn in
            for e in events { #expect(try txn.position(origin: e.origin, sequence: e.sequence) == e.position, "\(e)") }
            for (origin, head) in try txn.originHeads() {
                #expect(try txn.position(origin: origin, sequence: 0) == nil)
                #expect(try txn.position(origin: origin, sequence: head + 1) == nil)
            }
            #expect(try txn.position(origin: "nobody", sequence: 1) == nil)
        }
    }

    func rows(_ store: LedgerStore) throws -> Int { try store.readTransaction { try $0.count(store.layout.origins) } }

    @Test func aDevicesOwnAppendsAreOneRunHoweverManyBatches() throws {
        let t = try TemporaryStore()
        for k in 0..<4 {
            try t.store.append(
                try drafts((0..<5).map { i in #"{"type":"goalCreated","goal":"\#(goalID(k * 5 + i))","title":"G\#(k)-\#(i)"}"# }), now: now)
        }
        // Every event of the log is the phone's: one origin, one run.
        let events = try logged(t.store)
        #expect(events.count >= 20 && events.allSatisfy { $0.origin == "phone" })
        #expect(try t.store.originHeads()["phone"] == UInt64(events.count))
        #expect(try rows(t.store) == 1)
        try expectEveryLookup(t.store)
        #expect(try t.store.verify().isClean)
    }

    @Test func importsBetweenAppendsMakeOneRunPerStretchAndEveryLookupHolds() throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        try t.store.append([try draft(#"{"type":"goalCreated","goal":"\#(goalID(1))","title":"Run"}"#)], now: now)
        // Two origins interleaved in one batch: each event a run of its own.
        _ = try t.store.importEvents([event("phone", 1), event("tablet", 1), event("phone", 2), event("tablet", 2)], from: "test")
        // The tablet's next event lands right after its last: it joins that run; the phone's
        // start a new one, which its later events in the batch join.
        _ = try t.store.importEvents(
            [event("tablet", 3), event("phone", 3, tick: 10), event("phone", 4, tick: 11), event("phone", 5, tick: 12)], from: "test")
        try t.store.append([try draft(#"{"type":"goalCreated","goal":"\#(goalID(2))","title":"Read"}"#)], now: now)
        let events = try logged(t.store)
        let phone = events.filter { $0.origin == "phone" }.map(\.position)
        let laptop = events.filter { $0.origin == "laptop" }
        let tablet = events.filter { $0.origin == "tablet" }.map(\.position)
        #expect(phone.count == 5 && tablet.count == 3 && tablet[2] == tablet[1] + 1 && phone[2] == tablet[2] + 1)
        // The laptop's first events, phone 1, tablet 1, phone 2, tablets 2–3, phones 3–5, and
        // the laptop's last append (after an import, a run of its own).
        #expect(laptop.count >= 2 && laptop.last!.position == events.count)
        #expect(try rows(t.store) == 7)
        try expectEveryLookup(t.store)
        // An origin's records from a sequence inside a run, across runs, in order.
        let walked = try t.store.readTransaction { txn in
            var out: [(UInt64, UInt64)] = []
            try txn.scanPositions(of: "phone", from: 2) { s, p in
                out.append((s, p))
                return true
            }
            return out
        }
        #expect(walked.map(\.0) == [2, 3, 4, 5])
        #expect(walked.map(\.1) == Array(phone[1...]))
        let report = try t.store.verify()
        #expect(report.isClean, "\(report.problems)")
    }

    /// A store of format 1 (a row of the origin index per event) is brought to runs when it is
    /// opened, and is then what a store written in runs is.
    @Test func aFormatOneStoreIsUpgradedWhenOpened() throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        try t.store.append([try draft(#"{"type":"goalCreated","goal":"\#(goalID(1))","title":"Run"}"#)], now: now)
        _ = try t.store.importEvents((1...6).map { event($0.isMultiple(of: 2) ? "phone" : "tablet", UInt64(($0 + 1) / 2)) }, from: "test")
        _ = try t.store.importEvents((4...9).map { event("phone", UInt64($0)) }, from: "test")
        let runs = try rows(t.store)
        let events = try logged(t.store)
        try t.store.writeTransaction { txn in
            try txn.clear(t.store.layout.origins)
            for e in events {
                try txn.put(t.store.layout.origins, key: StoreLayout.originKey(e.origin, e.sequence), value: e.position.bigEndianBytes)
            }
            try txn.put(t.store.layout.meta, key: MetaKey.format, value: UInt64(1).bigEndianBytes)
        }
        #expect(try rows(t.store) == events.count)
        let reopened = try LedgerStore.open(at: t.store.path)
        #expect(try rows(reopened) == runs)
        #expect(try reopened.readTransaction { try $0.u64($0.layout.meta, MetaKey.format) } == LedgerStore.format)
        try expectEveryLookup(reopened)
        #expect(try reopened.verify().isClean)
    }

    @Test func aFormatOneRowThatIsNoPositionRefusesTheUpgradeAndChangesNothing() throws {
        let t = try TemporaryStore()
        try t.store.append([try draft(#"{"type":"goalCreated","goal":"\#(goalID(1))","title":"Run"}"#)], now: now)
        try t.store.writeTransaction { txn in
            try txn.clear(t.store.layout.origins)
            try txn.put(t.store.layout.origins, key: StoreLayout.originKey("phone", 1), value: [1, 2, 3])
            try txn.put(t.store.layout.meta, key: MetaKey.format, value: UInt64(1).bigEndianBytes)
        }
        #expect {
            _ = try LedgerStore.open(at: t.store.path)
        } throws: { e in
            let error = e as? LedgerError
            return error?.message.contains("the origin index holds a row that is not an origin's sequence and a position") == true
        }
        #expect(try t.store.readTransaction { try $0.u64($0.layout.meta, MetaKey.format) } == 1)
        #expect(try rows(t.store) == 1)
    }

    /// A run read from a damaged file whose numbers would overflow is no run: lookups find
    /// nothing there and verify names the index, and nothing traps.
    @Test func aRunWhoseNumbersOverflowIsDamageNotATrap() throws {
        let t = try TemporaryStore()
        try t.store.append([try draft(#"{"type":"goalCreated","goal":"\#(goalID(1))","title":"Run"}"#)], now: now)
        for (position, count) in [(UInt64.max, UInt64(2)), (1, 0), (1, UInt64.max)] {
            try t.store.writeTransaction { txn in
                try txn.put(
                    t.store.layout.origins, key: StoreLayout.originKey("phone", 1),
                    value: position.bigEndianBytes + count.bigEndianBytes)
            }
            #expect(try t.store.readTransaction { try $0.position(origin: "phone", sequence: 2) } == nil)
            let problems = try t.store.verify().problems
            #expect(problems.contains { $0.hasPrefix("origins: phone/1 does not point to position") }, "\(problems)")
        }
    }
}
