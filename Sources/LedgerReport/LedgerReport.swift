import Foundation
import GoalLedger

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

    /// The limits `ledger report` uses: 24 goals in full, 2,000 overview rows, 120 events per
    /// timeline, 60 fire times per device, 53 weeks.
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
    /// The moment the report describes.
    public var now: Instant
    /// The device's local day at `now`.
    public var today: Day
    /// The ledger's id.
    public var ledger: UUID
    /// The store's event schema (1 or 2).
    public var schema: Int
    /// How many events the store holds (its last log position).
    public var events: UInt64
    /// The overview's rows: live goals first, then deleted ones, by title, then id (or in the
    /// order the goals were selected).
    public var overview: [GoalSummary]
    /// Selected goals left out of the overview by `ReportLimits.overviewGoals`.
    public var overviewOmitted: Int
    /// The goals drawn in full: the first ``ReportLimits/goalsInFull`` of the overview.
    public var details: [GoalDetail]
    /// Selected goals not drawn in full.
    public var detailsOmitted: Int
    /// Every device the ledger knows, and the store's own, sorted by name.
    public var reminders: [DeviceReminders]
    /// The limits the report was gathered with.
    public var limits: ReportLimits

    /// The page's wording for the device's locale.
    package var labels: ReportLabels { ReportLabels.for(locale: device.settings.locale) }
    /// The device's calendar: time zone and first weekday.
    public var calendar: DeviceCalendar { device.calendar }
}

/// One row of the overview.
public struct GoalSummary: Sendable {
    /// The goal's state.
    public var goal: GoalState
    /// The goal at the report's moment in the device's calendar.
    public var view: GoalView
}

/// A goal drawn in full.
public struct GoalDetail: Sendable {
    /// The goal's state.
    public var goal: GoalState
    /// The goal at the report's moment in the device's calendar.
    public var view: GoalView
    /// Its last weeks, day by day.
    public var heatMap: HeatMap
    /// Its last periods (``ReportLimits/periods(_:)`` of its cadence), the oldest first.
    public var periods: [GoalHistory.Point]
    /// Its events on the devices' lanes.
    public var timeline: Timeline
}

/// The last weeks of a goal, one cell per local day, weeks starting on the device's first weekday.
public struct HeatMap: Sendable {
    /// One local day: its value and how strongly it is shaded.
    public struct Cell: Sendable {
        /// The day's progress.
        public var point: GoalHistory.Point
        /// 0 (no progress) … 4 (the day reached the goal's target, or the day's outcome was
        /// completed); measurable days in between by their share of the target (daily goals) or
        /// of the largest day shown (other cadences).
        public var level: Int
        /// The local day.
        public var day: Day { point.period.start }
        /// The week column (0 = the oldest).
        public var column: Int
        /// The row (0 = the device's first weekday).
        public var row: Int
    }

    /// A month label above the first column holding its first day.
    public struct MonthLabel: Sendable {
        /// The week column it stands above.
        public var column: Int
        /// The month's year.
        public var year: Int
        /// The month (1 = January).
        public var month: Int
    }

    /// The first day drawn (the first weekday of the oldest week, or the earliest supported day).
    public var firstDay: Day
    /// The last day drawn: today.
    public var lastDay: Day
    /// The number of week columns.
    public var weeks: Int
    /// One cell per day from `firstDay` through `lastDay`, in order.
    public var cells: [Cell]
    /// The month labels, left to right.
    public var months: [MonthLabel]
    /// The weekday (1 = Sunday) of each row.
    public var rowWeekdays: [Int]

