import Foundation

/// How much of a large ledger a report draws. What is left out is counted, and the page says so.
public struct ReportLimits: Equatable, Sendable {
    /// Goals drawn in full (heat map, period chart, timeline, table); the others appear in the
    /// overview only.
    public var goalsInFull = 24
    /// Rows of the overview.
    public var overviewGoals = 2_000
    /// Events drawn on one goal's timeline and listed in its table (conflicts and recovered
    /// entries first, then the latest).
    public var timelineEvents = 120
    /// Fire times listed per device.
    public var remindersPerDevice = 60
    /// Weeks of the calendar heat map.
    public var weeks = 53

    public init() {}

    /// How many periods the chart of a cadence shows.
    public func periods(_ cadence: Cadence) -> Int {
        switch cadence {
        case .once: return 1
        case .daily: return 30
        case .weekly: return 26
        case .monthly: return 12
        case .yearly: return 10
        }
    }
}

/// Everything `ledger report` draws, gathered from the stored projection and the log through the
/// library's own views (`GoalView`, `GoalHistory`, `GoalAudit`, `GoalConflicts`, `ReminderPlan`),
/// for one device's calendar and one moment. The page only lays these values out.
public struct LedgerReport: Sendable {
    /// The device whose calendar, first weekday and locale the report uses.
    public var device: DeviceState
    public var now: Instant
    public var today: Day
    public var ledger: UUID
    public var schema: Int
    public var events: UInt64
    public var overview: [GoalSummary]
    /// Selected goals left out of the overview by `ReportLimits.overviewGoals`.
    public var overviewOmitted: Int
    public var details: [GoalDetail]
    /// Selected goals not drawn in full.
    public var detailsOmitted: Int
    public var reminders: [DeviceReminders]
    public var limits: ReportLimits

    public var labels: ReportLabels { ReportLabels.for(locale: device.settings.locale) }
    public var calendar: DeviceCalendar { device.calendar }
}

/// One row of the overview.
public struct GoalSummary: Sendable {
    public var goal: GoalState
    public var view: GoalView
}

/// A goal drawn in full.
public struct GoalDetail: Sendable {
    public var goal: GoalState
    public var view: GoalView
    public var heatMap: HeatMap
    public var periods: [GoalHistory.Point]
    public var timeline: Timeline
}

/// The last weeks of a goal, one cell per local day, weeks starting on the device's first weekday.
public struct HeatMap: Sendable {
    /// One local day: its value and how strongly it is shaded.
    public struct Cell: Sendable {
        public var point: GoalHistory.Point
        /// 0 (no progress) … 4 (the day reached the goal's target, or the day's outcome was
        /// completed); measurable days in between by their share of the target (daily goals) or
        /// of the largest day shown (other cadences).
        public var level: Int
        public var day: Day { point.period.start }
        /// The week column (0 = the oldest) and the row (0 = the device's first weekday).
        public var column: Int
        public var row: Int
    }

    /// A month label above the first column holding its first day.
    public struct MonthLabel: Sendable {
        public var column: Int
        public var year: Int
        public var month: Int
    }

    public var firstDay: Day
    public var lastDay: Day
    public var weeks: Int
    public var cells: [Cell]
    public var months: [MonthLabel]
    /// The weekday (1 = Sunday) of each row.
    public var rowWeekdays: [Int]

