import Foundation
import Testing

@testable import GoalLedger

/// Builds a goal's state from events, for view tests.
struct GoalBuilder {
    var state: GoalState
    private var clock: Int64 = 1_700_000_000_000

    init(cadence: Cadence, measurable target: Amount? = nil) {
        let id = UUID()
        state = GoalState(id: id)
        apply(
            .goalCreated(
                GoalCreated(
                    goal: id, title: "Goal", details: nil, cadence: cadence, targetDate: nil,
                    progressKind: target == nil ? .outcome : .measurable, target: target, unit: nil, reminder: nil, tags: [])))
    }

    mutating func apply(_ payload: Payload, at: Instant? = nil) {
        clock += 1000
        let at = at ?? Instant(milliseconds: clock)
        state.apply(
            Event(id: UUID(), origin: "phone", sequence: 1, hlc: HLC(milliseconds: clock, counter: 0), at: at, schema: 2, payload: payload))
    }

    mutating func record(_ amount: Amount, on d: String) {
        apply(
            .progressRecorded(
                ProgressRecorded(goal: state.id, amount: amount, completed: nil, occurredAt: instant(d + "T12:00:00Z"), day: day(d))))
    }

    mutating func complete(_ done: Bool = true, on d: String, at time: String = "12:00:00") {
        apply(
            .progressRecorded(
                ProgressRecorded(goal: state.id, amount: nil, completed: done, occurredAt: instant(d + "T" + time + "Z"), day: day(d))))
    }
}

struct GoalViewTests {
    let berlin = DeviceCalendar(timeZoneIdentifier: "Europe/Berlin", firstWeekday: 2)
    let newYork = DeviceCalendar(timeZoneIdentifier: "America/New_York", firstWeekday: 1)

    @Test func dailyMeasurableUsesTheLocalDayOfNow() {
        var g = GoalBuilder(cadence: .daily, measurable: try! Amount("5"))
        g.record(2, on: "2026-11-02")
        g.record(3, on: "2026-11-02")
        g.record(1, on: "2026-11-03")
        // 23:30 UTC on the 2nd is already the 3rd in Berlin.
        let lateEvening = instant("2026-11-02T23:30:00Z")
        let berlinView = GoalView(goal: g.state, calendar: berlin, now: lateEvening)
        #expect(berlinView.period == Period(start: day("2026-11-03"), end: day("2026-11-03")))
        #expect(berlinView.value == 1)
        #expect(!berlinView.completed)
        #expect(berlinView.streak?.current == 1)  // the 2nd was complete; today is still open
        let utcView = GoalView(goal: g.state, calendar: DeviceCalendar(timeZoneIdentifier: "UTC", firstWeekday: 1), now: lateEvening)
        #expect(utcView.value == 5)
        #expect(utcView.completed)
        // New York is behind: at 03:30 UTC on the 3rd it is still the 2nd.
        let nyView = GoalView(goal: g.state, calendar: newYork, now: instant("2026-11-03T03:30:00Z"))
        #expect(nyView.period?.start == day("2026-11-02"))
        #expect(nyView.value == 5)
    }

    @Test func sumsAreExactWhateverTheEntriesOrder() throws {
        // 0.1 + 0.2 is 0.3, and ten tenths complete a target of 1.
        var g = GoalBuilder(cadence: .daily, measurable: try! Amount("1"))
        g.record(0.1, on: "2026-11-02")
        g.record(0.2, on: "2026-11-02")
        let now = instant("2026-11-02T18:00:00Z")
        #expect(GoalView(goal: g.state, calendar: berlin, now: now).value == 0.3)
        #expect(GoalView(goal: g.state, calendar: berlin, now: now).value!.description == "0.3")
        var tenths = GoalBuilder(cadence: .daily, measurable: try! Amount("1"))
        for _ in 0..<10 { tenths.record(0.1, on: "2026-11-02") }
        #expect((0..<10).reduce(0.0) { s, _ in s + 0.1 } != 1, "floating-point addition would miss the target")
        let view = GoalView(goal: tenths.state, calendar: berlin, now: now)
        #expect(view.value?.description == "1" && view.completed)

        // Amounts of up to six digits after the point, in seeded random orders: the sum is the
        // exact decimal sum (computed here in whole millionths), in every order.
        var rng = SeededRandom(seed: 26)
        for _ in 0..<50 {
            let micros = (0..<Int.random(in: 2...40, using: &rng)).map { _ in Int64.random(in: -5_000_000_000...5_000_000_000, using: &rng) }
            let amounts = try micros.map { try Amount(micros: $0) }
            let exact = Int128(micros.reduce(0, +))
            for _ in 0..<3 {
                #expect(Amount.sum(amounts.shuffled(using: &rng)).micros == exact)
            }
        }
    }

