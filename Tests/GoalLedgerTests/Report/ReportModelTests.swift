import Foundation
import Testing

@testable import GoalLedger
@testable import LedgerReport

/// What a report draws, from the library's views: per-day and per-period values, the calendar's
/// layout, the timeline's marks, reminder fire times, limits, and escaping.
struct ReportModelTests {
    static let goal = UUID(uuidString: "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1")!

    static func store(_ lines: [String]) throws -> TemporaryStore {
        let t = try TemporaryStore()
        try t.store.append(try drafts(lines), now: instant("2026-11-05T19:30:00Z"))
        return t
    }

    static let berlinMonday =
        #"{"type":"deviceConfigured","timeZone":"Europe/Berlin","firstWeekday":2,"locale":"en_GB","strategy":"repeating","at":"2026-10-01T00:00:00Z"}"#
    static func created(_ cadence: String, reminder: String = "") -> String {
        #"{"type":"goalCreated","goal":"\#(goal.uuidString)","title":"Run","cadence":"\#(cadence)","progress":{"kind":"measurable","target":5,"unit":"km"}\#(reminder),"at":"2026-10-01T00:00:00Z"}"#
    }
    static func progress(_ amount: Double, _ day: String) -> String {
        #"{"type":"progressRecorded","goal":"\#(goal.uuidString)","amount":\#(amount),"day":"\#(day)","at":"\#(day)T10:00:00Z"}"#
    }

    @Test func dayValuesSumTheDaysEntriesAndCompleteAgainstTheTarget() throws {
        let t = try Self.store([
            Self.berlinMonday, Self.created("daily"), Self.progress(3, "2026-11-02"), Self.progress(2.5, "2026-11-02"),
            Self.progress(1, "2026-11-04"),
        ])
        let g = try t.store.goalState(Self.goal)
        let days = GoalHistory.days(of: g, from: day("2026-11-01"), through: day("2026-11-05"))
        #expect(days.map(\.period.start) == ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04", "2026-11-05"].map(day))
        #expect(days.map(\.value) == [0, 5.5, 0, 1, 0])
        #expect(days.map(\.completed) == [false, true, false, false, false])
        #expect(days.map(\.entries) == [0, 2, 0, 1, 0])
    }

    @Test func periodValuesEndWithTheCurrentPeriodOnTheDevicesWeeks() throws {
        let t = try Self.store([
            Self.berlinMonday, Self.created("weekly"), Self.progress(3, "2026-10-26"), Self.progress(4, "2026-11-01"),
            Self.progress(2, "2026-11-02"),
        ])
        let g = try t.store.goalState(Self.goal)
        let calendar = DeviceCalendar(timeZoneIdentifier: "Europe/Berlin", firstWeekday: 2)
        let points = GoalHistory.periods(of: g, calendar: calendar, now: instant("2026-11-05T19:30:00Z"), count: 3)
        #expect(points.map(\.period.start) == ["2026-10-19", "2026-10-26", "2026-11-02"].map(day))
        #expect(points.map(\.value) == [0, 7, 2])
        #expect(points.map(\.completed) == [false, true, false])
        // The current period's value is the view's.
        let view = GoalView(goal: g, calendar: calendar, now: instant("2026-11-05T19:30:00Z"))
        #expect(points.last?.value == view.value && points.last?.period == view.period)
    }

    /// Asked for more periods than the supported days hold, the history gives every period
    /// from the first supported day to the current one, oldest first and without a gap.
    @Test func periodsAskedBeyondTheSupportedRangeStopAtItsStartInOrder() throws {
        let t = try Self.store([Self.berlinMonday, Self.created("daily"), Self.progress(3, "2026-11-02")])
        let g = try t.store.goalState(Self.goal)
        let calendar = DeviceCalendar(timeZoneIdentifier: "UTC", firstWeekday: 2)
        let points = GoalHistory.periods(of: g, calendar: calendar, now: instant("2026-11-05T12:00:00Z"), count: .max)
        #expect(points.count == Int(day("2026-11-05").daysSinceEpoch) + 1)
        #expect(points.first?.period.start == Day.supported.lowerBound && points.last?.period.start == day("2026-11-05"))
        #expect(zip(points, points.dropFirst()).allSatisfy { $0.period.end.adding(days: 1) == $1.period.start })
        #expect(points.first { $0.period.start == day("2026-11-02") }?.value == 3)
        // A few periods: the last ones, in the same order.
        let few = GoalHistory.periods(of: g, calendar: calendar, now: instant("2026-11-05T12:00:00Z"), count: 4)
        #expect(few.map(\.period) == points.suffix(4).map(\.period))
    }

    @Test func theHeatMapHasOneCellPerDayInWeeksFromTheFirstWeekday() throws {
        let t = try Self.store([Self.berlinMonday, Self.created("daily"), Self.progress(6, "2026-11-02"), Self.progress(2, "2026-11-03")])
        let g = try t.store.goalState(Self.goal)
        let today = day("2026-11-05")  // a Thursday
        for (firstWeekday, extra) in [(1, 5), (2, 4), (5, 1), (6, 7)] {
            let map = HeatMap.make(
                goal: g, calendar: DeviceCalendar(timeZoneIdentifier: "UTC", firstWeekday: firstWeekday), today: today, weeks: 53)
            #expect(map.cells.count == 52 * 7 + extra, "first weekday \(firstWeekday)")
            #expect(map.cells.first?.row == 0 && map.cells.first?.column == 0)
            #expect(map.cells.first?.day.weekday == firstWeekday)
            #expect(map.cells.last?.day == today && map.cells.last?.column == 52)
            #expect(map.rowWeekdays.first == firstWeekday)
        }
        let map = HeatMap.make(goal: g, calendar: DeviceCalendar(timeZoneIdentifier: "UTC", firstWeekday: 2), today: today, weeks: 53)
        let byDay = Dictionary(uniqueKeysWithValues: map.cells.map { ($0.day, $0) })
        #expect(byDay[day("2026-11-02")]?.level == 4)  // 6 of 5 km: done
        #expect(byDay[day("2026-11-03")]?.level == 2)  // 2 of 5 km
        #expect(byDay[day("2026-11-04")]?.level == 0)
        // Every month whose first day is shown is labelled at its column.
        #expect(map.months.map(\.month).suffix(3) == [9, 10, 11])
        #expect(map.months.last?.column == byDay[day("2026-11-01")]?.column)
    }

