import Foundation

/// What a reconciliation pass can report about a goal's reminder.
public enum ReminderIssueKind: String, CaseIterable, Sendable {
    /// `permissionDenied`: the device denied notifications, so the goal's reminder is not shown;
    /// `schedulingFailure`: the center refused the goal's request (tried again next pass);
    /// `overCapacity`: the goal lost a request to the device's capacity.
    case permissionDenied, schedulingFailure, overCapacity
}

/// The notification table a device should hold: a pure function of the goals' facts, the
/// device's settings and a moment. Authorization is not considered here; the reconciler decides
/// what to do with the plan for each authorization status.
public struct ReminderPlan: Equatable, Sendable {
    /// Sorted by `nextFireAt`, then `id`.
    public var requests: [NotificationRequest]
    /// Goals that lost at least one request to the device's capacity, sorted by `uuidString`.
    public var overCapacity: [UUID]

    /// A plan of these requests and goals over capacity (as given: not sorted here).
    public init(requests: [NotificationRequest], overCapacity: [UUID]) {
        self.requests = requests
        self.overCapacity = overCapacity
    }

    static let idPrefix = "goal-reminder-"
    static let sound = "default"

    /// The desired notification table of `device` at `now` for these goals (goals not existing or
    /// deleted produce nothing; reminders routed elsewhere, by `routing`, neither). When more
    /// requests are eligible than the device's capacity, the soonest to fire are kept (ties by id).
    ///
    /// The goals must carry their entries. This is the computation the stored pending table
    /// (`LedgerStore.pendingPlan`) is checked against.
    public static func plan(
        goals: [GoalState], device: DeviceState, now: Instant, routing: ReminderRouting = ReminderRouting(authorizedDevices: [])
    ) -> ReminderPlan {
        let context = Context(device)
        var rows: [PendingRow] = []
        var states: [UUID: GoalState] = [:]
        for g in goals {
            guard let facts = ReminderFacts(g), let row = row(facts, context, routing: routing, device: device.name) else { continue }
            rows.append(row)
            states[g.id] = g
        }
        return plan(rows: rows, context, now: now) { row, within in
            GoalView(goal: states[row.facts.goal]!, calendar: context.calendar, now: within).completed
        }
    }

    /// The plan from a device's table rows: each row expanded at `now`, then ranked and capped.
    static func plan(rows: [PendingRow], _ context: Context, now: Instant, periodCompleted: PeriodCompletion) -> ReminderPlan {
        var eligible: [NotificationRequest] = []
        for row in rows { eligible += expand(row, context, now: now, periodCompleted: periodCompleted) }
        eligible.sort(by: firesBefore)
        let capacity = max(0, context.settings.capacity)
        let dropped = Set(eligible.dropFirst(capacity).map(\.plannedGoal))
        return ReminderPlan(
            requests: Array(eligible.prefix(capacity)),
            // By bytes: the order of their upper-case strings, without formatting a string per comparison.
            overCapacity: dropped.sorted(by: UUID.precedes))
    }

    /// Requests one goal would produce, ignoring capacity and routing, sorted as in `plan`. The
    /// goal must carry its entries.
    public static func requests(for goal: GoalState, device: DeviceState, now: Instant) -> [NotificationRequest] {
        let context = Context(device)
        guard let facts = ReminderFacts(goal), let row = row(facts, context, routing: ReminderRouting(authorizedDevices: []), device: nil)
        else { return [] }
        return expand(row, context, now: now) { _, within in GoalView(goal: goal, calendar: context.calendar, now: within).completed }
            .sorted(by: firesBefore)
    }

