import Foundation
import Testing

@testable import GoalLedger

/// The reads a screen makes: every goal with its view for the store's device, one goal, and the
/// bridges between the ledger's time values and Foundation's.
struct GoalSnapshotTests {
    @Test func goalsGivesEachGoalWithItsViewForThisDevice() throws {
        let t = try TemporaryStore()
        let run = UUID()
        let call = UUID()
        let monday = instant("2026-11-02T07:00:00Z")
        try t.store.append(
            [
                EventDraft(payload: .deviceConfigured(try DeviceConfigured(timeZone: TimeZone(identifier: "Asia/Tokyo")!, firstWeekday: 2))),
                EventDraft(payload: .goalCreated(GoalCreated(goal: run, title: "Run", cadence: .daily, progressKind: .measurable, target: try! Amount("5")))),
                EventDraft(payload: .goalCreated(GoalCreated(goal: call, title: "Call", cadence: .weekly, progressKind: .outcome))),
                EventDraft(payload: .progressRecorded(ProgressRecorded(goal: run, amount: try Amount(2.5)))),
                EventDraft(payload: .progressRecorded(ProgressRecorded(goal: run, amount: try Amount(2.5)))),
            ], now: monday)

        // 16:00 UTC is already Tuesday in Tokyo: a new day, a streak of one.
        let snapshots = try t.store.goals(now: instant("2026-11-02T16:00:00Z"))
        #expect(snapshots.map(\.goal.title).sorted() == ["Call", "Run"])
        let r = try #require(snapshots.first { $0.id == run })
        #expect(r.goal.target?.description == "5" && r.goal.entries.count == 2)
        #expect(r.view.period == Period(start: day("2026-11-03"), end: day("2026-11-03")))
        #expect(r.view.value?.description == "0" && !r.view.completed)
        #expect(r.view.streak == Streak(current: 1, best: 1))
        // The same morning in Tokyo: today's value.
        let morning = try #require(try t.store.goal(run, now: instant("2026-11-02T08:00:00Z")))
        #expect(morning.view.value?.description == "5" && morning.view.completed)
        #expect(morning.goal == r.goal)
        // Values a screen can diff and key: Hashable, Identifiable.
        #expect(Set(snapshots).count == 2)
        #expect(try t.store.goal(UUID(), now: monday) == nil)

        try t.store.append([EventDraft(payload: .goalDeleted(GoalRegisterWrite(goal: call)))], now: monday)
        #expect(try t.store.goals(now: monday).map(\.id) == [run])
        #expect(try t.store.goals(now: monday, includingDeleted: true).count == 2)
        #expect(try t.store.goal(call, now: monday)?.goal.isDeleted == true)
    }

    @Test func instantsAndDaysBridgeToFoundation() throws {
        let date = Date(timeIntervalSince1970: 1_793_000_000.123_9)
        #expect(Instant(date).milliseconds == 1_793_000_000_123)
        #expect(Instant(milliseconds: 1_793_000_000_123).date == Date(timeIntervalSince1970: 1_793_000_000.123))
        #expect(Instant(Instant(milliseconds: -1).date).milliseconds == -1)
        #expect(Day(DateComponents(year: 2028, month: 2, day: 29)) == day("2028-02-29"))
        #expect(Day(DateComponents(year: 2026, month: 2, day: 29)) == nil)
        #expect(Day(DateComponents(year: 2026, month: 2)) == nil)
        let components = day("2026-11-05").dateComponents
        #expect(components.year == 2026 && components.month == 11 && components.day == 5)
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        #expect(utc.date(from: components).map(Instant.init) == instant("2026-11-05T00:00:00Z"))
    }
}
