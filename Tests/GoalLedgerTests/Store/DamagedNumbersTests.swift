import Foundation
import Testing

@testable import GoalLedger

/// A store's rows are outside data: a damaged (or forged) number in one of them gives an error
/// that names the damage, or a value the reads go on with, never a trap. Each test puts one
/// row at a value the ledger never writes, then runs what reads it.
struct DamagedNumbersTests {
    let now = instant("2026-11-05T12:00:00Z")
    let goal = UUID()

    /// A store with one measurable daily goal with a reminder, two days of progress, and the
    /// device's settings.
    func store(_ t: TemporaryStore) throws {
        try t.store.append(
            try drafts([
                #"{"type":"deviceConfigured","timeZone":"Europe/Berlin","firstWeekday":2,"locale":"de_DE"}"#,
                #"{"type":"goalCreated","goal":"\#(goal)","title":"Run","cadence":"daily","progress":{"kind":"measurable","target":1},"reminder":{"hour":7,"minute":30}}"#,
                #"{"type":"progressRecorded","goal":"\#(goal)","amount":1,"at":"2026-11-03T09:00:00Z"}"#,
                #"{"type":"progressRecorded","goal":"\#(goal)","amount":1,"at":"2026-11-04T09:00:00Z"}"#,
            ]), now: now)
    }

