import Foundation
import Synchronization

/// A run of consecutive completed periods: the `current` one (it ends with the current period
/// when that is complete, else with the previous one, so an unfinished period does not break it)
/// and the `best` ever.
public struct Streak: Hashable, Sendable {
    /// Completed periods in the current run.
    public var current: Int
    /// The longest run of completed periods (at least `current`).
    public var best: Int

    /// A streak of `current` periods, the best being `best`.
    public init(current: Int, best: Int) {
        self.current = current
        self.best = best
    }
}

/// A goal as one device sees it at one moment: the current period, its value, whether it is
/// complete, and the streak of completed periods.
public struct GoalView: Hashable, Sendable {
    /// The current period of the goal's cadence (cut to the supported days); nil for a one-time
    /// goal, whose every entry counts.
    public var period: Period?
    /// Measurable: the sum of amounts in the period, exact. Outcome: nil (see `completed`).
    public var value: Amount?
    /// Whether the period is complete: the sum reached the target (measurable), or the latest
    /// entry says completed (outcome).
    public var completed: Bool
    /// Consecutive completed periods: `current` ends with the current period if it is complete,
    /// else with the previous one; `best` is the longest run. Nil for a one-time goal.
    public var streak: Streak?

    /// The entries that count for a goal's views: those of its progress kind (entries of the
    /// other kind are possible only from another device's malformed history).
    static func countedEntries(of goal: GoalState) -> [ProgressEntry] {
        let kind = goal.kind
        return goal.entries.filter { kind == .measurable ? $0.amount != nil : $0.completed != nil }
    }

    /// The value and completion of a set of entries (one period's, or one day's): measurable, the
    /// exact sum (``Amount``: in millionths, whatever the entries' order) against the target;
    /// outcome, whether the latest entry (by `occurredAt`, then canonical order) says completed.
    static func summarize(_ entries: [ProgressEntry], kind: ProgressKind, target: Amount) -> (value: Amount?, completed: Bool) {
        switch kind {
        case .measurable:
            let sum = Amount.sum(entries.lazy.compactMap(\.amount))
            return (sum, sum >= target)
        case .outcome:
            let latest = entries.max { a, b in a.occurredAt != b.occurredAt ? a.occurredAt < b.occurredAt : a.key < b.key }
            return (nil, latest?.completed ?? false)
        }
    }

    init(period: Period?, value: Amount?, completed: Bool, streak: Streak?) {
        self.period = period
        self.value = value
        self.completed = completed
        self.streak = streak
    }

    /// The view of `goal` at `now` in `calendar`.
    public init(goal: GoalState, calendar: DeviceCalendar, now: Instant) {
        let cadence = goal.cadence?.value ?? .once
        let kind = goal.kind
        let target = (goal.target?.value ?? nil) ?? Amount.zero
        let entries = Self.countedEntries(of: goal)
        func summarize(_ entries: [ProgressEntry]) -> (value: Amount?, completed: Bool) {
            Self.summarize(entries, kind: kind, target: target)
        }

        let today = calendar.day(of: now)
        guard let current = cadence.period(containing: today, firstWeekday: calendar.firstWeekday) else {
            let s = summarize(entries)
            self.period = nil
            self.value = s.value
            self.completed = s.completed
            self.streak = nil
            return
        }
        var byPeriod: [Day: [ProgressEntry]] = [:]
        for e in entries {
            let p = cadence.period(containing: e.day, firstWeekday: calendar.firstWeekday)!
            byPeriod[p.start, default: []].append(e)
        }
        let completedStarts = Set(byPeriod.compactMap { start, es in summarize(es).completed ? start : nil })
        let s = summarize(byPeriod[current.start] ?? [])
        // Weeks around the ends of the supported range are shown cut to it.
        self.period = Period(start: max(current.start, Day.supported.lowerBound), end: min(current.end, Day.supported.upperBound))
        self.value = s.value
        self.completed = s.completed

        func previous(_ start: Day) -> Day {
            cadence.period(containing: start.adding(days: -1), firstWeekday: calendar.firstWeekday)!.start
        }
        // Current streak: ends with the current period if it is complete, else with the previous one.
        var cursor = s.completed ? current.start : previous(current.start)
        var currentRun = 0
        while completedStarts.contains(cursor) {
            currentRun += 1
            cursor = previous(cursor)
        }
        // Best streak: the longest run of consecutive completed periods (future periods, from
        // entries dated ahead, count too: they are facts the user recorded).
        var best = 0
        for start in completedStarts where !completedStarts.contains(previous(start)) {
            var run = 0
            var p: Period? = Period(start: start, end: start)
            while let q = p, completedStarts.contains(q.start) {
                run += 1
                let next = cadence.period(containing: q.start, firstWeekday: calendar.firstWeekday)!.end.adding(days: 1)
                // No period starts after the last supported day.
                p = next > Day.supported.upperBound ? nil : cadence.period(containing: next, firstWeekday: calendar.firstWeekday)
            }
            best = max(best, run)
        }
        self.streak = Streak(current: currentRun, best: max(best, currentRun))
    }

    /// `{"periodStart","periodEnd","value","completed","streak":{"current","best"}}`; an outcome
    /// goal's `value` is `completed`, a one-time goal's period and streak are null.
    public var json: JSONValue {
        .object([
            ("periodStart", period.map { .string($0.start.description) } ?? .null),
            ("periodEnd", period.map { .string($0.end.description) } ?? .null),
            // Outcome goals have no amount: their period value is whether the period is done.
            ("value", value.map { .amount($0) } ?? .bool(completed)),
            ("completed", .bool(completed)),
            ("streak", streak.map { .object([("current", .number(Double($0.current))), ("best", .number(Double($0.best)))]) } ?? .null),
        ])
    }
}
