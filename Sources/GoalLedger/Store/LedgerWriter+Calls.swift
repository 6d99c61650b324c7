import Foundation

/// The calls an app makes, one event each, typed: each is an `append` of one draft, with the
/// same checks and errors (the message names "event 1 of the batch" and the field), and `now`
/// defaults to the system clock. The calls about an existing goal take `expectedVersion`, the
/// goal's version (``LedgerSnapshot/version(ofGoal:)``) the write must find, as `append` checks
/// it; ``LedgerWriter/editGoal(_:title:details:cadence:targetDate:target:unit:ifUnchangedSince:expectedVersion:now:)``
/// also takes a guard per field, which progress does not move.
extension LedgerWriter {
    /// Creates a goal and returns its id.
    @discardableResult
    public func createGoal(
        title: String, cadence: Cadence = .once, progress: GoalProgress = .outcome, targetDate: Day? = nil, details: String? = nil,
        reminder: ReminderTime? = nil, tags: [String] = [], id: UUID = UUID(), now: Instant = .systemNow
    ) throws(LedgerError) -> UUID {
        var created = GoalCreated(
            goal: id, title: title, details: details, cadence: cadence, targetDate: targetDate, reminder: reminder, tags: tags)
        if case .measurable(let target, let unit) = progress {
            created.progressKind = .measurable
            created.target = target
            created.unit = unit
        }
        _ = try one(.goalCreated(created), now: now)
        return id
    }

    /// Records an amount for a measurable goal; the result's `id` is the entry's.
    @discardableResult
    public func recordProgress(
        _ goal: UUID, amount: Amount, occurredAt: Instant? = nil, expectedVersion: Int? = nil, now: Instant = .systemNow
    ) throws(LedgerError) -> AppendResult {
        try one(.progressRecorded(ProgressRecorded(goal: goal, amount: amount, occurredAt: occurredAt)), expectedVersion, now: now)
    }

    /// Records whether an outcome goal was done; the result's `id` is the entry's.
    @discardableResult
    public func recordCompletion(
        _ goal: UUID, completed: Bool = true, occurredAt: Instant? = nil, expectedVersion: Int? = nil, now: Instant = .systemNow
    ) throws(LedgerError) -> AppendResult {
        try one(.progressRecorded(ProgressRecorded(goal: goal, completed: completed, occurredAt: occurredAt)), expectedVersion, now: now)
    }

    /// Takes back the progress entry `entry` of `goal`.
    @discardableResult
    public func removeEntry(_ entry: UUID, of goal: UUID, expectedVersion: Int? = nil, now: Instant = .systemNow) throws(LedgerError)
        -> AppendResult
    {
        try one(.progressRemoved(ProgressRemoved(goal: goal, entry: entry)), expectedVersion, now: now)
    }

    /// Changes the fields given (`nil`: unchanged; `.some(nil)` clears an optional one).
    ///
    /// `ifUnchangedSince` guards fields: the edit is written only if each field it names still
    /// holds the write of the given ``FieldVersion`` (``Goal/version(of:)`` as the app read it),
    /// else it throws a version conflict (``LedgerError/Reason/fieldVersionConflict(goal:field:)``)
    /// and writes nothing. Only writes of a guarded field conflict: progress, tags, a reminder or
    /// an edit of another field do not, while an edit of the field on another device does once
    /// it is synced here. A guard may name a field the edit does not change.
    @discardableResult
    public func editGoal(
        _ goal: UUID, title: String? = nil, details: String?? = nil, cadence: Cadence? = nil, targetDate: Day?? = nil,
        target: Amount? = nil, unit: String?? = nil, ifUnchangedSince guards: [GoalField: FieldVersion] = [:],
        expectedVersion: Int? = nil, now: Instant = .systemNow
    ) throws(LedgerError) -> AppendResult {
        try checkUnchanged(guards, of: goal)
        return try one(
            .goalEdited(
                GoalEdited(
                    goal: goal, title: title, details: details, cadence: cadence, targetDate: targetDate, target: target, unit: unit)
            ), expectedVersion,
            now: now)
    }

    /// Deletes a goal: its events stay, and `restoreGoal` brings it back with its history.
    @discardableResult
    public func deleteGoal(_ goal: UUID, expectedVersion: Int? = nil, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try one(.goalDeleted(GoalRegisterWrite(goal: goal)), expectedVersion, now: now)
    }

    /// Restores a deleted goal.
    @discardableResult
    public func restoreGoal(_ goal: UUID, expectedVersion: Int? = nil, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try one(.goalRestored(GoalRegisterWrite(goal: goal)), expectedVersion, now: now)
    }

    /// Sets or moves a goal's reminder, on `time.weekday` for a weekly goal (nil: each device's
    /// first weekday); `devices` names the devices that notify (nil: every one).
    @discardableResult
    public func setReminder(
        _ goal: UUID, at time: ReminderTime, devices: [String]? = nil, expectedVersion: Int? = nil, now: Instant = .systemNow
    ) throws(LedgerError) -> AppendResult {
        try one(
            .reminderSet(ReminderSet(goal: goal, hour: time.hour, minute: time.minute, weekday: time.weekday, devices: devices)),
            expectedVersion, now: now)
    }

    /// Turns a goal's reminder off.
    @discardableResult
    public func clearReminder(_ goal: UUID, expectedVersion: Int? = nil, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try one(.reminderCleared(GoalRegisterWrite(goal: goal)), expectedVersion, now: now)
    }

    /// Puts `tag` on a goal.
    @discardableResult
    public func addTag(_ tag: String, to goal: UUID, expectedVersion: Int? = nil, now: Instant = .systemNow) throws(LedgerError)
        -> AppendResult
    {
        try one(.tagAdded(TagAdded(goal: goal, tag: tag)), expectedVersion, now: now)
    }

    /// Takes `tag` off a goal.
    @discardableResult
    public func removeTag(_ tag: String, from goal: UUID, expectedVersion: Int? = nil, now: Instant = .systemNow) throws(LedgerError)
        -> AppendResult
    {
        try one(.tagRemoved(TagRemoved(goal: goal, tag: tag)), expectedVersion, now: now)
    }

    /// This device's settings: its time zone, first weekday, locale and reminder strategy
    /// (`DeviceConfigured(timeZone:…)` checks each).
    @discardableResult
    public func configureDevice(_ settings: DeviceConfigured, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try one(.deviceConfigured(settings), now: now)
    }

    /// This device's notification permission, as the system reports it.
    @discardableResult
    public func reportAuthorization(_ status: AuthorizationStatus, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try one(.notificationAuthorization(NotificationAuthorization(status: status)), now: now)
    }

    /// Moves a goal right after `after` in the person's order (nil: first). The store computes
    /// the goal's new position key; when none fits, it renumbers the live goals in the same
    /// write. An unknown or deleted goal or anchor, or the goal itself as its anchor, is refused
    /// naming the field, and nothing is written.
    @discardableResult
    public func moveGoal(_ goal: UUID, after: UUID?, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try one(.goalMoved(goal, to: after.map(GoalPlacement.after) ?? .first), now: now)
    }

    /// Moves a goal right before `before` in the person's order (nil: last); see
    /// ``moveGoal(_:after:now:)``.
    @discardableResult
    public func moveGoal(_ goal: UUID, before: UUID?, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try one(.goalMoved(goal, to: before.map(GoalPlacement.before) ?? .last), now: now)
    }

    private func one(_ payload: Payload, _ expectedVersion: Int? = nil, now: Instant) throws(LedgerError) -> AppendResult {
        try append([EventDraft(payload: payload)], expectedVersion: expectedVersion, now: now)[0]
    }
}