    /// True for the ids this policy produces, `goal-reminder-<UUID>` and
    /// `goal-reminder-<UUID>-<8 digits>`: the requests a reconciler may cancel.
    public static func isGoalReminderID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        let prefix = Array(idPrefix.utf8)
        guard bytes.starts(with: prefix) else { return false }
        let rest = bytes[prefix.count...]
        let uuidLength = 36
        switch rest.count {
        case uuidLength:
            break
        case uuidLength + 9:
            let suffix = rest.dropFirst(uuidLength)
            guard suffix.first == UInt8(ascii: "-"),
                suffix.dropFirst().allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { return false }
        default:
            return false
        }
        return UUID.parse(String(decoding: rest.prefix(uuidLength), as: UTF8.self)) != nil
    }

    static func firesBefore(_ a: NotificationRequest, _ b: NotificationRequest) -> Bool {
        a.plannedFireAt != b.plannedFireAt ? a.plannedFireAt < b.plannedFireAt : String.bytesPrecede(a.id, b.id)
    }

    // MARK: The rules

    /// The device's settings, resolved once per plan.
    struct Context {
        var settings: DeviceConfigured
        var calendar: DeviceCalendar
        var timeZone: TimeZone

        /// The instants `instant` found, by day and time: a plan asks for the same few of them
        /// once per goal, and each costs several time-zone lookups.
        private final class Instants {
            var found: [Int64: Instant] = [:]
        }
        private let instants = Instants()

        init(_ device: DeviceState) {
            settings = device.settings
            calendar = device.calendar
            timeZone = calendar.timeZone
        }

        /// The weekday a weekly reminder falls on: the one chosen with its time, else the
        /// device's first weekday. Its days are the period starts of weeks that begin on it,
        /// which is how both strategies find them (other cadences do not read it).
        func reminderWeekday(_ facts: ReminderFacts) -> Int {
            // A stored value the gate let through is 1…7; anything else falls back, never traps.
            guard let chosen = facts.time.weekday, (1...7).contains(chosen) else { return settings.firstWeekday }
            return chosen
        }

        func instant(_ day: Day, _ time: ReminderTime) -> Instant {
            let key = Int64(day.daysSinceEpoch) << 16 | Int64(time.hour * 60 + time.minute)
            if let known = instants.found[key] { return known }
            let instant = localInstant(day: day, hour: time.hour, minute: time.minute, timeZone: timeZone)
            instants.found[key] = instant
            return instant
        }
    }

    /// Whether the period of a row's goal that contains the instant (noon of the period's first
    /// day) is complete: asked by the window strategy only.
    typealias PeriodCompletion = (_ row: PendingRow, _ within: Instant) -> Bool

    /// The row a goal's reminder facts give a device, or nil when the device should hold nothing
    /// for it at any moment: a one-time goal without a target date or already completed, or a
    /// reminder routed to other devices (`device` nil: routing is not considered).
    static func row(_ facts: ReminderFacts, _ context: Context, routing: ReminderRouting, device: String?) -> PendingRow? {
        if facts.cadence == .once, facts.targetDate == nil || facts.completed { return nil }
        if let device, !routing.routes(facts.devices, to: device) { return nil }
        let (hour, minute) = (facts.time.hour, facts.time.minute)
        var row = PendingRow(
            facts: facts, id: idPrefix + facts.goal.upperString, strategy: context.settings.strategy,
            body: ReminderContent.body(
                cadence: facts.cadence, targetDate: facts.cadence == .once ? facts.targetDate : nil, locale: context.settings.locale),
            trigger: nil, fireAt: facts.cadence == .once ? context.instant(facts.targetDate!, facts.time) : nil)
        guard row.strategy == .repeating else { return row }
        let kind: NotificationTrigger.Kind
        switch facts.cadence {
        case .once:
            let (y, m, d) = facts.targetDate!.components
            kind = .calendar(year: y, month: m, day: d, weekday: nil, hour: hour, minute: minute)
        case .daily: kind = .calendar(year: nil, month: nil, day: nil, weekday: nil, hour: hour, minute: minute)
        case .weekly:
            kind = .calendar(year: nil, month: nil, day: nil, weekday: context.reminderWeekday(facts), hour: hour, minute: minute)
        case .monthly: kind = .calendar(year: nil, month: nil, day: 1, weekday: nil, hour: hour, minute: minute)
        case .yearly: kind = .calendar(year: nil, month: 1, day: 1, weekday: nil, hour: hour, minute: minute)
        }
        row.trigger = NotificationTrigger(kind: kind, repeats: facts.cadence != .once)
        return row
    }

    /// The requests a row asks for at `now`: the moment-dependent half of eligibility (a
    /// one-time fire time must be after `now`), the repeating trigger's next fire time, or the
    /// window's dated requests.
    static func expand(_ row: PendingRow, _ context: Context, now: Instant, periodCompleted: PeriodCompletion) -> [NotificationRequest] {
        if let fireAt = row.fireAt, fireAt <= now { return [] }
        let requests: [NotificationRequest]
        switch row.strategy {
        case .repeating: requests = [repeatingRequest(row, context, now: now)]
        case .window: requests = windowRequests(row, context, now: now, periodCompleted: periodCompleted)
        }
        // A recurring reminder whose next time would fall after 9999 is not planned.
        return requests.filter { Instant.supported.contains($0.plannedFireAt) }
    }

    static func request(_ row: PendingRow, id: String, trigger: NotificationTrigger, fireAt: Instant) -> NotificationRequest {
        NotificationRequest(
            id: id, goal: row.facts.goal, title: row.facts.title, body: row.body, sound: sound, trigger: trigger, nextFireAt: fireAt)
    }

    /// One calendar trigger per goal, matching the cadence's period starts at the reminder time.
    static func repeatingRequest(_ row: PendingRow, _ context: Context, now: Instant) -> NotificationRequest {
        let trigger = row.trigger!
        if let fireAt = row.fireAt { return request(row, id: row.id, trigger: trigger, fireAt: fireAt) }
        // The trigger matches exactly the period starts of the cadence (weeks starting on the
        // reminder's weekday); the next one after `now`.
        let cadence = row.facts.cadence
        let firstWeekday = context.reminderWeekday(row.facts)
        var day = cadence.periodStart(onOrAfter: context.calendar.day(of: now), firstWeekday: firstWeekday)!
        var fireAt = context.instant(day, row.facts.time)
        while fireAt <= now {
            day = cadence.periodStart(onOrAfter: day.adding(days: 1), firstWeekday: firstWeekday)!
            fireAt = context.instant(day, row.facts.time)
        }
        return request(row, id: row.id, trigger: trigger, fireAt: fireAt)
    }

    /// Dated requests for the local days today … today + windowDays − 1: one per period start in
    /// the window (the target date for one-time goals; a weekly goal's reminder weekday), skipping
    /// instants at or before `now` and periods already completed.
    static func windowRequests(_ row: PendingRow, _ context: Context, now: Instant, periodCompleted: PeriodCompletion)
        -> [NotificationRequest]
    {
        let today = context.calendar.day(of: now)
        // The days are matched against weeks starting on the reminder's weekday; completion is
        // still of the goal's own period (the device's week), through `periodCompleted`.
        let firstWeekday = context.reminderWeekday(row.facts)
        let cadence = row.facts.cadence
        var out: [NotificationRequest] = []
        for offset in 0..<max(0, context.settings.windowDays) {
            let day = today.adding(days: offset)
            if cadence == .once {
                guard day == row.facts.targetDate else { continue }
            } else {
                guard cadence.periodStart(onOrAfter: day, firstWeekday: firstWeekday) == day else { continue }
            }
            let fireAt = context.instant(day, row.facts.time)
            guard fireAt > now else { continue }
            if cadence != .once {
                // Completion of the period that contains `day` (it starts there, except for a weekly
                // reminder on a chosen weekday), seen from within that day (noon: clear of the
                // night-time transitions). One-time goals were checked for eligibility.
                guard !periodCompleted(row, context.instant(day, ReminderTime(unchecked: 12, 0))) else { continue }
            }
            out.append(
                request(
                    row, id: row.id + "-" + day.compactDescription, trigger: NotificationTrigger(kind: .date(fireAt), repeats: false),
                    fireAt: fireAt))
        }
        return out
    }
}