    static func make(goal: GoalState, calendar: DeviceCalendar, today: Day, weeks: Int) -> HeatMap {
        let week = Cadence.weekly.period(containing: today, firstWeekday: calendar.firstWeekday)!
        let first = max(week.start.adding(days: -7 * (weeks - 1)), Day.supported.lowerBound)
        let points = GoalHistory.days(of: goal, from: first, through: today)
        let daily = goal.cadence?.value == .daily
        let target = (goal.target?.value ?? nil) ?? 0
        let largest = points.compactMap(\.value).max() ?? 0
        let scale = daily && target > 0 ? target : largest
        let origin = week.start.adding(days: -7 * (weeks - 1))
        var cells: [Cell] = []
        cells.reserveCapacity(points.count)
        var months: [MonthLabel] = []
        for p in points {
            let offset = Int(p.period.start.daysSinceEpoch - origin.daysSinceEpoch)
            let level: Int
            if p.entries == 0 {
                level = 0
            } else if p.completed {
                level = 4
            } else if let v = p.value {
                level = v > 0 && scale > 0 ? min(3, 1 + Int(v / scale * 3)) : 1
            } else {
                level = 1
            }
            let cell = Cell(point: p, level: level, column: offset / 7, row: offset % 7)
            cells.append(cell)
            let (y, m, d) = p.period.start.components
            if d == 1 { months.append(MonthLabel(column: cell.column, year: y, month: m)) }
        }
        // The first month is labelled too when its own label would not crowd the next one.
        if let c = cells.first, c.point.period.start.components.day != 1, (months.first?.column ?? weeks) >= 3 {
            let (y, m, _) = c.point.period.start.components
            months.insert(MonthLabel(column: 0, year: y, month: m), at: 0)
        }
        let rowWeekdays = (0..<7).map { (calendar.firstWeekday - 1 + $0) % 7 + 1 }
        return HeatMap(firstDay: first, lastDay: today, weeks: weeks, cells: cells, months: months, rowWeekdays: rowWeekdays)
    }
}

/// A goal's history as lanes of devices: every event at its wall time, marked by kind.
public struct Timeline: Sendable {
    /// What an event did, which decides its mark's shape.
    public enum Kind: String, CaseIterable, Sendable {
        case created, edited, deleted, restored, progress, removed, tag, reminder, history, device
    }

    /// One event on its device's lane, with the audit that explains it.
    public struct Mark: Sendable {
        public var step: AuditStep
        public var kind: Kind
        /// The lane (index into `lanes`).
        public var lane: Int
        /// Won a concurrent edit of a field (the other writes are joined to it).
        public var winner: Bool
        /// Lost a concurrent edit: its value was overwritten by a write its author had not seen.
        public var overwritten: Bool
        /// A change its author made without having seen a deletion: kept in the history, back
        /// with a restore.
        public var keptAfterDelete: Bool
        /// Entries of this schema-1 history write that the schema-1 view had lost and migration
        /// brought back.
        public var recovered: [UUID]
        /// The changes an event made, each field before and after (for the tooltip and the table).
        public var changes: [AuditChange] { step.changes }
    }

    /// Two events joined on the timeline: concurrent writes of one field (to the winner), or a
    /// change made without having seen a deletion (to the deletion).
    public struct Link: Sendable {
        public var from: UUID
        public var to: UUID
        public var field: String
        public var deletion: Bool
    }

    public var lanes: [String]
    public var start: Instant
    public var end: Instant
    /// In canonical order.
    public var marks: [Mark]
    public var links: [Link]
    public var totalEvents: Int
    public var omitted: Int { totalEvents - marks.count }

    static func make(events: [(position: UInt64, event: Event)], limit: Int) -> Timeline {
        let steps = GoalAudit.steps(events)
        let conflicts = GoalConflicts.find(events.map(\.event))
        var winners = Set<UUID>()
        var losers = Set<UUID>()
        var kept = Set<UUID>()
        var links: [Link] = []
        for c in conflicts {
            for o in c.overwritten {
                links.append(Link(from: o.event, to: c.winner.event, field: c.field, deletion: c.field == "deleted"))
                if c.field == "deleted" { kept.insert(o.event) } else { losers.insert(o.event) }
            }
            if c.field != "deleted" { winners.insert(c.winner.event) }
        }
        // Conflicts and recoveries are what a reader looks for: they are always drawn; the
        // latest of the other events fill the rest.
        let notable = steps.indices.filter { i in
            let id = steps[i].event.id
            return winners.contains(id) || losers.contains(id) || kept.contains(id) || !steps[i].recovered.isEmpty
                || links.contains { $0.to == id }
        }
        var chosen = Set(notable.prefix(limit))
        for i in steps.indices.reversed() where chosen.count < limit { chosen.insert(i) }
        let shown = steps.indices.filter { chosen.contains($0) }.map { steps[$0] }
        let lanes = Set(shown.map(\.event.origin)).sorted(by: String.bytesPrecede)
        let laneIndex = Dictionary(uniqueKeysWithValues: lanes.enumerated().map { ($1, $0) })
        let marks = shown.map { s in
            Mark(
                step: s, kind: kind(of: s.event), lane: laneIndex[s.event.origin]!, winner: winners.contains(s.event.id),
                overwritten: losers.contains(s.event.id), keptAfterDelete: kept.contains(s.event.id), recovered: s.recovered)
        }
        let ids = Set(marks.map(\.step.event.id))
        let times = marks.map(\.step.event.at)
        return Timeline(
            lanes: lanes, start: times.min() ?? .earliest, end: times.max() ?? .earliest, marks: marks,
            links: links.filter { ids.contains($0.from) && ids.contains($0.to) }, totalEvents: steps.count)
    }

