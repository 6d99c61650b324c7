import Foundation

/// What a goal's reminder depends on, for every device and at every moment: the pending tables
/// are computed from these facts and the devices' settings, never from the goal's events.
///
/// A goal has facts while it exists, is not deleted and has a reminder. `completed` is the
/// all-time completion of a one-time goal with a target date (it cancels the reminder); it does
/// not depend on a calendar or a moment. Recurring goals keep `completed` false: whether one of
/// their periods is complete matters only to the window strategy, at read time.
package struct ReminderFacts: Equatable, Sendable {
    public var goal: UUID
    public var title: String
    public var cadence: Cadence
    public var targetDate: Day?
    public var time: ReminderTime
    /// The devices the reminder is routed to; nil: every device.
    public var devices: [String]?
    public var kind: ProgressKind
    public var target: Amount?
    public var completed: Bool

    /// Whether the facts of this goal need its entries (a one-time goal's completion): the
    /// stored projection then reads them, for such goals only.
    static func needsEntries(_ goal: GoalState) -> Bool {
        goal.exists && !goal.isDeleted && (goal.reminder?.value ?? nil) != nil && (goal.cadence?.value ?? .once) == .once
            && (goal.targetDate?.value ?? nil) != nil
    }

    /// The facts of `goal`, nil when it produces no reminder on any device. `goal` must carry its
    /// entries when `needsEntries(goal)`.
    init?(_ goal: GoalState) {
        guard goal.exists, !goal.isDeleted, let time = goal.reminder?.value ?? nil else { return nil }
        self.goal = goal.id
        title = goal.title?.value ?? ""
        cadence = goal.cadence?.value ?? .once
        targetDate = goal.targetDate?.value ?? nil
        self.time = time
        devices = goal.reminderDevices?.value ?? nil
        kind = goal.kind
        target = goal.target?.value ?? nil
        // A one-time goal's period is all time: neither the calendar nor the moment matters.
        completed = Self.needsEntries(goal) && GoalView(goal: goal, calendar: Self.anyCalendar, now: Instant(milliseconds: 0)).completed
    }

    init(
        goal: UUID, title: String, cadence: Cadence, targetDate: Day?, time: ReminderTime, devices: [String]?,
        kind: ProgressKind, target: Amount?, completed: Bool
    ) {
        self.goal = goal
        self.title = title
        self.cadence = cadence
        self.targetDate = targetDate
        self.time = time
        self.devices = devices
        self.kind = kind
        self.target = target
        self.completed = completed
    }

    static let anyCalendar = DeviceCalendar(timeZoneIdentifier: "UTC", firstWeekday: 1)

    /// A goal state holding what a period's completion needs (kind, target, cadence) and
    /// `entries`: `GoalView` then decides completion exactly as it does for the whole goal.
    func completionState(recorded: [ProgressEntry], removed: Set<UUID>) -> GoalState {
        var g = GoalState(id: goal)
        let stamp = Stamp(key: CanonicalKey(hlc: HLC(rawValue: 0), device: ""), event: goal)
        g.progressKind = Register(kind, stamp)
        g.target = Register(target, stamp)
        g.cadence = Register(cadence, stamp)
        g.recordedEntries.reserveCapacity(recorded.count)
        for e in recorded { g.recordedEntries.record(e) }
        g.removedEntries = removed
        return g
    }
}

/// One row of a device's pending table: the request a goal asks of that device, independent of
/// the moment. What depends on the moment (whether a one-time fire time has passed, the next
/// fire time of a repeating trigger, the window's dated requests, the capacity ranking) is
/// applied when the table is read (`ReminderPlan.expand`).
package struct PendingRow: Equatable, Sendable {
    public var facts: ReminderFacts
    /// `goal-reminder-<GOAL>`: the request id of the repeating strategy, the prefix of the window's.
    public var id: String
    public var strategy: NotificationStrategy
    /// The localized body (the device's locale).
    public var body: String
    /// The repeating strategy's trigger.
    public var trigger: NotificationTrigger?
    /// One-time goals: the target date at the reminder time in the device's time zone.
    public var fireAt: Instant?
}