    static func make(goal: GoalState, calendar: DeviceCalendar, today: Day, weeks: Int) -> HeatMap {
        let week = Cadence.weekly.period(containing: today, firstWeekday: calendar.firstWeekday)!
        let first = max(week.start.adding(days: -7 * (weeks - 1)), Day.supported.lowerBound)
        let points = GoalHistory.days(of: goal, from: first, through: today)
        let daily = goal.cadence?.value == .daily
        // Shades are drawn in Doubles; the values the page prints are exact.
        let target = (goal.target?.value ?? nil)?.doubleValue ?? 0
        let largest = points.compactMap(\.value).max()?.doubleValue ?? 0
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
                level = v > .zero && scale > 0 ? min(3, 1 + Int(v.doubleValue / scale * 3)) : 1
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
        /// One per kind of event: `created`, `edited`, `deleted`, `restored` (the goal),
        /// `progress` (recorded), `removed` (a progress entry), `tag` (added or removed),
        /// `reminder` (set or cleared), `history` (`progressHistoryReplaced`, schema 1), `device`
        /// (configured, authorization, enrolled, revoked).
        case created, edited, deleted, restored, progress, removed, tag, reminder, history, device
    }

    /// One event on its device's lane, with the audit that explains it.
    public struct Mark: Sendable {
        /// The event and what it changed.
        public var step: AuditStep
        /// Its kind, which decides the mark's shape.
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
        /// The overwritten write, or the change made without seeing the deletion.
        public var from: UUID
        /// The winning write, or the deletion.
        public var to: UUID
        /// The field written (`deleted` for a deletion).
        public var field: String
        /// Whether `to` is a deletion.
        public var deletion: Bool
    }

    /// The devices with a mark, one lane each, sorted by name.
    public var lanes: [String]
    /// The wall time of the earliest mark.
    public var start: Instant
    /// The wall time of the latest mark.
    public var end: Instant
    /// In canonical order.
    public var marks: [Mark]
    /// The links between marks drawn.
    public var links: [Link]
    /// How many events the goal has.
    public var totalEvents: Int
    /// Events not drawn (``ReportLimits/timelineEvents``).
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
                links.append(Link(from: o.event, to: c.winner.event, field: c.field.rawValue, deletion: c.field == .deleted))
                if c.field == .deleted { kept.insert(o.event) } else { losers.insert(o.event) }
            }
            if c.field != .deleted { winners.insert(c.winner.event) }
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

    /// The event's kind (see `EventType.timelineKind`).
    static func kind(of e: Event) -> Kind { e.type.timelineKind }
}

extension EventType {
    /// The event's kind on the report's timeline. Every type is listed, with no default: a new
    /// event type does not compile until it is given a kind here.
    public var timelineKind: Timeline.Kind {
        switch self {
        case .goalCreated: .created
        case .goalEdited, .goalMoved: .edited
        case .goalDeleted: .deleted
        case .goalRestored: .restored
        case .reminderSet, .reminderCleared: .reminder
        case .progressRecorded: .progress
        case .progressRemoved: .removed
        case .tagAdded, .tagRemoved: .tag
        case .progressHistoryReplaced: .history
        case .deviceConfigured, .notificationAuthorization, .deviceEnrolled, .deviceRevoked: .device
        }
    }
}

/// The reminders one device should hold at `now`, and when they fire over the next seven days.
public struct DeviceReminders: Sendable {
    /// The device.
    public var device: DeviceState
    /// Its notification table at `now`, for every goal.
    public var plan: ReminderPlan
    /// The fire times of the selected goals' requests over the next seven days, at most
    /// ``ReportLimits/remindersPerDevice``.
    public var upcoming: [UpcomingReminder]
    /// Fire times left out by `ReportLimits.remindersPerDevice`.
    public var omitted: Int
}

extension LedgerReport {
    /// Gathers a report from `snapshot` for `device`'s calendar (default: the store's own) at
    /// `now`, about `goals` (default: every goal; unknown ids are refused, naming the first).
    ///
    ///     let report = try store.read { try LedgerReport.make(snapshot: $0, now: now) }
    public static func make(
        snapshot store: borrowing LedgerSnapshot, device name: String? = nil, goals selected: [UUID]? = nil, now: Instant,
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
