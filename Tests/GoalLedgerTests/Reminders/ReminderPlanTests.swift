import Foundation
import Testing

@testable import GoalLedger

/// The `repeating` strategy: the scheduling table and eligibility.
struct RepeatingReminderTests {
    let newYork = device("America/New_York")
    /// Wednesday 2026-06-10, 08:00 in New York.
    let now = instant("2026-06-10T12:00:00Z")

    func only(_ goal: ReminderGoal, _ device: DeviceState? = nil, now: Instant? = nil) -> NotificationRequest? {
        let requests = ReminderPlan.requests(for: goal.state, device: device ?? newYork, now: now ?? self.now)
        #expect(requests.count <= 1)
        return requests.first
    }

    @Test func oneTimeGoalFiresOnceOnItsTargetDate() throws {
        let goal = ReminderGoal(goalID(1), title: "Submit thesis", cadence: .once, targetDate: "2026-06-20")
        let r = try #require(only(goal))
        #expect(r.id == "goal-reminder-00000000-0000-4000-8000-000000000001")
        #expect(r.goal == goal.id)
        #expect(r.title == "Submit thesis")
        #expect(r.body == "Due on 2026-06-20")
        #expect(r.sound == "default")
        #expect(r.trigger == calendarTrigger(year: 2026, month: 6, day: 20, 9, 0, repeats: false))
        #expect(r.nextFireAt == instant("2026-06-20T13:00:00Z"))
    }

    @Test func dailyGoalRepeatsAtTheReminderTime() throws {
        let goal = ReminderGoal(cadence: .daily)
        let r = try #require(only(goal))
        #expect(r.id == "goal-reminder-" + goal.id.uuidString)
        #expect(r.trigger == calendarTrigger(9, 0, repeats: true))
        #expect(r.nextFireAt == instant("2026-06-10T13:00:00Z"))  // 09:00 today is still ahead
        var early = ReminderGoal(cadence: .daily, reminder: hm(7, 30))
        #expect(try #require(only(early)).nextFireAt == instant("2026-06-11T11:30:00Z"))  // 07:30 has passed
        early.setReminder(hour: 8, minute: 0)
        // Exactly now is not after now.
        #expect(try #require(only(early)).nextFireAt == instant("2026-06-11T12:00:00Z"))
    }

    @Test func weeklyGoalFiresOnTheDevicesFirstWeekday() throws {
        let goal = ReminderGoal(cadence: .weekly)
        let sunday = try #require(only(goal, device("America/New_York", firstWeekday: 1)))
        #expect(sunday.trigger == calendarTrigger(weekday: 1, 9, 0, repeats: true))
        #expect(sunday.nextFireAt == instant("2026-06-14T13:00:00Z"))
        let monday = try #require(only(goal, device("America/New_York", firstWeekday: 2)))
        #expect(monday.trigger == calendarTrigger(weekday: 2, 9, 0, repeats: true))
        #expect(monday.nextFireAt == instant("2026-06-15T13:00:00Z"))
        // When today is the first weekday and the time is still ahead, it fires today.
        let wednesday = try #require(only(goal, device("America/New_York", firstWeekday: 4)))
        #expect(wednesday.trigger == calendarTrigger(weekday: 4, 9, 0, repeats: true))
        #expect(wednesday.nextFireAt == instant("2026-06-10T13:00:00Z"))
        #expect(wednesday.body == "Keep up this week's goal")
    }

    @Test func monthlyGoalFiresOnTheFirstOfTheMonth() throws {
        let r = try #require(only(ReminderGoal(cadence: .monthly, reminder: hm(18, 45))))
        #expect(r.trigger == calendarTrigger(day: 1, 18, 45, repeats: true))
        #expect(r.nextFireAt == instant("2026-07-01T22:45:00Z"))
        #expect(r.body == "Keep up this month's goal")
    }

    @Test func yearlyGoalFiresOnJanuaryFirst() throws {
        let r = try #require(only(ReminderGoal(cadence: .yearly)))
        #expect(r.trigger == calendarTrigger(month: 1, day: 1, 9, 0, repeats: true))
        #expect(r.nextFireAt == instant("2027-01-01T14:00:00Z"))  // EST in January
        #expect(r.body == "Keep up this year's goal")
    }