    @Test func aDailyRepeatingReminderFiresOncePerDayOverTheNextSevenDays() throws {
        let t = try Self.store([Self.berlinMonday, Self.created("daily", reminder: #","reminder":{"hour":7,"minute":30}"#)])
        let p = try t.store.projection()
        let now = instant("2026-11-05T19:30:00Z")
        let device = p.device("phone")
        let plan = ReminderPlan.plan(goals: p.existingGoals, device: device, now: now)
        let times = plan.fireTimes(
            goals: p.existingGoals, device: device, now: now, through: Instant(milliseconds: now.milliseconds + 7 * 86_400_000))
        // 07:30 in Berlin (UTC+1 in November) on the next seven mornings.
        #expect(times.map(\.fireAt.rfc3339) == (6...12).map { "2026-11-\($0 < 10 ? "0" : "")\($0)T06:30:00Z" })
        #expect(Set(times.map(\.request.id)) == ["goal-reminder-\(Self.goal.uuidString)"])
    }

    @Test func theTimelineMarksTheWinnerOfConcurrentEditsAndJoinsThem() throws {
        let t = try Self.store([Self.berlinMonday, Self.created("daily")])
        let tablet = try t.store.clone(to: t.directory.path + "/tablet", device: "tablet", now: instant("2026-11-01T00:00:00Z"))
        try t.store.append(
            try drafts([#"{"type":"goalEdited","goal":"\#(Self.goal.uuidString)","title":"Jog","at":"2026-11-05T20:00:00Z"}"#]),
            now: instant("2026-11-05T20:00:00Z"))
        try tablet.append(
            try drafts([#"{"type":"goalEdited","goal":"\#(Self.goal.uuidString)","title":"Walk","at":"2026-11-05T20:05:00Z"}"#]),
            now: instant("2026-11-05T20:05:00Z"))
        _ = try t.store.sync(with: tablet)
        let timeline = Timeline.make(events: try t.store.events(ofGoal: Self.goal), limit: 120)
        #expect(timeline.lanes == ["phone", "tablet"])
        let edits = timeline.marks.filter { $0.kind == .edited }
        #expect(edits.map(\.step.event.origin) == ["phone", "tablet"])
        #expect(edits.map(\.winner) == [false, true])
        #expect(edits.map(\.overwritten) == [true, false])
        #expect(timeline.links.count == 1)
        #expect(timeline.links.first?.from == edits[0].step.event.id && timeline.links.first?.to == edits[1].step.event.id)
        // A cap keeps the conflict and drops the oldest others.
        let capped = Timeline.make(events: try t.store.events(ofGoal: Self.goal), limit: 2)
        #expect(capped.marks.map(\.kind) == [.edited, .edited])
        #expect(capped.omitted == 1)
    }

    @Test func limitsAreSaidOnThePage() throws {
        var lines = [Self.berlinMonday]
        for i in 1...5 {
            lines.append(
                #"{"type":"goalCreated","goal":"00000000-0000-4000-8000-00000000000\#(i)","title":"Goal \#(i)","cadence":"daily","at":"2026-10-01T00:00:00Z"}"#
            )
            for d in 1...4 {
                lines.append(
                    #"{"type":"progressRecorded","goal":"00000000-0000-4000-8000-00000000000\#(i)","completed":true,"day":"2026-11-0\#(d)","at":"2026-11-0\#(d)T10:00:00Z"}"#
                )
            }
        }
        let t = try Self.store(lines)
        var limits = ReportLimits()
        limits.goalsInFull = 2
        limits.timelineEvents = 3
        let report = try t.store.reading { try LedgerReport.make(snapshot: $0, now: instant("2026-11-05T19:30:00Z"), limits: limits) }
        #expect(report.overview.count == 5)
        #expect(report.details.map { $0.goal.title?.value } == ["Goal 1", "Goal 2"])
        #expect(report.details.allSatisfy { $0.timeline.marks.count == 3 && $0.timeline.totalEvents == 5 })
        let html = report.html
        #expect(html.contains("2 of 5 goals are drawn in full"))
        #expect(html.contains("Showing 3 of 5 events"))
        #expect(report.details.first?.view.streak?.current == 4)
    }

    @Test func escapingKeepsMarkupOutAndTextInvalidInXMLReplaced() {
        #expect(HTMLWriter.escape(#"<a href="x">&'</a>"#) == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;")
        #expect(HTMLWriter.escape("plain text") == "plain text")
        #expect(HTMLWriter.escape("bell\u{7} nul\u{0} c1\u{85} nonchar\u{FFFF}") == "bell\u{FFFD} nul\u{FFFD} c1\u{FFFD} nonchar\u{FFFD}")
        #expect(HTMLWriter.escape("שלום 日本 👋🏽") == "שלום 日本 👋🏽")
    }
}