    /// Every read an app makes of the goal, and one more append to it.
    func readAndAppend(_ s: LedgerStore) throws {
        _ = try s.read { try $0.goals(now: now, includingEntries: false) }
        _ = try s.read { try $0.goals(now: now) }
        _ = try s.goal(goal, now: now)
        _ = try s.read { try $0.pendingPlan(device: s.device, now: now) }
        try s.append(try drafts([#"{"type":"progressRecorded","goal":"\#(goal)","amount":1,"at":"2026-11-05T09:00:00Z"}"#]), now: now)
    }

    @Test func aProjectionGenerationWithItsTopBitSetStillNamesAGeneration() throws {
        let t = try TemporaryStore()
        try store(t)
        let active = try t.store.readTransaction { try $0.u64(t.store.layout.meta, MetaKey.projectionActive) ?? 0 }
        try t.store.writeTransaction("damaging") { txn in
            try txn.put(t.store.layout.meta, key: MetaKey.projectionActive, value: (active | 1 << 63).bigEndianBytes)
        }
        let reopened = try LedgerStore.open(at: t.store.path)
        try readAndAppend(reopened)
        #expect(try reopened.verify().isClean)
    }

    @Test func aSchemaPastIntMaxIsRefusedAsNewer() throws {
        let t = try TemporaryStore()
        try store(t)
        try t.store.writeTransaction("damaging") { txn in try txn.put(t.store.layout.meta, key: MetaKey.schema, value: UInt64.max.bigEndianBytes) }
        do {
            _ = try LedgerStore.open(at: t.store.path)
            Issue.record("opened a store of schema \(UInt64.max)")
        } catch {
            #expect(error.message.contains("newer than this ledger"), "\(error.message)")
        }
    }

    /// A run row whose first period is zeroed: the run spans nearly all of `Int32`.
    @Test func aRunRowSpanningAllPeriodsStopsNeitherAReadNorAnAppend() throws {
        let t = try TemporaryStore()
        try store(t)
        try t.store.writeTransaction("damaging") { txn in
            let tables = try txn.activeProjection()
            var runs: [[UInt8]] = []
            try txn.scan(tables.runs, from: goal.bytes) { k, v in
                guard k.prefix(16).elementsEqual(goal.bytes) else { return false }
                // The goal's own key holds its basis; a run's key adds its last period.
                if k.count == 20 { runs.append(Array(k)) }
                return true
            }
            #expect(!runs.isEmpty)
            for key in runs { try txn.put(tables.runs, key: key, value: [0, 0, 0, 0]) }
        }
        try readAndAppend(t.store)
        #expect(try t.store.verify().findings.contains { $0.message.hasPrefix("projection runs: ") })
        try t.store.rebuild()
        #expect(try t.store.verify().isClean)
    }

    /// A pending row whose parts disagree (a repeating row without its trigger, a recurring one
    /// with a fire time) is a damaged row: the plan's read names it.
    @Test func aPendingRowWhosePartsDisagreeIsNamedDamaged() throws {
        for damage in [
            { (r: inout PendingRow) in r.trigger = nil }, { (r: inout PendingRow) in r.fireAt = Instant(milliseconds: 0) },
        ] {
            let t = try TemporaryStore()
            try store(t)
            try t.store.writeTransaction("damaging") { txn in
                let tables = try txn.activeProjection()
                var rows: [([UInt8], PendingRow)] = []
                try txn.scan(tables.pending) { k, v in
                    rows.append((Array(k), try PendingTable.decodeRow(v)))
                    return true
                }
                #expect(!rows.isEmpty)
                for (key, row) in rows {
                    var row = row
                    damage(&row)
                    try txn.put(tables.pending, key: key, value: PendingTable.encode(row))
                }
            }
            #expect(throws: LedgerError.self) { try t.store.read { try $0.pendingPlan(device: t.store.device, now: now) } }
            try t.store.rebuild()
            #expect(try t.store.read { try $0.pendingPlan(device: t.store.device, now: now) }.1.requests.count == 1)
        }
    }

    /// An entry row on a day no event can be on (the day bytes' top bit cleared: before year 1).
    @Test func anEntryOnADayOutOfRangeIsNamedDamaged() throws {
        let t = try TemporaryStore()
        try store(t)
        try t.store.writeTransaction("damaging") { txn in
            let tables = try txn.activeProjection()
            let e = ProgressEntry(
                id: UUID(), amount: try Amount("1"), completed: nil, occurredAt: instant("2026-11-04T10:00:00Z"),
                day: Day(daysSinceEpoch: -2_000_000_000), device: "phone", hlc: HLC(rawValue: 1 << 40))
            var w = ByteWriter()
            PendingTable.writeEntryDuplicate(goal: goal, e, into: &w)
            try txn.put(tables.entries, key: goal.bytes, value: w.bytes)
        }
        #expect(throws: LedgerError.self) { try t.store.goal(goal, now: now) }
        #expect(!(try t.store.verify().isClean))
        try t.store.rebuild()
        #expect(try t.store.goal(goal, now: now)?.goal.entries.count == 2)
    }

    /// A device row whose first weekday is 0 or 8 (no weekday) is a damaged row.
    @Test(arguments: [0, 8, 255])
    func aDeviceRowWithoutAWeekdayIsNamedDamaged(_ weekday: Int) throws {
        let t = try TemporaryStore()
        try store(t)
        try t.store.writeTransaction("damaging") { txn in
            let tables = try txn.activeProjection()
            let key = Array(t.store.device.utf8)
            let stored = try #require(try txn.get(tables.devices, key: key))
            var device = try stored.withUnsafeBytes { try ProjectionCodec.decodeDevice($0, name: t.store.device) }
            let configured = try #require(device.configuration)
            var settings = configured.value
            settings.firstWeekday = weekday
            device.configuration = Register(settings, configured.stamp)
            try txn.put(tables.devices, key: key, value: ProjectionCodec.encodeDevice(device))
        }
        #expect(throws: LedgerError.self) { try t.store.read { try $0.goals(now: now) } }
        try t.store.rebuild()
        #expect(try t.store.read { try $0.goals(now: now) }.count == 1)
    }

    /// The device's own origin head at the top of `UInt64`: an append is refused as damage, and
    /// `verify` (which counts the unsigned events up to every head) reports, not traps.
    @Test(arguments: [UInt64.max, 1 << 63, 1 << 62])
    func anOwnHeadPastAnyChainIsRefusedAsDamage(_ head: UInt64) throws {
        let t = try TemporaryStore()
        try store(t)
        try t.store.writeTransaction("damaging") { txn in
            try txn.put(t.store.layout.originHeads, key: Array(t.store.device.utf8), value: head.bigEndianBytes)
        }
        do {
            try t.store.append(try drafts([#"{"type":"progressRecorded","goal":"\#(goal)","amount":1}"#]), now: now)
            Issue.record("appended after a head of \(head)")
        } catch let error as LedgerError {
            #expect(error.message.contains("past any chain"), "\(error.message)")
        }
        #expect(!(try t.store.verify().isClean))
    }

    /// `verify` names the first sequences an origin lacks by a walk of what it holds: a damaged
    /// sequence near the top of `UInt64` is named as quickly as a small one.
    @Test func theFirstMissingSequencesAreFoundByAWalk() {
        #expect(LedgerStore.firstMissing([1, 2, 4, 7], upTo: 5) == [3, 5, 6])
        #expect(LedgerStore.firstMissing([], upTo: 5) == [])
        #expect(LedgerStore.firstMissing([1, 2, 3], upTo: 5) == [])
        #expect(LedgerStore.firstMissing([UInt64.max], upTo: 5) == [1, 2, 3, 4, 5])
        #expect(LedgerStore.firstMissing([1, 1, 3, UInt64.max, UInt64.max], upTo: 3) == [2, 4, 5])
        #expect(LedgerStore.firstMissing([0, 2], upTo: 5) == [1])
        #expect(LedgerStore.firstMissing([9], upTo: 2) == [1, 2])
    }
}
