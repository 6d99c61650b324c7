import Foundation
import GoalLedger
import LedgerTestSupport
import Synchronization
import Testing

/// Observing any read of the ledger: its initial value, a new value only when a commit (of this
/// process or another) changes it, bursts coalesced, the goals without their entries, and a
/// fresh read at the device's midnight on a clock the test moves.
struct ObservingAnyReadTests {
    static let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

    /// A store in a directory of its own, removed when the test ends.
    final class Fixture {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-observe-any-\(UUID().uuidString)").path
        let store: LedgerStore
        init() throws { store = try LedgerStore.create(at: dir + "/s", device: "phone") }
        deinit { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// How many goals carry the tag "health": a read no existing call gives.
    static func healthGoals(_ snapshot: borrowing LedgerSnapshot) throws -> Int {
        try snapshot.goals(now: now, includingEntries: false).filter { $0.goal.tags.contains("health") }.count
    }

    @Test func aCustomReadYieldsItsInitialValueThenOnlyChangedValues() async throws {
        let f = try Fixture()
        let water = try f.store.createGoal(
            title: "Water", cadence: .daily, progress: .measurable(target: try .target(2)), tags: ["health"], now: Self.now)
        let run = try f.store.createGoal(title: "Run", cadence: .weekly, now: Self.now)
        // Other processes are looked for once an hour: only commits wake it.
        var values = f.store.observe(otherProcesses: .seconds(3600)) { try Self.healthGoals($0) }.makeAsyncIterator()
        #expect(try await values.next() == 1)

        // Commits that leave the count as it is yield nothing: the next value is the changed one.
        try f.store.recordProgress(water, amount: Amount(1), now: Self.now)
        try f.store.editGoal(run, title: "Run 5 km", now: Self.now)
        try f.store.addTag("health", to: run, now: Self.now)
        #expect(try await values.next() == 2)
        try f.store.recordCompletion(run, now: Self.now)
        try f.store.removeTag("health", from: water, now: Self.now)
        #expect(try await values.next() == 1)
    }

    @Test func aBurstOfCommitsIsCoalesced() async throws {
        let f = try Fixture()
        let water = try f.store.createGoal(title: "Water", cadence: .daily, progress: .measurable(target: try .target(100)), now: Self.now)
        // The second read waits until the whole burst is committed; the commits it missed while
        // it ran make one more read, not fifty.
        let reads = Atomic<Int>(0)
        let burstDone = DispatchSemaphore(value: 0)
        let values = f.store.observe(otherProcesses: .seconds(3600)) { snapshot in
            if reads.add(1, ordering: .sequentiallyConsistent).newValue == 2 { burstDone.wait() }
            return try snapshot.goal(water, now: Self.now)?.view.value?.description ?? "none"
        }
        let collector = Task {
            var seen: [String] = []
            for try await value in values {
                seen.append(value)
                if value == "50" { break }
            }
            return seen
        }
        while reads.load(ordering: .sequentiallyConsistent) < 1 { try await Task.sleep(for: .milliseconds(5)) }
        for _ in 0..<50 { try f.store.recordProgress(water, amount: Amount(1), now: Self.now) }
        burstDone.signal()
        let seen = try await collector.value
        #expect(seen.first == "0" && seen.last == "50")
        #expect(seen.count <= 3, "fifty commits made at most two reads after the first: \(seen)")
        #expect(reads.load(ordering: .sequentiallyConsistent) <= 3)
    }

    @Test func aCommitThroughASecondStoreOfThePathWakesIt() async throws {
        let f = try Fixture()
        let run = try f.store.createGoal(title: "Run", cadence: .weekly, now: Self.now)
        var values = f.store.observe(otherProcesses: .seconds(3600)) { try Self.healthGoals($0) }.makeAsyncIterator()
        #expect(try await values.next() == 0)
        let path = f.dir + "/s"
        try await Task.detached {
            let other = try LedgerStore.open(at: path)
            try other.addTag("health", to: run, now: Self.now)
        }.value
        let started = ContinuousClock.now
        #expect(try await values.next() == 1)
        // Far below the hour the other processes' check waits (a loaded machine may take seconds).
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    @Test func aCommitOfAnotherProcessArrivesWithinTheBound() async throws {
        let binary = ledgerExecutable()
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the ledger executable first")
        let f = try Fixture()
        let goal = try f.store.createGoal(title: "Read", now: Self.now)
        let values = f.store.observe(otherProcesses: .milliseconds(100)) { try Self.healthGoals($0) }

        let p = Process()
        p.executableURL = binary
        p.arguments = ["--store", f.dir + "/s", "--now", "2026-11-05T12:00:00Z", "append"]
        let input = Pipe()
        p.standardInput = input
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        input.fileHandleForWriting.write(Data(#"{"type":"tagAdded","goal":"\#(goal.uuidString)","tag":"health"}"#.utf8))
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let seen = try await ObservationTests.first(values, within: 10) { $0 == 1 }
        #expect(seen == 1, "the other process's tag never arrived")
    }

    @Test func anErrorOfTheReadEndsTheSequenceWithIt() async throws {
        struct Refused: Error {}
        let f = try Fixture()
        let values = f.store.observe(otherProcesses: .seconds(3600)) { _ -> Int in throw Refused() }
        await #expect(throws: Refused.self) {
            for try await _ in values {}
        }
    }

    @Test func observedGoalsWithoutEntriesHaveTheViewsOfGoalsWithEntries() async throws {
        let f = try Fixture()
        let water = try f.store.createGoal(title: "Water", cadence: .daily, progress: .measurable(target: try .target(2)), now: Self.now)
        let call = try f.store.createGoal(title: "Call", cadence: .weekly, now: Self.now)
        let once = try f.store.createGoal(title: "Paint", progress: .measurable(target: try .target(3)), now: Self.now)
        for day in 0..<4 {
            let at = Instant(milliseconds: Self.now.milliseconds - Int64(day) * 86_400_000)
            try f.store.recordProgress(water, amount: Amount(2), occurredAt: at, now: Self.now)
            try f.store.recordCompletion(call, occurredAt: at, now: Self.now)
            try f.store.recordProgress(once, amount: Amount(1), occurredAt: at, now: Self.now)
        }
        var lean = f.store.observeGoals(now: { Self.now }, otherProcesses: .seconds(3600)).makeAsyncIterator()
        var full = f.store.observeGoals(now: { Self.now }, includingEntries: true, otherProcesses: .seconds(3600)).makeAsyncIterator()
        let withoutEntries = try #require(try await lean.next())
        let withEntries = try #require(try await full.next())
        #expect(withoutEntries.allSatisfy { $0.goal.entries.isEmpty })
        #expect(withEntries.map { $0.goal.entries.count }.sorted() == [4, 4, 4])
        #expect(withoutEntries.map(\.view) == withEntries.map(\.view))
        #expect(withEntries.first { $0.id == water }?.view.streak?.current == 4)
        var facts = withEntries
        for i in facts.indices { facts[i].goal.entries = [] }
        #expect(withoutEntries == facts, "the same goals, versions included, without their entries")
    }

    @Test func theGoalsAreReadAgainAtTheDevicesMidnight() async throws {
        let f = try Fixture()
        try f.store.configureDevice(try DeviceConfigured(timeZone: TimeZone(identifier: "Asia/Tokyo")!, firstWeekday: 2), now: Self.now)
        let water = try f.store.createGoal(title: "Water", cadence: .daily, progress: .measurable(target: try .target(2)), now: Self.now)
        // 22:00 in Tokyo on the 5th.
        let clock = HandClock(Instant(rfc3339: "2026-11-05T13:00:00Z")!)
        try f.store.recordProgress(water, amount: Amount(2), now: clock.now)
        var values = f.store.observeGoals(now: { clock.now }, refreshAtDayChange: clock.dayChanges, otherProcesses: .seconds(3600))
            .makeAsyncIterator()
        let evening = try #require(try await values.next())
        #expect(evening[0].view.period?.start.description == "2026-11-05" && evening[0].view.completed)

        // It sleeps until midnight in Tokyo, not in UTC or the machine's zone.
        #expect(try await clock.waitForSleepers(1) == [Instant(rfc3339: "2026-11-05T15:00:00Z")!])
        clock.move(to: Instant(rfc3339: "2026-11-05T15:00:00Z")!)
        let morning = try #require(try await values.next())
        #expect(morning[0].view.period?.start.description == "2026-11-06" && !morning[0].view.completed)
        #expect(morning[0].view.value?.description == "0" && morning[0].view.streak?.current == 1)
        #expect(try await clock.waitForSleepers(2).last == Instant(rfc3339: "2026-11-06T15:00:00Z")!)
    }

    @Test func aCustomReadIsReadAgainAcrossADaylightSavingChange() async throws {
        let f = try Fixture()
        try f.store.configureDevice(
            try DeviceConfigured(timeZone: TimeZone(identifier: "America/New_York")!, firstWeekday: 1), now: Self.now)
        // 23:30 on Saturday 31 October in New York (EDT); clocks go back at 02:00 on Sunday.
        let clock = HandClock(Instant(rfc3339: "2026-11-01T03:30:00Z")!)
        var days = f.store.observe(refreshAtDayChange: clock.dayChanges, otherProcesses: .seconds(3600)) { snapshot in
            try snapshot.deviceState(snapshot.device).calendar.day(of: clock.now).description
        }.makeAsyncIterator()
        #expect(try await days.next() == "2026-10-31")
        #expect(try await clock.waitForSleepers(1) == [Instant(rfc3339: "2026-11-01T04:00:00Z")!])
        clock.move(to: Instant(rfc3339: "2026-11-01T04:00:00Z")!)
        #expect(try await days.next() == "2026-11-01")
        // Sunday lasts 25 hours: the next midnight is at 05:00 UTC, in EST.
        #expect(try await clock.waitForSleepers(2).last == Instant(rfc3339: "2026-11-02T05:00:00Z")!)
        clock.move(to: Instant(rfc3339: "2026-11-02T05:00:00Z")!)
        #expect(try await days.next() == "2026-11-02")
    }

    @Test func aClockMovedPastSeveralMidnightsReadsOnceAndSleepsUntilTheNext() async throws {
        let f = try Fixture()
        let clock = HandClock(Instant(rfc3339: "2026-11-05T23:00:00Z")!)
        var days = f.store.observe(refreshAtDayChange: clock.dayChanges, otherProcesses: .seconds(3600)) { snapshot in
            try snapshot.deviceState(snapshot.device).calendar.day(of: clock.now).description
        }.makeAsyncIterator()
        #expect(try await days.next() == "2026-11-05")
        _ = try await clock.waitForSleepers(1)
        clock.move(to: Instant(rfc3339: "2026-11-09T10:00:00Z")!)
        #expect(try await days.next() == "2026-11-09")
        #expect(try await clock.waitForSleepers(2).last == Instant(rfc3339: "2026-11-10T00:00:00Z")!)
    }

    @Test func theStartOfTheNextDayFollowsTheZonesTimeChanges() {
        func next(_ zone: String, _ at: String) -> String? {
            DeviceCalendar(timeZoneIdentifier: zone, firstWeekday: 1).startOfNextDay(after: Instant(rfc3339: at)!)?.description
        }
        #expect(next("UTC", "2026-11-05T12:00:00Z") == "2026-11-06T00:00:00Z")
        #expect(next("UTC", "2026-11-05T00:00:00Z") == "2026-11-06T00:00:00Z")
        #expect(next("Asia/Kolkata", "2026-11-05T12:00:00Z") == "2026-11-05T18:30:00Z")
        // Spring forward in New York at 02:00: the day is 23 hours long.
        #expect(next("America/New_York", "2026-03-08T05:00:00Z") == "2026-03-09T04:00:00Z")
        // Santiago skips midnight itself when summer time starts: the day starts at 01:00.
        #expect(next("America/Santiago", "2026-09-05T12:00:00Z") == "2026-09-06T04:00:00Z")
        #expect(next("UTC", "9999-12-31T12:00:00Z") == nil)
    }
}
