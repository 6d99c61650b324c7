import Foundation

/// A goal as an app shows it: its current facts as plain typed values, without the registers
/// and stamps the fold keeps (``GoalState`` has those, for audits and conflicts).
public struct Goal: Hashable, Sendable, Identifiable {
    public var id: UUID
    /// The title.
    public var title: String
    /// Free text, or nil for none.
    public var details: String?
    /// How often progress resets.
    public var cadence: Cadence
    /// The day the goal should be reached by, or nil for none.
    public var targetDate: Day?
    /// A completion flag, or an amount against `target`.
    public var progressKind: ProgressKind
    /// For a measurable goal, the amount a period must reach; nil for an outcome goal.
    public var target: Double?
    /// The unit of a measurable goal's amounts, or nil for none.
    public var unit: String?
    /// The reminder time, or nil when the goal has no reminder.
    public var reminder: ReminderTime?
    /// The devices that should notify (nil: every device).
    public var reminderDevices: [String]?
    /// In NFC, sorted by their UTF-8 bytes.
    public var tags: [String]
    /// Whether the goal is deleted (its facts stay; a restore brings it back).
    public var isDeleted: Bool
    /// Live entries in canonical order.
    public var entries: [ProgressEntry]
}

extension GoalState {
    /// The goal's facts as plain values; nil before its `goalCreated` has been folded.
    public var goal: Goal? {
        guard exists else { return nil }
        return Goal(
            id: id, title: title?.value ?? "", details: details?.value ?? nil, cadence: cadence?.value ?? .once,
            targetDate: targetDate?.value ?? nil, progressKind: kind, target: kind == .measurable ? (target?.value ?? nil) : nil,
            unit: unit?.value ?? nil, reminder: reminder?.value ?? nil, reminderDevices: reminderDevices?.value ?? nil, tags: tags,
            isDeleted: isDeleted, entries: entries)
    }
}

/// A goal as a screen shows it: its facts and its view for the store's device at one moment
/// (the device's time zone and first weekday, from its latest `deviceConfigured`).
public struct GoalSnapshot: Hashable, Sendable, Identifiable {
    /// The goal's facts.
    public var goal: Goal
    /// Its current period, the period's value, whether it is complete, and the streak.
    public var view: GoalView

    /// The goal's id.
    public var id: UUID { goal.id }

    /// A snapshot of `goal` with `view`.
    public init(goal: Goal, view: GoalView) {
        self.goal = goal
        self.view = view
    }
}

extension LedgerStore {
    /// One goal's current facts, from the stored projection; nil for a goal the store does not
    /// know (or whose creation has not arrived yet).
    public func goal(_ id: UUID) throws(LedgerError) -> Goal? { try goalState(id).goal }

    /// Every goal with its view for this store's device at `now`, in the order of their ids;
    /// deleted goals only with `includingDeleted`. What a list screen shows.
    public func goals(now: Instant = .systemNow, includingDeleted: Bool = false) throws(LedgerError) -> [GoalSnapshot] {
        let calendar = try deviceState(device).calendar
        var out: [GoalSnapshot] = []
        try forEachGoal { state in
            guard includingDeleted || !state.isDeleted, let goal = state.goal else { return }
            out.append(GoalSnapshot(goal: goal, view: GoalView(goal: state, calendar: calendar, now: now)))
        }
        return out
    }

    /// One goal with its view for this store's device at `now`; nil for a goal the store does
    /// not know. What a detail screen shows.
    public func goal(_ id: UUID, now: Instant) throws(LedgerError) -> GoalSnapshot? {
        let state = try goalState(id)
        guard let goal = state.goal else { return nil }
        return GoalSnapshot(goal: goal, view: GoalView(goal: state, calendar: try deviceState(device).calendar, now: now))
    }
}
