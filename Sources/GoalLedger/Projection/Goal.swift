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
    public var target: Amount?
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
    /// The wall time `at` of the goal's `goalCreated`.
    public var createdAt: Instant = .earliest
    /// The goal's position key once it has been moved; nil for a goal never moved, which sorts
    /// by its creation. ``LedgerSnapshot/goals(now:includingDeleted:includingEntries:)`` lists
    /// goals in the person's order.
    public var position: PositionKey?
    /// The version of each editable field as read (``version(of:)``).
    var fieldVersions = FieldVersions()
}

extension GoalState {
    /// The goal's facts as plain values; nil before its `goalCreated` has been folded.
    public var goal: Goal? {
        guard exists else { return nil }
        var goal = Goal(id: id, progressKind: kind, tags: tags, entries: entries)
        goal.createdAt = createdAt?.value ?? .earliest
        for register in GoalRegister.allCases { goal.take(register, from: self) }
        goal.fieldVersions = fieldVersions
        return goal
    }
}

extension Goal {
    /// A goal of `id` whose registers hold their defaults, until `take(_:from:)` fills them in.
    init(id: UUID, progressKind: ProgressKind, tags: [String], entries: [ProgressEntry]) {
        self.init(
            id: id, title: "", details: nil, cadence: .once, targetDate: nil, progressKind: progressKind, target: nil, unit: nil,
            reminder: nil, reminderDevices: nil, tags: tags, isDeleted: false, entries: entries)
    }

    /// Sets the members that hold `register` to its value in `state`: a column of the register
    /// table (`GoalState.swift`).
    mutating func take(_ register: GoalRegister, from state: GoalState) {
        switch register {
        case .title: title = state.title?.value ?? ""
        case .details: details = state.details?.value ?? nil
        case .cadence: cadence = state.cadence?.value ?? .once
        case .targetDate: targetDate = state.targetDate?.value ?? nil
        case .target: target = state.kind == .measurable ? (state.target?.value ?? nil) : nil
        case .unit: unit = state.unit?.value ?? nil
        case .reminder:
            reminder = state.reminder?.value ?? nil
            reminderDevices = state.reminderDevices?.value ?? nil
        case .deleted: isDeleted = state.isDeleted
        case .position: position = state.position?.value
        }
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

extension LedgerSnapshot {
    /// One goal's current facts, from the stored projection; nil for a goal the store does not
    /// know (or whose creation has not arrived yet).
    public func goal(_ id: UUID) throws(LedgerError) -> Goal? { try goalState(id).goal }

    /// Every goal with its view for this store's device at `now`, in the person's order
    /// (``GoalState/orderKey``: moved goals by their position, the others by their creation, so
    /// new goals go last), the same on every device that holds the same events; deleted goals
    /// only with `includingDeleted`. What a list screen shows.
    ///
    /// Views are read from what the store keeps with its projection (per goal and day, a
    /// summary of the entries; per goal, its runs of completed periods), not folded from the
    /// entries. With `includingEntries: false`, each goal's ``Goal/entries`` is left empty and
    /// its entries are not read at all: the call then costs the number of goals, not the length
    /// of their histories (a one-time goal's view reads one row per day it has entries).
    public func goals(now: Instant = .systemNow, includingDeleted: Bool = false, includingEntries: Bool = true) throws(LedgerError)
        -> [GoalSnapshot]
    {
        var keys: [GoalOrderKey] = []
        var snapshots: [GoalSnapshot] = []
        // Room for every goal at once: a snapshot is large, and each regrowth would copy them all.
        let count = try run { try txn.count(try txn.activeProjection().goals) }
        keys.reserveCapacity(count)
        snapshots.reserveCapacity(count)
        try forEachGoalView(now: now, includingDeleted: includingDeleted, entries: includingEntries, allTagAdds: false) { state, view in
            if let goal = state.goal, let order = state.orderKey {
                keys.append(order)
                snapshots.append(GoalSnapshot(goal: goal, view: view))
            }
        }
        // The indices are sorted, so that a sort moves integers rather than snapshots with
        // their strings and entries.
        return GoalOrderKey.sortedIndices(keys).map { snapshots[$0] }
    }

    /// One goal with its view for this store's device at `now`; nil for a goal the store does
    /// not know. What a detail screen shows.
    public func goal(_ id: UUID, now: Instant) throws(LedgerError) -> GoalSnapshot? {
        guard let (state, view) = try goalWithView(id, now: now), let goal = state.goal else { return nil }
        return GoalSnapshot(goal: goal, view: view)
    }

    /// Every created goal (deleted ones only with `includingDeleted`), in id order, with its
    /// view for this store's device at `now`, in one read transaction. With `entries: false`
    /// the state is the goal's header only (no entries, version 0).
    /// With `allTagAdds` false, a tag's adds may hold only the first (see
    /// `ProjectionCodec.decodeHeader`): for a caller that shows the goal, not one that reads its
    /// tags' adds.
    package func forEachGoalView(
        now: Instant, includingDeleted: Bool, entries: Bool, allTagAdds: Bool = true, _ body: (GoalState, GoalView) throws -> Void
    ) throws(LedgerError) {
        let rule = historyRule
        try run {
            let t = try txn.activeProjection()
            let calendar = try StoredProjection.device(device, txn, t).calendar
            let revoked = try txn.revocations()
            // The day of `now` and whether the kept views serve this calendar, once for the list.
            let today = calendar.day(of: now)
            let kept = try ViewTables.firstWeekday(txn, t) == calendar.firstWeekday
            // Goal by goal, as the cursor over the headers moves: one goal in memory at a time.
            try txn.scan(t.goals) { key, value in
                let id = StoredProjection.uuid(key)
                let header = try StoredProjection.decoded { () throws(RecordDecodingError) in
                    try ProjectionCodec.decodeHeader(value, id: id, allTagAdds: allTagAdds)
                }
                guard header.exists, includingDeleted || !header.isDeleted else { return true }
                var state = header
                state.historyRule = rule
                if entries { state = try txn.withEntries(header, in: t, rule: rule, revoked: revoked) }
                let view = try kept ? ViewTables.view(of: state, today: today, firstWeekday: calendar.firstWeekday, txn, t) : nil
                try body(
                    state,
                    try view
                        ?? txn.view(
                            of: state, entriesRead: entries, calendar: calendar, now: now, in: t, rule: rule, revoked: revoked))
                return true
            }
        }
    }

    /// One goal with its entries, and its view for this store's device at `now`, read in one
    /// transaction; nil for a goal the store has no row of.
    package func goalWithView(_ id: UUID, now: Instant) throws(LedgerError) -> (GoalState, GoalView)? {
        let rule = historyRule
        return try run {
            let t = try txn.activeProjection()
            guard let state = try txn.goal(id, in: t, rule: rule) else { return nil }
            let calendar = try StoredProjection.device(device, txn, t).calendar
            return (
                state,
                try txn.view(of: state, entriesRead: true, calendar: calendar, now: now, in: t, rule: rule, revoked: nil)
            )
        }
    }

}
