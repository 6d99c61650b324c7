import Foundation

/// A goal's values over time as one device sees them: per local day (for a calendar heat map)
/// and per period of its cadence (for a chart), by the same rules as `GoalView`.
public enum GoalHistory {
    /// The value and completion of a span of days: a day, or a period of the goal's cadence.
    public struct Point: Equatable, Sendable {
        /// The span: one day, or one period (a one-time goal's: its first entry through today).
        public var period: Period
        /// Measurable: the sum of amounts, exact. Outcome: nil (see `completed`).
        public var value: Amount?
        /// Whether the span is complete: its sum reached the target (measurable), or its latest
        /// entry says completed (outcome).
        public var completed: Bool
        /// How many entries fall in the span.
        public var entries: Int
    }

    /// One point per local day from `first` through `last` (both included), each summarizing
    /// the entries of that day alone (completion against the goal's target, or the latest
    /// outcome entry of the day).
    public static func days(of goal: GoalState, from first: Day, through last: Day) -> [Point] {
        guard first <= last else { return [] }
        let target = (goal.target?.value ?? nil) ?? Amount.zero
        var byDay: [Day: [ProgressEntry]] = [:]
        for e in GoalView.countedEntries(of: goal) where e.day >= first && e.day <= last { byDay[e.day, default: []].append(e) }
        var out: [Point] = []
        out.reserveCapacity(Int(last.daysSinceEpoch - first.daysSinceEpoch) + 1)
        var day = first
        while day <= last {
            let entries = byDay[day] ?? []
            let s = GoalView.summarize(entries, kind: goal.kind, target: target)
            out.append(Point(period: Period(start: day, end: day), value: s.value, completed: s.completed, entries: entries.count))
            day = day.adding(days: 1)
        }
        return out
    }

    /// The last `count` periods of the goal's cadence up to and including the one containing
    /// `now`, oldest first (fewer near the start of the supported range). A one-time goal has a
    /// single all-time point.
    public static func periods(of goal: GoalState, calendar: DeviceCalendar, now: Instant, count: Int) -> [Point] {
        let cadence = goal.cadence?.value ?? .once
        let target = (goal.target?.value ?? nil) ?? Amount.zero
        let entries = GoalView.countedEntries(of: goal)
        let today = calendar.day(of: now)
        guard let current = cadence.period(containing: today, firstWeekday: calendar.firstWeekday) else {
            let s = GoalView.summarize(entries, kind: goal.kind, target: target)
            let first = entries.map(\.day).min() ?? today
            return [
                Point(period: Period(start: min(first, today), end: today), value: s.value, completed: s.completed, entries: entries.count)
            ]
        }
        // Newest first, then turned around: each period is added at the end, where inserting
        // at the front moved every period before it (quadratic in `count`).
        var periods = [current]
        while periods.count < count, let earliest = periods.last, earliest.start > Day.supported.lowerBound {
            periods.append(cadence.period(containing: earliest.start.adding(days: -1), firstWeekday: calendar.firstWeekday)!)
        }
        periods.reverse()
        var byStart: [Day: [ProgressEntry]] = [:]
        let first = periods[0].start
        for e in entries where e.day >= first && e.day <= current.end {
            byStart[cadence.period(containing: e.day, firstWeekday: calendar.firstWeekday)!.start, default: []].append(e)
        }
        return periods.map { p in
            let es = byStart[p.start] ?? []
            let s = GoalView.summarize(es, kind: goal.kind, target: target)
            // Periods around the ends of the supported range are cut to it, as in `GoalView`.
            let cut = Period(start: max(p.start, Day.supported.lowerBound), end: min(p.end, Day.supported.upperBound))
            return Point(period: cut, value: s.value, completed: s.completed, entries: es.count)
        }
    }
}