    @Test func nextFireTimeFollowsTheDeviceTimeZone() throws {
        let goal = ReminderGoal(cadence: .daily)
        // 12:00Z is 14:00 in Berlin: 09:00 has passed there, not in New York.
        #expect(try #require(only(goal, device("Europe/Berlin"))).nextFireAt == instant("2026-06-11T07:00:00Z"))
        #expect(try #require(only(goal, device("Asia/Tokyo"))).nextFireAt == instant("2026-06-11T00:00:00Z"))
        // A device that never configured itself sees UTC.
        #expect(try #require(only(goal, DeviceState(name: "tablet"))).nextFireAt == instant("2026-06-11T09:00:00Z"))
        // On the spring-forward day 02:30 does not exist; it fires when the clock jumps to 03:00.
        let night = ReminderGoal(cadence: .daily, reminder: hm(2, 30))
        let r = try #require(only(night, now: instant("2026-03-08T05:00:00Z")))
        #expect(r.nextFireAt == instant("2026-03-08T07:00:00Z"))
        #expect(r.trigger == calendarTrigger(2, 30, repeats: true))
    }

    // MARK: Eligibility

    @Test func oneTimeGoalNeedsAFutureFireTime() {
        #expect(only(ReminderGoal(cadence: .once, targetDate: "2026-06-01")) == nil)  // past
        // Today: eligible while the reminder time is ahead.
        #expect(only(ReminderGoal(cadence: .once, targetDate: "2026-06-10", reminder: hm(7, 0))) == nil)
        #expect(only(ReminderGoal(cadence: .once, targetDate: "2026-06-10", reminder: hm(8, 0))) == nil)  // exactly now
        #expect(
            only(ReminderGoal(cadence: .once, targetDate: "2026-06-10", reminder: hm(8, 1)))?.nextFireAt == instant("2026-06-10T12:01:00Z"))
    }

    @Test func oneTimeGoalWithoutTargetDateOrReminderHasNone() {
        #expect(only(ReminderGoal(cadence: .once)) == nil)
        #expect(only(ReminderGoal(cadence: .once, targetDate: "2026-06-20", reminder: nil)) == nil)
        var cleared = ReminderGoal(cadence: .once, targetDate: "2026-06-20")
        cleared.apply(.goalEdited(GoalEdited(goal: cleared.id, targetDate: .some(nil), replaces: [:])))
        #expect(only(cleared) == nil)
    }

    @Test func completedOneTimeGoalHasNone() {
        var outcome = ReminderGoal(cadence: .once, targetDate: "2026-06-20")
        outcome.complete(on: "2026-05-02")  // any day counts for one-time goals
        #expect(only(outcome) == nil)
        outcome.complete(false, on: "2026-06-01")  // reopened
        #expect(only(outcome) != nil)
        var measurable = ReminderGoal(cadence: .once, targetDate: "2026-06-20", measurable: try! Amount("10"))
        measurable.record(6, on: "2026-06-01")
        #expect(only(measurable) != nil)
        measurable.record(4, on: "2026-06-09")
        #expect(only(measurable) == nil)
    }

    @Test func recurringGoalCompletedForTheCurrentPeriodKeepsItsReminder() throws {
        var goal = ReminderGoal(cadence: .daily)
        goal.complete(on: "2026-06-10")
        #expect(GoalView(goal: goal.state, calendar: newYork.calendar, now: now).completed)
        let r = try #require(only(goal))
        #expect(r.trigger == calendarTrigger(9, 0, repeats: true))
        #expect(r.nextFireAt == instant("2026-06-10T13:00:00Z"))
    }

    @Test func noReminderOrDeletedOrUnknownGoalHasNone() {
        #expect(only(ReminderGoal(cadence: .daily, reminder: nil)) == nil)
        var goal = ReminderGoal(cadence: .daily)
        goal.clearReminder()
        #expect(only(goal) == nil)
        goal.setReminder(hour: 20, minute: 15)
        #expect(only(goal)?.trigger == calendarTrigger(20, 15, repeats: true))
        goal.delete()
        #expect(only(goal) == nil)
        goal.restore()
        #expect(only(goal) != nil)
        // Events about a goal whose creation has not arrived yet.
        var early = GoalState(id: UUID())
        early.apply(
            Event(
                id: UUID(), origin: "phone", sequence: 1, hlc: HLC(milliseconds: 1, counter: 0), at: Instant(milliseconds: 1),
                schema: 2, payload: .reminderSet(ReminderSet(goal: early.id, hour: 9, minute: 0, replaces: nil))))
        #expect(ReminderPlan.requests(for: early, device: newYork, now: now).isEmpty)
        #expect(ReminderPlan.plan(goals: [early, goal.state], device: newYork, now: now).requests.map(\.goal) == [goal.id])
    }

    @Test func recognizesGoalReminderIDs() {
        let uuid = "00000000-0000-4000-8000-000000000001"
        #expect(ReminderPlan.isGoalReminderID("goal-reminder-" + uuid))
        #expect(ReminderPlan.isGoalReminderID("goal-reminder-" + uuid + "-20260308"))
        #expect(ReminderPlan.isGoalReminderID("goal-reminder-" + uuid.lowercased()))
        for other in [
            "goal-reminder-", "goal-reminder-" + uuid + "-", "goal-reminder-" + uuid + "-2026030",
            "goal-reminder-" + uuid + "-202603088", "goal-reminder-" + uuid + "-2026030x", "goal-reminder-" + uuid + "_20260308",
            "goal-reminder-" + uuid + "-٢٠٢٦٠٣٠٨", "goal-reminder-00000000-0000-4000-8000-00000000000G",
            "goal-reminder-000000000000400080000000000000001", "Goal-reminder-" + uuid, "streak-" + uuid, "",
        ] {
            #expect(!ReminderPlan.isGoalReminderID(other), "\(other)")
        }
    }
}

