import Foundation
import LMDB
import Testing

@testable import GoalLedger

struct MigrationTests {
    let goal = UUID(uuidString: "3D2C1B0A-9F8E-4D7C-8B6A-5F4E3D2C1B0A")!
    let now = instant("2026-10-05T12:00:00Z")
    func e(_ n: Int) -> UUID { UUID(uuidString: String(format: "E0000000-0000-4000-8000-%012d", n))! }
    func w(_ n: Int) -> UUID { UUID(uuidString: String(format: "F0000000-0000-4000-8000-%012d", n))! }

    func legacyStore() throws -> (TemporaryDirectory, LedgerStore) {
        let dir = TemporaryDirectory()
        let store = try LedgerStore.create(at: dir.path + "/s", device: "phone", schema: 1)
        try store.append(
            [
                EventDraft(
                    at: instant("2026-10-01T08:00:00Z"),
                    payload: .goalCreated(
                        GoalCreated(
                            goal: goal, title: "Read", cadence: .daily, progressKind: .measurable, target: try! Amount("20"))))
            ], now: now)
        return (dir, store)
    }

    func history(_ id: UUID, _ entries: [Int], base: UUID?, at: String) -> EventDraft {
        EventDraft(
            id: id, at: instant(at),
            payload: .progressHistoryReplaced(
                ProgressHistoryReplaced(
                    goal: goal,
                    entries: entries.map {
                        HistoryEntry(id: e($0), amount: try! Amount(whole: Int64($0)), occurredAt: instant("2026-10-0\($0 % 9 + 1)T20:00:00Z"))
                    },
                    base: base)))
    }

    func liveIDs(_ store: LedgerStore) throws -> Set<UUID> { Set(try store.goalState(goal).entries.map(\.id)) }

    @Test func withABaseAnIntendedRemovalStaysRemoved() throws {
        let (dir, store) = try legacyStore()
        defer { withExtendedLifetime(dir) {} }
        try store.append(
            [
                history(w(1), [1, 2, 3], base: nil, at: "2026-10-03T21:00:00Z"),
                history(w(2), [1, 3], base: w(1), at: "2026-10-04T21:00:00Z"),
            ], now: now)
        #expect(try liveIDs(store) == [e(1), e(3)])
        let logBefore = try store.readTransaction { txn in try txn.count(store.layout.events) }
        let events = try store.snapshot()["events"]
        let report = try store.migrate()
        #expect(report.applied == ["2-record-level-progress", "3-signed-events"] && report.schema == 2 && report.rebuilt)
        #expect(try liveIDs(store) == [e(1), e(3)])
        // The log is byte for byte what it was, followed by the device's enrolment (it signs
        // from there on).
        #expect(try store.snapshot()["events"].map { Array($0.prefix(events?.count ?? 0)) } == events)
        #expect(try store.readTransaction { txn in try txn.count(store.layout.events) } == logBefore + 1)
        #expect(try store.enrolledDevices().map(\.device) == ["phone"])
        #expect(try store.verify().isClean)
    }

    @Test func withoutABaseNothingIsLost() throws {
        let (dir, store) = try legacyStore()
        defer { withExtendedLifetime(dir) {} }
        try store.append(
            [
                history(w(1), [1, 2, 3], base: nil, at: "2026-10-03T21:00:00Z"),
                history(w(2), [1], base: nil, at: "2026-10-04T21:00:00Z"),
            ], now: now)
        #expect(try liveIDs(store) == [e(1)])
        _ = try store.migrate()
        #expect(try liveIDs(store) == [e(1), e(2), e(3)])
        let sources = GoalAudit.entrySources(try store.events(ofGoal: goal).map(\.event), rule: store.historyRule)
        #expect(Set(sources.filter(\.recovered).map(\.entry.id)) == [e(2), e(3)])
        #expect(sources.first { $0.entry.id == e(2) }?.event == w(1))
        let steps = try store.audit(goal: goal)
        #expect(steps.last?.historyAdded == [e(1)] && steps.last?.historyRemoved == [])
        #expect(Set(steps[1].recovered) == [e(2), e(3)])
    }

    @Test func afterMigrationTheCurrentCatalogAppliesAndEntriesCanBeRemoved() throws {
        let (dir, store) = try legacyStore()
        defer { withExtendedLifetime(dir) {} }
        try store.append([history(w(1), [1, 2], base: nil, at: "2026-10-03T21:00:00Z")], now: now)
        let refusedBefore = ledgerError {
            try store.append([EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("1"))))], now: now)
        }
        #expect(refusedBefore?.message.contains("migrate the store") == true, "\(refusedBefore?.message ?? "")")
        _ = try store.migrate()
        let refused = ledgerError { try store.append([history(w(2), [1], base: w(1), at: "2026-10-04T21:00:00Z")], now: now) }
        #expect(refused?.code == .invalidInput)
        #expect(refused?.message.contains("progressRecorded") == true, "\(refused?.message ?? "")")
        try store.append(
            [
                EventDraft(payload: .progressRemoved(ProgressRemoved(goal: goal, entry: e(2)))),
                EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("3")))),
            ], now: now)
        #expect(try liveIDs(store).count == 2 && !(try liveIDs(store).contains(e(2))))
        // Migrating again does nothing.
        let again = try store.migrate()
        #expect(again.applied.isEmpty && !again.rebuilt)
        #expect(try store.verify().isClean)
    }

    @Test func aStoreNewerThanTheCodeIsRefusedUnchanged() throws {
        let (dir, store) = try legacyStore()
        try store.writeTransaction { txn in try txn.put(store.layout.meta, key: MetaKey.schema, value: UInt64(3).bigEndianBytes) }
        let before = try store.snapshot()
        #expect(ledgerError { _ = try LedgerStore.open(at: dir.path + "/s") }?.code == .store)
        try store.writeTransaction { txn in
            try txn.put(store.layout.meta, key: MetaKey.schema, value: UInt64(2).bigEndianBytes)
            try txn.put(store.layout.meta, key: Migrator.key("9-from-the-future"), value: [])
        }
        let error = ledgerError { _ = try LedgerStore.open(at: dir.path + "/s") }
        #expect(error?.code == .store && error?.message.contains("9-from-the-future") == true)
        #expect(try store.snapshot()["events"] == before["events"])
    }

    @Test func aLegacyStoreRefusesEventsOfTheNewSchema() throws {
        let (dir, legacy) = try legacyStore()
        let migrated = try legacy.clone(to: dir.path + "/m", device: "tablet", now: instant("2026-11-01T00:00:00Z"))
        _ = try migrated.migrate()
        try migrated.append([EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("1"))))], now: now)
        let before = try legacy.snapshot()
        let error = ledgerError { _ = try legacy.sync(with: migrated) }
        // The library names no command: the remedy is typed, and the command line names it.
        #expect(error?.code == .store && error?.reason == .needsMigration, "\(error?.message ?? "")")
        #expect(error?.message.contains("`ledger") == false, "\(error?.message ?? "")")
        #expect(try legacy.snapshot() == before)
        _ = try legacy.migrate()
        // The entry, and the tablet's enrolment from its own migration.
        #expect(try legacy.sync(with: migrated).pulled.imported == 2)
    }
}