    @Test func weeklyPeriodsFollowTheFirstWeekday() {
        var g = GoalBuilder(cadence: .weekly)
        g.complete(on: "2026-11-29")  // a Sunday
        let now = instant("2026-11-30T10:00:00Z")  // the Monday after
        let sundayFirst = GoalView(goal: g.state, calendar: DeviceCalendar(timeZoneIdentifier: "Europe/Berlin", firstWeekday: 1), now: now)
        #expect(sundayFirst.period == Period(start: day("2026-11-29"), end: day("2026-12-05")))
        #expect(sundayFirst.completed)
        #expect(sundayFirst.streak?.current == 1)
        let mondayFirst = GoalView(goal: g.state, calendar: berlin, now: now)
        #expect(mondayFirst.period == Period(start: day("2026-11-30"), end: day("2026-12-06")))
        #expect(!mondayFirst.completed)
        #expect(mondayFirst.streak?.current == 1)  // last week (Mon 23rd – Sun 29th) was done
    }

    @Test func monthlyAndYearlyPeriodBounds() {
        var m = GoalBuilder(cadence: .monthly, measurable: try! Amount("10"))
        m.record(4, on: "2028-02-01")
        m.record(6, on: "2028-02-29")
        m.record(9, on: "2028-03-01")
        let view = GoalView(goal: m.state, calendar: newYork, now: instant("2028-02-29T20:00:00Z"))
        #expect(view.period == Period(start: day("2028-02-01"), end: day("2028-02-29")))
        #expect(view.value?.description == "10")
        #expect(view.completed)
        var y = GoalBuilder(cadence: .yearly)
        y.complete(on: "2025-06-01")
        y.complete(on: "2026-01-01")
        let yv = GoalView(goal: y.state, calendar: berlin, now: instant("2026-12-31T22:59:00Z"))
        #expect(yv.period == Period(start: day("2026-01-01"), end: day("2026-12-31")))
        #expect(yv.streak?.current == 2)
        // One minute later it is 2027 in Berlin: the open year keeps the streak.
        let next = GoalView(goal: y.state, calendar: berlin, now: instant("2026-12-31T23:00:00Z"))
        #expect(next.period?.start == day("2027-01-01"))
        #expect(!next.completed)
        #expect(next.streak?.current == 2)
    }

    @Test func aMissedPeriodBreaksTheStreakAndTheBestIsKept() {
        var g = GoalBuilder(cadence: .daily)
        for d in ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-05", "2026-11-06"] { g.complete(on: d) }
        let now = instant("2026-11-06T18:00:00Z")
        let today = GoalView(goal: g.state, calendar: berlin, now: now)
        #expect(today.completed)
        #expect(today.streak?.current == 2)
        #expect(today.streak?.best == 3)
        // The next day, still open, keeps the run; the day after that it is broken.
        #expect(GoalView(goal: g.state, calendar: berlin, now: instant("2026-11-07T09:00:00Z")).streak?.current == 2)
        #expect(GoalView(goal: g.state, calendar: berlin, now: instant("2026-11-08T09:00:00Z")).streak?.current == 0)
    }

    @Test func outcomeFollowsTheLatestEntryOfThePeriod() {
        var g = GoalBuilder(cadence: .daily)
        g.complete(true, on: "2026-11-02", at: "08:00:00")
        g.complete(false, on: "2026-11-02", at: "09:00:00")
        let now = instant("2026-11-02T20:00:00Z")
        #expect(!GoalView(goal: g.state, calendar: berlin, now: now).completed)
        // An entry recorded later but about an earlier moment does not override.
        g.complete(true, on: "2026-11-02", at: "07:00:00")
        #expect(!GoalView(goal: g.state, calendar: berlin, now: now).completed)
        g.complete(true, on: "2026-11-02", at: "10:00:00")
        let view = GoalView(goal: g.state, calendar: berlin, now: now)
        #expect(view.completed)
        #expect(view.json["value"] == .bool(true))
    }

    @Test func oneTimeGoalsUseAllEntriesAndHaveNoStreak() {
        var g = GoalBuilder(cadence: .once, measurable: try! Amount("10"))
        g.record(6, on: "2026-01-05")
        g.record(5, on: "2026-11-05")
        let view = GoalView(goal: g.state, calendar: berlin, now: instant("2026-11-06T00:00:00Z"))
        #expect(view.period == nil)
        #expect(view.value?.description == "11")
        #expect(view.completed)
        #expect(view.streak == nil)
        #expect(view.json["streak"] == .null)
        #expect(view.json["periodStart"] == .null)
    }

    @Test func removedEntriesDoNotCount() {
        var g = GoalBuilder(cadence: .daily, measurable: try! Amount("3"))
        g.record(3, on: "2026-11-02")
        let entry = g.state.entries[0].id
        #expect(GoalView(goal: g.state, calendar: berlin, now: instant("2026-11-02T12:00:00Z")).completed)
        g.apply(.progressRemoved(ProgressRemoved(goal: g.state.id, entry: entry)))
        let view = GoalView(goal: g.state, calendar: berlin, now: instant("2026-11-02T12:00:00Z"))
        #expect(!view.completed)
        #expect(view.value?.description == "0")
    }
}