/// The `window` strategy: dated requests for the next days.
struct WindowReminderTests {
    func window(_ zone: String, firstWeekday: Int = 1, days: Int = 7) -> DeviceState {
        device(zone, firstWeekday: firstWeekday, strategy: .window, windowDays: days)
    }

    func fires(_ goal: ReminderGoal, _ device: DeviceState, now: String) -> [String: String] {
        let requests = ReminderPlan.requests(for: goal.state, device: device, now: instant(now))
        for r in requests {
            #expect(r.trigger == NotificationTrigger(kind: .date(r.plannedFireAt), repeats: false))
            #expect(r.id.hasPrefix("goal-reminder-" + goal.id.uuidString + "-"))
            #expect(ReminderPlan.isGoalReminderID(r.id))
        }
        #expect(requests.map(\.plannedFireAt) == requests.map(\.plannedFireAt).sorted())
        return Dictionary(uniqueKeysWithValues: requests.map { (String($0.id.suffix(8)), $0.plannedFireAt.rfc3339) })
    }

    @Test func newYorkSpringForward() {
        let goal = ReminderGoal(cadence: .daily, reminder: hm(2, 30))
        // Saturday 07:00 EST: today's 02:30 has passed.
        let got = fires(goal, window("America/New_York"), now: "2026-03-07T12:00:00Z")
        #expect(
            got == [
                "20260308": "2026-03-08T07:00:00Z",  // 02:30 does not exist: 03:00 EDT
                "20260309": "2026-03-09T06:30:00Z",
                "20260310": "2026-03-10T06:30:00Z",
                "20260311": "2026-03-11T06:30:00Z",
                "20260312": "2026-03-12T06:30:00Z",
                "20260313": "2026-03-13T06:30:00Z",
            ])
    }

    @Test func newYorkFallBack() {
        let goal = ReminderGoal(cadence: .daily, reminder: hm(1, 30))
        let got = fires(goal, window("America/New_York"), now: "2026-10-31T12:00:00Z")
        #expect(
            got == [
                "20261101": "2026-11-01T05:30:00Z",  // the first 01:30, still EDT
                "20261102": "2026-11-02T06:30:00Z",
                "20261103": "2026-11-03T06:30:00Z",
                "20261104": "2026-11-04T06:30:00Z",
                "20261105": "2026-11-05T06:30:00Z",
                "20261106": "2026-11-06T06:30:00Z",
            ])
    }

    @Test func berlinSpringForward() {
        let goal = ReminderGoal(cadence: .daily, reminder: hm(2, 30))
        let got = fires(goal, window("Europe/Berlin"), now: "2026-03-28T12:00:00Z")
        #expect(
            got == [
                "20260329": "2026-03-29T01:00:00Z",  // 02:30 does not exist: 03:00 CEST
                "20260330": "2026-03-30T00:30:00Z",
                "20260331": "2026-03-31T00:30:00Z",
                "20260401": "2026-04-01T00:30:00Z",
                "20260402": "2026-04-02T00:30:00Z",
                "20260403": "2026-04-03T00:30:00Z",
            ])
    }

    @Test func berlinFallBack() {
        let goal = ReminderGoal(cadence: .daily, reminder: hm(2, 30))
        let got = fires(goal, window("Europe/Berlin"), now: "2026-10-24T12:00:00Z")
        #expect(
            got == [
                "20261025": "2026-10-25T00:30:00Z",  // the first 02:30, still CEST
                "20261026": "2026-10-26T01:30:00Z",
                "20261027": "2026-10-27T01:30:00Z",
                "20261028": "2026-10-28T01:30:00Z",
                "20261029": "2026-10-29T01:30:00Z",
                "20261030": "2026-10-30T01:30:00Z",
            ])
    }

    @Test func theWindowStartsWithTodayAndCountsWindowDays() {
        let goal = ReminderGoal(cadence: .daily, reminder: hm(20, 0))
        // 08:00 in Tokyo: today's 20:00 is ahead, so today is the first of the three days.
        let got = fires(goal, window("Asia/Tokyo", days: 3), now: "2026-06-09T23:00:00Z")
        #expect(got == ["20260610": "2026-06-10T11:00:00Z", "20260611": "2026-06-11T11:00:00Z", "20260612": "2026-06-12T11:00:00Z"])
        #expect(fires(goal, window("Asia/Tokyo", days: 1), now: "2026-06-09T23:00:00Z") == ["20260610": "2026-06-10T11:00:00Z"])
    }

    @Test func aPeriodCompletedTodayHasNoRequestTodayButKeepsTomorrows() {
        var goal = ReminderGoal(cadence: .daily)
        let ny = window("America/New_York", days: 3)
        let now = "2026-06-10T12:00:00Z"  // 08:00: today's 09:00 is ahead
        #expect(fires(goal, ny, now: now).keys.sorted() == ["20260610", "20260611", "20260612"])
        goal.complete(on: "2026-06-10")
        #expect(fires(goal, ny, now: now).keys.sorted() == ["20260611", "20260612"])
        // Progress recorded ahead for a later day skips that day too.
        goal.complete(on: "2026-06-12")
        #expect(fires(goal, ny, now: now).keys.sorted() == ["20260611"])
        // A measurable period counts as completed only once the target is reached.
        var measurable = ReminderGoal(cadence: .daily, measurable: try! Amount("3"))
        measurable.record(2, on: "2026-06-10")
        #expect(fires(measurable, ny, now: now).keys.sorted() == ["20260610", "20260611", "20260612"])
        measurable.record(1, on: "2026-06-10")
        #expect(fires(measurable, ny, now: now).keys.sorted() == ["20260611", "20260612"])
    }

    @Test func weeklyRequestsFallOnTheFirstWeekday() {
        var goal = ReminderGoal(cadence: .weekly)
        let now = "2026-06-10T12:00:00Z"  // Wednesday
        #expect(
            fires(goal, window("America/New_York", firstWeekday: 1, days: 14), now: now) == [
                "20260614": "2026-06-14T13:00:00Z", "20260621": "2026-06-21T13:00:00Z",
            ])
        #expect(
            fires(goal, window("America/New_York", firstWeekday: 2, days: 7), now: now) == [
                "20260615": "2026-06-15T13:00:00Z"
            ])
        // Completing the current week does not touch next week's request; progress in next week does.
        goal.complete(on: "2026-06-10")
        #expect(fires(goal, window("America/New_York", firstWeekday: 2, days: 7), now: now).keys.sorted() == ["20260615"])
        goal.complete(on: "2026-06-17")
        #expect(fires(goal, window("America/New_York", firstWeekday: 2, days: 7), now: now).isEmpty)
    }

    @Test func monthlyAndYearlyRequestsFallOnPeriodStarts() {
        let monthly = ReminderGoal(cadence: .monthly)
        #expect(fires(monthly, window("Europe/Berlin", days: 30), now: "2026-06-10T12:00:00Z") == ["20260701": "2026-07-01T07:00:00Z"])
        #expect(fires(monthly, window("Europe/Berlin", days: 7), now: "2026-06-10T12:00:00Z").isEmpty)
        let yearly = ReminderGoal(cadence: .yearly)
        #expect(fires(yearly, window("Europe/Berlin", days: 7), now: "2026-12-28T12:00:00Z") == ["20270101": "2027-01-01T08:00:00Z"])
    }

    @Test func oneTimeGoalHasARequestOnlyWhenItsTargetDateIsInTheWindow() {
        let ny = window("America/New_York")
        let now = "2026-06-10T12:00:00Z"
        let soon = ReminderGoal(cadence: .once, targetDate: "2026-06-16")  // the 7th day of the window
        #expect(fires(soon, ny, now: now) == ["20260616": "2026-06-16T13:00:00Z"])
        let r = ReminderPlan.requests(for: soon.state, device: ny, now: instant(now))[0]
        #expect(r.body == "Due on 2026-06-16")
        #expect(fires(ReminderGoal(cadence: .once, targetDate: "2026-06-17"), ny, now: now).isEmpty)
        #expect(fires(ReminderGoal(cadence: .once, targetDate: "2026-06-10", reminder: hm(7, 0)), ny, now: now).isEmpty)
        var done = soon
        done.complete(on: "2026-06-09")
        #expect(fires(done, ny, now: now).isEmpty)
        var deleted = soon
        deleted.delete()
        #expect(fires(deleted, ny, now: now).isEmpty)
    }
}

