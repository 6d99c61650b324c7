import Foundation
import LMDB
import Testing

@testable import GoalLedger

/// The device index keys the events about no goal by their position alone (format 5): the trust
/// fold and verify read it so, and a store of format 4 (keyed by device and position) is brought
/// to it when opened.
struct DeviceIndexTests {
    let now = instant("2026-11-05T12:00:00Z")

    /// The positions of the events about no goal, read from the log.
    func logged(_ store: LedgerStore) throws -> [UInt64] {
        try store.readTransaction { txn in
            var out: [UInt64] = []
            var p: UInt64 = 1
            while let e = try txn.event(at: p) {
                if e.payload.goal == nil { out.append(p) }
                p += 1
            }
            return out
        }
    }

    func rows(_ store: LedgerStore) throws -> [[UInt8]] {
        try store.readTransaction { txn in
            var out: [[UInt8]] = []
            try txn.scan(txn.layout.deviceEvents) { k, _ in
                out.append(Array(k))
                return true
            }
            return out
        }
    }

    func seeded() throws -> TemporaryStore {
        let t = try TemporaryStore()
        try t.store.append(
            try drafts([
                #"{"type":"goalCreated","goal":"\#(goalID(1))","title":"Run"}"#,
                #"{"type":"deviceConfigured","timeZone":"Europe/Berlin","firstWeekday":2,"locale":"de_DE"}"#,
                #"{"type":"notificationAuthorization","status":"authorized"}"#,
                #"{"type":"progressRecorded","goal":"\#(goalID(1))","completed":true}"#,
                #"{"type":"notificationAuthorization","status":"denied"}"#,
            ]), now: now)
        return t
    }

    @Test func eventsAboutNoGoalAreIndexedByTheirPositionInOrder() throws {
        let t = try seeded()
        let positions = try logged(t.store)
        #expect(positions.count >= 3)
        #expect(try rows(t.store) == positions.map(\.bigEndianBytes))
        #expect(try t.store.verify().isClean)
    }

    /// A store of format 4 (the device's name, a zero byte and the position) is brought to
    /// format 5 when opened: its rows are the positions, trust reads the same, verify is clean.
    @Test func aFormatFourStoreIsUpgradedWhenOpened() throws {
        let t = try seeded()
        let positions = try logged(t.store)
        let enrolled = try t.store.read { try $0.enrolledDevices() }
        try t.store.writeTransaction { txn in
            try txn.clear(txn.layout.deviceEvents)
            for p in positions { try txn.put(txn.layout.deviceEvents, key: Array("phone".utf8) + [0] + p.bigEndianBytes, value: []) }
            try txn.put(txn.layout.meta, key: MetaKey.format, value: UInt64(4).bigEndianBytes)
        }
        #expect(try rows(t.store).allSatisfy { $0.count == 14 })
        let reopened = try LedgerStore.open(at: t.store.path)
        #expect(try reopened.readTransaction { try $0.u64($0.layout.meta, MetaKey.format) } == LedgerStore.format)
        #expect(try rows(reopened) == positions.map(\.bigEndianBytes))
        #expect(try reopened.read { try $0.enrolledDevices() } == enrolled)
        let report = try reopened.verify()
        #expect(report.isClean, "\(report.problems)")
    }
}
