import Foundation

/// What a reconciliation pass can report about a goal's reminder.
public enum ReminderIssueKind: String, CaseIterable, Sendable {
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

    public init(requests: [NotificationRequest], overCapacity: [UUID]) {
        self.requests = requests
        self.overCapacity = overCapacity
    }

    static let idPrefix = "goal-reminder-"
    static let sound = "default"

    /// The desired notification table of `device` at `now` for these goals (goals not existing or
    /// deleted produce nothing). When more requests are eligible than the device's capacity, the
    /// soonest to fire are kept (ties by id).
    public static func plan(goals: [GoalState], device: DeviceState, now: Instant) -> ReminderPlan {
        let context = Context(device)
        let eligible = goals.flatMap { requests(for: $0, context, now: now) }.sorted(by: firesBefore)
        let capacity = max(0, context.settings.capacity)
        let dropped = Set(eligible.dropFirst(capacity).map(\.goal))
        return ReminderPlan(
            requests: Array(eligible.prefix(capacity)),
            overCapacity: dropped.sorted { $0.uuidString < $1.uuidString })
    }

    /// Requests one goal would produce, ignoring capacity (used for incremental reconciliation),
    /// sorted as in `plan`.
    public static func requests(for goal: GoalState, device: DeviceState, now: Instant) -> [NotificationRequest] {
        requests(for: goal, Context(device), now: now).sorted(by: firesBefore)
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
        return UUID(uuidString: String(decoding: rest.prefix(uuidLength), as: UTF8.self)) != nil
    }

    static func firesBefore(_ a: NotificationRequest, _ b: NotificationRequest) -> Bool {
        a.nextFireAt != b.nextFireAt ? a.nextFireAt < b.nextFireAt : String.bytesPrecede(a.id, b.id)
    }

    // MARK: The rules

    /// The device's settings, resolved once per plan.
    struct Context {
        var settings: DeviceConfigured
        var calendar: DeviceCalendar
        var timeZone: TimeZone

        init(_ device: DeviceState) {
            settings = device.settings
            calendar = device.calendar
            timeZone = calendar.timeZone
        }

        func instant(_ day: Day, _ time: ReminderTime) -> Instant {
            localInstant(day: day, hour: time.hour, minute: time.minute, timeZone: timeZone)
        }
    }

    /// What an eligible goal's requests are made of.
    struct Subject {
        var goal: GoalState
        var title: String
        var cadence: Cadence
        var targetDate: Day?
        var time: ReminderTime
    }

    /// The one place that decides eligibility: the goal exists, is not deleted and has a
    /// reminder; a one-time goal also has a target date, is not completed, and its fire time is
    /// after `now`. Recurring goals stay eligible whether or not the current period is complete.
    static func subject(of goal: GoalState, _ context: Context, now: Instant) -> Subject? {
        guard goal.exists, !goal.isDeleted, let time = goal.reminder?.value else { return nil }
        let cadence = goal.cadence?.value ?? .once
        let targetDate = goal.targetDate?.value ?? nil
        if cadence == .once {
            guard let targetDate, context.instant(targetDate, time) > now,
                !GoalView(goal: goal, calendar: context.calendar, now: now).completed
            else { return nil }
        }
        return Subject(goal: goal, title: goal.title?.value ?? "", cadence: cadence, targetDate: targetDate, time: time)
    }

    static func requests(for goal: GoalState, _ context: Context, now: Instant) -> [NotificationRequest] {
        guard let subject = subject(of: goal, context, now: now) else { return [] }
        let requests: [NotificationRequest]
        switch context.settings.strategy {
        case .repeating: requests = [repeatingRequest(subject, context, now: now)]
        case .window: requests = windowRequests(subject, context, now: now)
        }
        // A recurring reminder whose next time would fall after 9999 is not planned.
        return requests.filter { Instant.supported.contains($0.nextFireAt) }
    }

    static func request(_ subject: Subject, id: String, trigger: NotificationTrigger, fireAt: Instant, _ context: Context)
        -> NotificationRequest
    {
        NotificationRequest(
            id: id, goal: subject.goal.id, title: subject.title,
            body: ReminderContent.body(
                cadence: subject.cadence, targetDate: subject.cadence == .once ? subject.targetDate : nil,
                locale: context.settings.locale),
            sound: sound, trigger: trigger, nextFireAt: fireAt)
    }

    /// One calendar trigger per goal, matching the cadence's period starts at the reminder time.
    static func repeatingRequest(_ subject: Subject, _ context: Context, now: Instant) -> NotificationRequest {
        let (hour, minute) = (subject.time.hour, subject.time.minute)
        let id = idPrefix + subject.goal.id.uuidString
        let kind: NotificationTrigger.Kind
        switch subject.cadence {
        case .once:
            let (y, m, d) = subject.targetDate!.components
            kind = .calendar(year: y, month: m, day: d, weekday: nil, hour: hour, minute: minute)
            let trigger = NotificationTrigger(kind: kind, repeats: false)
            return request(subject, id: id, trigger: trigger, fireAt: context.instant(subject.targetDate!, subject.time), context)
        case .daily: kind = .calendar(year: nil, month: nil, day: nil, weekday: nil, hour: hour, minute: minute)
        case .weekly:
            kind = .calendar(year: nil, month: nil, day: nil, weekday: context.settings.firstWeekday, hour: hour, minute: minute)
        case .monthly: kind = .calendar(year: nil, month: nil, day: 1, weekday: nil, hour: hour, minute: minute)
        case .yearly: kind = .calendar(year: nil, month: 1, day: 1, weekday: nil, hour: hour, minute: minute)
        }
        // The trigger matches exactly the period starts of the cadence; the next one after `now`.
        let firstWeekday = context.settings.firstWeekday
        var day = subject.cadence.periodStart(onOrAfter: context.calendar.day(of: now), firstWeekday: firstWeekday)!
        var fireAt = context.instant(day, subject.time)
        while fireAt <= now {
            day = subject.cadence.periodStart(onOrAfter: day.adding(days: 1), firstWeekday: firstWeekday)!
            fireAt = context.instant(day, subject.time)
        }
        return request(subject, id: id, trigger: NotificationTrigger(kind: kind, repeats: true), fireAt: fireAt, context)
    }

    /// Dated requests for the local days today … today + windowDays − 1: one per period start in
    /// the window (the target date for one-time goals), skipping instants at or before `now` and
    /// periods already completed.
    static func windowRequests(_ subject: Subject, _ context: Context, now: Instant) -> [NotificationRequest] {
        let today = context.calendar.day(of: now)
        let firstWeekday = context.settings.firstWeekday
        var out: [NotificationRequest] = []
        for offset in 0..<max(0, context.settings.windowDays) {
            let day = today.adding(days: offset)
            if subject.cadence == .once {
                guard day == subject.targetDate else { continue }
            } else {
                guard subject.cadence.periodStart(onOrAfter: day, firstWeekday: firstWeekday) == day else { continue }
            }
            let fireAt = context.instant(day, subject.time)
            guard fireAt > now else { continue }
            if subject.cadence != .once {
                // Completion of the period that starts on `day`, seen from within that day (noon:
                // clear of the night-time transitions). One-time goals were checked for eligibility.
                let within = context.instant(day, ReminderTime(hour: 12, minute: 0))
                guard !GoalView(goal: subject.goal, calendar: context.calendar, now: within).completed else { continue }
            }
            out.append(
                request(
                    subject, id: idPrefix + subject.goal.id.uuidString + "-" + day.compactDescription,
                    trigger: NotificationTrigger(kind: .date(fireAt), repeats: false), fireAt: fireAt, context))
        }
        return out
    }
}