/// Capacity: the soonest requests win and the goals that lost any are reported.
struct ReminderCapacityTests {
    @Test func keepsTheSoonestAndReportsTheRest() {
        // Goal i fires at 00:00 + i minutes; ids run the other way so that id order is not time order.
        var goals: [GoalState] = []
        for i in 0..<100 {
            goals.append(ReminderGoal(goalID(1000 - i), cadence: .daily, reminder: hm(i / 60, i % 60)).state)
        }
        var rng = SeededRandom(seed: 7)
        goals.shuffle(using: &rng)
        let plan = ReminderPlan.plan(goals: goals, device: device("UTC", capacity: 64), now: instant("2026-06-09T23:00:00Z"))
        #expect(plan.requests.count == 64)
        #expect(plan.requests.map(\.goal) == (0..<64).map { goalID(1000 - $0) })
        #expect(plan.requests.first?.nextFireAt == instant("2026-06-10T00:00:00Z"))
        #expect(plan.requests.last?.nextFireAt == instant("2026-06-10T01:03:00Z"))
        #expect(plan.overCapacity.count == 36)
        #expect(plan.overCapacity == (64..<100).map { goalID(1000 - $0) }.sorted { $0.uuidString < $1.uuidString })
        #expect(plan.overCapacity.first == goalID(901))
        // Without a cap, every goal has its request and nothing is reported.
        let roomy = ReminderPlan.plan(goals: goals, device: device("UTC", capacity: 512), now: instant("2026-06-09T23:00:00Z"))
        #expect(roomy.requests.count == 100)
        #expect(roomy.overCapacity.isEmpty)
    }