    /// The event's kind, as its payload type says (`EventPayload.timelineKind`).
    static func kind(of e: Event) -> Kind { e.payload.body.timelineKind(as: e.type) }
}

/// The reminders one device should hold at `now`, and when they fire over the next seven days.
public struct DeviceReminders: Sendable {
    public var device: DeviceState
    public var plan: ReminderPlan
    public var upcoming: [UpcomingReminder]
    /// Fire times left out by `ReportLimits.remindersPerDevice`.
    public var omitted: Int
}

extension LedgerReport {
    /// Gathers a report from `store` for `device`'s calendar (default: the store's own) at `now`,
    /// about `goals` (default: every goal; unknown ids are refused, naming the first).
    public static func make(
        store: LedgerStore, device name: String? = nil, goals selected: [UUID]? = nil, now: Instant,
        limits: ReportLimits = ReportLimits()
    ) throws(LedgerError) -> LedgerReport {
        let projection = try store.projection()
        let deviceName = name ?? store.device
        guard deviceName == store.device || projection.devices[deviceName] != nil else {
            throw LedgerError(.invalidInput, "unknown device \(deviceName): this ledger holds no events from it")
        }
        let device = projection.device(deviceName)
        let calendar = device.calendar
        let today = calendar.day(of: now)

        var goals: [GoalState]
        if let selected {
            goals = []
            for id in selected where !goals.contains(where: { $0.id == id }) {
                guard let g = projection.goals[id], g.exists else { throw LedgerError(.invalidInput, "unknown goal \(id.uuidString)") }
                goals.append(g)
            }
        } else {
            // Live goals first, then deleted ones; by title (UTF-8 bytes), then id.
            goals = projection.existingGoals.sorted { a, b in
                if a.isDeleted != b.isDeleted { return !a.isDeleted }
                let (ta, tb) = (a.title?.value ?? "", b.title?.value ?? "")
                return ta != tb ? String.bytesPrecede(ta, tb) : UUID.precedes(a.id, b.id)
            }
        }

        let overview = goals.prefix(limits.overviewGoals).map {
            GoalSummary(goal: $0, view: GoalView(goal: $0, calendar: calendar, now: now))
        }
        var details: [GoalDetail] = []
        for summary in overview.prefix(limits.goalsInFull) {
            let g = summary.goal
            details.append(
                GoalDetail(
                    goal: g, view: summary.view, heatMap: HeatMap.make(goal: g, calendar: calendar, today: today, weeks: limits.weeks),
                    periods: GoalHistory.periods(of: g, calendar: calendar, now: now, count: limits.periods(g.cadence?.value ?? .once)),
                    timeline: Timeline.make(events: try store.events(ofGoal: g.id), limit: limits.timelineEvents)))
        }

        let wanted = Set(goals.map(\.id))
        let allGoals = projection.existingGoals
        let end = Instant(milliseconds: now.milliseconds + 7 * 86_400_000)
        var deviceNames = Set(projection.devices.keys)
        deviceNames.insert(store.device)
        let reminders = deviceNames.sorted(by: String.bytesPrecede).map { name in
            let d = projection.device(name)
            let plan = ReminderPlan.plan(goals: allGoals, device: d, now: now)
            let upcoming = plan.fireTimes(goals: allGoals.filter { wanted.contains($0.id) }, device: d, now: now, through: end)
            return DeviceReminders(
                device: d, plan: plan, upcoming: Array(upcoming.prefix(limits.remindersPerDevice)),
                omitted: max(0, upcoming.count - limits.remindersPerDevice))
        }

        return LedgerReport(
            device: device, now: now, today: today, ledger: store.ledgerID, schema: store.schema, events: try store.lastPosition(),
            overview: overview, overviewOmitted: goals.count - overview.count, details: details,
            detailsOmitted: goals.count - details.count,
            reminders: reminders, limits: limits)
    }
}
