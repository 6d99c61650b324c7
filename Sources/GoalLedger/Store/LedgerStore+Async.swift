import Dispatch
import Foundation

/// The `async` form of every write: the same call, run on the store's writer queue, so the
/// caller's actor (the main actor of a screen) goes on while LMDB writes and syncs to disk.
///
///     Button("Done") { Task { try await store.recordCompletion(goal) } }
///
/// The writes of one store run one after another in the order they were called; reads
/// (`goals(now:)`, `goal(_:now:)`) are cheap and stay synchronous. An observer
/// (`observeGoals(now:)`) sees each write once it is committed.
extension LedgerStore {
    /// Runs `body` with this store on the store's writer queue and returns its result, without
    /// blocking the caller: the way to make any synchronous call (`append`, `sync(with:)`,
    /// `rebuild()`) asynchronous.
    public func perform<T: Sendable>(_ body: @escaping @Sendable (LedgerStore) throws(LedgerError) -> T) async throws(LedgerError) -> T {
        let result: Result<T, LedgerError> = await withCheckedContinuation { continuation in
            writer.async {
                do throws(LedgerError) {
                    continuation.resume(returning: .success(try body(self)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// ``append(_:lines:expectedVersion:now:)``, off the caller's actor.
    @discardableResult
    public func append(_ drafts: [EventDraft], lines: [Int]? = nil, expectedVersion: Int? = nil, now: Instant) async throws(LedgerError)
        -> [AppendResult]
    {
        try await perform { (store) throws(LedgerError) in try store.append(drafts, lines: lines, expectedVersion: expectedVersion, now: now) }
    }

    /// ``createGoal(title:cadence:progress:targetDate:details:reminder:tags:id:now:)``, off the caller's actor.
    @discardableResult
    public func createGoal(
        title: String, cadence: Cadence = .once, progress: GoalProgress = .outcome, targetDate: Day? = nil, details: String? = nil,
        reminder: ReminderTime? = nil, tags: [String] = [], id: UUID = UUID(), now: Instant = .systemNow
    ) async throws(LedgerError) -> UUID {
        try await perform { (store) throws(LedgerError) in
            try store.createGoal(
                title: title, cadence: cadence, progress: progress, targetDate: targetDate, details: details, reminder: reminder, tags: tags,
                id: id, now: now)
        }
    }

    /// ``recordProgress(_:amount:occurredAt:now:)``, off the caller's actor.
    @discardableResult
    public func recordProgress(_ goal: UUID, amount: Amount, occurredAt: Instant? = nil, now: Instant = .systemNow) async throws(LedgerError)
        -> AppendResult
    {
        try await perform { (store) throws(LedgerError) in try store.recordProgress(goal, amount: amount, occurredAt: occurredAt, now: now) }
    }

    /// ``recordCompletion(_:completed:occurredAt:now:)``, off the caller's actor.
    @discardableResult
    public func recordCompletion(_ goal: UUID, completed: Bool = true, occurredAt: Instant? = nil, now: Instant = .systemNow)
        async throws(LedgerError) -> AppendResult
    {
        try await perform { (store) throws(LedgerError) in try store.recordCompletion(goal, completed: completed, occurredAt: occurredAt, now: now) }
    }

    /// ``removeEntry(_:of:now:)``, off the caller's actor.
    @discardableResult
    public func removeEntry(_ entry: UUID, of goal: UUID, now: Instant = .systemNow) async throws(LedgerError) -> AppendResult {
        try await perform { (store) throws(LedgerError) in try store.removeEntry(entry, of: goal, now: now) }
    }

    /// ``editGoal(_:title:details:cadence:targetDate:target:unit:now:)``, off the caller's actor.
    @discardableResult
    public func editGoal(
        _ goal: UUID, title: String? = nil, details: String?? = nil, cadence: Cadence? = nil, targetDate: Day?? = nil,
        target: Amount? = nil, unit: String?? = nil, now: Instant = .systemNow
    ) async throws(LedgerError) -> AppendResult {
        try await perform { (store) throws(LedgerError) in
            try store.editGoal(goal, title: title, details: details, cadence: cadence, targetDate: targetDate, target: target, unit: unit, now: now)
        }
    }

    /// ``deleteGoal(_:now:)``, off the caller's actor.
    @discardableResult
    public func deleteGoal(_ goal: UUID, now: Instant = .systemNow) async throws(LedgerError) -> AppendResult {
        try await perform { (store) throws(LedgerError) in try store.deleteGoal(goal, now: now) }
    }

    /// ``restoreGoal(_:now:)``, off the caller's actor.
    @discardableResult
    public func restoreGoal(_ goal: UUID, now: Instant = .systemNow) async throws(LedgerError) -> AppendResult {
        try await perform { (store) throws(LedgerError) in try store.restoreGoal(goal, now: now) }
    }

    /// ``setReminder(_:at:devices:now:)``, off the caller's actor.
    @discardableResult
    public func setReminder(_ goal: UUID, at time: ReminderTime, devices: [String]? = nil, now: Instant = .systemNow) async throws(LedgerError)
        -> AppendResult
    {
        try await perform { (store) throws(LedgerError) in try store.setReminder(goal, at: time, devices: devices, now: now) }
    }

    /// ``clearReminder(_:now:)``, off the caller's actor.
    @discardableResult
    public func clearReminder(_ goal: UUID, now: Instant = .systemNow) async throws(LedgerError) -> AppendResult {
        try await perform { (store) throws(LedgerError) in try store.clearReminder(goal, now: now) }
    }

    /// ``addTag(_:to:now:)``, off the caller's actor.
    @discardableResult
    public func addTag(_ tag: String, to goal: UUID, now: Instant = .systemNow) async throws(LedgerError) -> AppendResult {
        try await perform { (store) throws(LedgerError) in try store.addTag(tag, to: goal, now: now) }
    }

    /// ``removeTag(_:from:now:)``, off the caller's actor.
    @discardableResult
    public func removeTag(_ tag: String, from goal: UUID, now: Instant = .systemNow) async throws(LedgerError) -> AppendResult {
        try await perform { (store) throws(LedgerError) in try store.removeTag(tag, from: goal, now: now) }
    }

    /// ``configureDevice(_:now:)``, off the caller's actor.
    @discardableResult
    public func configureDevice(_ settings: DeviceConfigured, now: Instant = .systemNow) async throws(LedgerError) -> AppendResult {
        try await perform { (store) throws(LedgerError) in try store.configureDevice(settings, now: now) }
    }

    /// ``reportAuthorization(_:now:)``, off the caller's actor.
    @discardableResult
    public func reportAuthorization(_ status: AuthorizationStatus, now: Instant = .systemNow) async throws(LedgerError) -> AppendResult {
        try await perform { (store) throws(LedgerError) in try store.reportAuthorization(status, now: now) }
    }

    /// ``sync(with:)``, off the caller's actor.
    public func sync(with peer: LedgerStore) async throws(LedgerError) -> SyncResult {
        try await perform { (store) throws(LedgerError) in try store.sync(with: peer) }
    }
}