    @Test func tiesAreBrokenByID() {
        let a = ReminderGoal(goalID(2), cadence: .daily).state
        let b = ReminderGoal(goalID(1), cadence: .daily).state
        let plan = ReminderPlan.plan(goals: [a, b], device: device("UTC", capacity: 1), now: instant("2026-06-10T00:00:00Z"))
        #expect(plan.requests.map(\.goal) == [goalID(1)])
        #expect(plan.overCapacity == [goalID(2)])
        let both = ReminderPlan.plan(goals: [a, b], device: device("UTC"), now: instant("2026-06-10T00:00:00Z"))
        #expect(both.requests.map(\.goal) == [goalID(1), goalID(2)])
    }

    @Test func windowRequestsCountOneByOne() {
        // Two daily goals over 7 days are 14 requests; 10 fit, so both goals lose their last days.
        let morning = ReminderGoal(goalID(1), cadence: .daily, reminder: hm(8, 0)).state
        let later = ReminderGoal(goalID(2), cadence: .daily, reminder: hm(9, 0)).state
        let single = ReminderGoal(goalID(3), cadence: .once, targetDate: "2026-06-11", reminder: hm(7, 0)).state
        let phone = device("UTC", strategy: .window, capacity: 11)
        let plan = ReminderPlan.plan(goals: [later, single, morning], device: phone, now: instant("2026-06-10T06:00:00Z"))
        #expect(plan.requests.count == 11)
        #expect(plan.requests.map(\.plannedFireAt) == plan.requests.map(\.plannedFireAt).sorted())
        #expect(plan.requests.filter { $0.goal == goalID(3) }.count == 1)
        #expect(plan.requests.last?.id == "goal-reminder-" + goalID(2).uuidString + "-20260614")
        #expect(plan.overCapacity == [goalID(1), goalID(2)])
        // The per-goal requests are the plan's requests when nothing is cut.
        let all = ReminderPlan.plan(
            goals: [later, single, morning], device: device("UTC", strategy: .window), now: instant("2026-06-10T06:00:00Z"))
        let perGoal = [morning, later, single].flatMap {
            ReminderPlan.requests(for: $0, device: phone, now: instant("2026-06-10T06:00:00Z"))
        }
        #expect(Set(all.requests) == Set(perGoal))
        #expect(all.requests.count == 15)
    }
}
