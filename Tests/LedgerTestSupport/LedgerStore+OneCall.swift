import Foundation
import GoalLedger

/// For tests: each read and write of the ledger as one call on the store, in a snapshot or a
/// write transaction of its own (`store.goals(now:)` is `store.read { try $0.goals(now:) }`),
/// with every failure a ``LedgerError``. The tests assert behaviour call by call; the library's
/// own API is ``LedgerStore/read(_:)`` and ``LedgerStore/write(_:)``.
extension LedgerStore {
    // MARK: Reads

    package var schema: Int { (try? reading { s in s.schema }) ?? 0 }
    package var historyRule: HistoryRule { HistoryRule(schema: schema) }
    package var isSignedLedger: Bool { (try? reading { s in s.isSignedLedger }) ?? false }

    package func lastPosition() throws(LedgerError) -> UInt64 { try reading { s in try s.lastPosition() } }
    package func event(at position: UInt64) throws(LedgerError) -> Event? {
        try reading { s in try s.event(at: position) }
    }
    package func event(origin: String, sequence: UInt64) throws(LedgerError) -> Event? {
        try reading { s in try s.event(origin: origin, sequence: sequence) }
    }
    package func scanEvents(from start: UInt64 = 1, _ body: (UInt64, Event) throws -> Bool) throws(LedgerError) {
        try reading { s in try s.scanEvents(from: start, body) }
    }
    package func events(ofGoal goal: UUID) throws(LedgerError) -> [(position: UInt64, event: Event)] {
        try reading { s in try s.events(ofGoal: goal) }
    }
    package func canonicalEvents(goal: UUID? = nil) throws(LedgerError) -> [(position: UInt64, event: Event)] {
        try reading { s in try s.canonicalEvents(goal: goal) }
    }
    package func events(missingFrom heads: [String: UInt64]) throws(LedgerError) -> [Event] {
        try reading { s in try s.events(missingFrom: heads) }
    }
    package func goalState(_ goal: UUID) throws(LedgerError) -> GoalState {
        try reading { s in try s.goalState(goal) }
    }
    package func deviceState(_ name: String) throws(LedgerError) -> DeviceState {
        try reading { s in try s.deviceState(name) }
    }
    package func forEachGoal(_ body: (GoalState) throws -> Void) throws(LedgerError) {
        try reading { s in try s.forEachGoal(body) }
    }
    package func goal(_ id: UUID) throws(LedgerError) -> Goal? { try reading { s in try s.goal(id) } }
    package func goal(_ id: UUID, now: Instant) throws(LedgerError) -> GoalSnapshot? {
        try reading { s in try s.goal(id, now: now) }
    }
    package func goals(now: Instant = .systemNow, includingDeleted: Bool = false, includingEntries: Bool = true) throws(LedgerError)
        -> [GoalSnapshot]
    {
        try reading { s in try s.goals(now: now, includingDeleted: includingDeleted, includingEntries: includingEntries) }
    }
    package func digest() throws(LedgerError) -> String { try reading { s in try s.digest() } }
    package func digestAndGoalCount() throws(LedgerError) -> (digest: String, goals: Int) {
        try reading { s in try s.digestAndGoalCount() }
    }
    package func projection() throws(LedgerError) -> GoalProjection { try reading { s in try s.projection() } }
    package func projectionStatus() throws(LedgerError) -> (version: UInt64, checkpoint: UInt64) {
        try reading { s in try s.projectionStatus() }
    }
    package func replay(through position: UInt64? = nil, asOf: Instant? = nil) throws(LedgerError) -> GoalProjection {
        try reading { s in try s.replay(through: position, asOf: asOf) }
    }
    package func originHeads() throws(LedgerError) -> [String: UInt64] { try reading { s in try s.originHeads() } }
    package func clock() throws(LedgerError) -> HLC { try reading { s in try s.clock() } }
    package func publicKey() throws(LedgerError) -> [UInt8]? { try reading { s in try s.publicKey() } }
    package func appliedMigrations() throws(LedgerError) -> [String] {
        try reading { s in try s.appliedMigrations() }
    }
    package func status() throws(LedgerError) -> LedgerStatus { try reading { s in try s.status() } }
    package func verify() throws(LedgerError) -> VerificationReport { try reading { s in try s.verify() } }
    package func pendingPlan(device name: String, now: Instant) throws(LedgerError) -> (DeviceState, ReminderPlan) {
        try reading { s in try s.pendingPlan(device: name, now: now) }
    }
    package func audit(goal: UUID) throws(LedgerError) -> [AuditStep] { try reading { s in try s.audit(goal: goal) } }
    package func conflicts(goal: UUID? = nil) throws(LedgerError) -> [Conflict] {
        try reading { s in try s.conflicts(goal: goal) }
    }
    package func syncState() throws(LedgerError) -> SyncState { try reading { s in try s.syncState() } }
    package func changeSet(since peer: SyncState) throws(LedgerError) -> ChangeSet {
        try reading { s in try s.changeSet(since: peer) }
    }
    package func enrolledDevices() throws(LedgerError) -> [EnrolledDevice] {
        try reading { s in try s.enrolledDevices() }
    }
    package func waitingEvents() throws(LedgerError) -> [WaitingEvents] { try reading { s in try s.waitingEvents() } }
    package func setAsideEvents() throws(LedgerError) -> [SetAsideEvent] {
        try reading { s in try s.setAsideEvents() }
    }
    package func export(to file: String) throws(LedgerError) -> Int { try reading { s in try s.export(to: file) } }

    // MARK: Writes

    @discardableResult
    package func append(_ drafts: [EventDraft], lines: [Int]? = nil, expectedVersion: Int? = nil, now: Instant) throws(LedgerError)
        -> [AppendResult]
    {
        try writing { w in try w.append(drafts, lines: lines, expectedVersion: expectedVersion, now: now) }
    }
    @discardableResult
    package func importEvents(
        _ incoming: [Event], from source: String, beforeCommit: (() throws(LedgerError) -> Void)? = nil
    ) throws(LedgerError) -> ImportResult {
        try writing { w in
            try w.importEvents(incoming, records: nil, from: source, unreadable: [], beforeCommit: beforeCommit)
        }
    }
    @discardableResult
    package func apply(_ changeSet: ChangeSet, from source: String) throws(LedgerError) -> ImportResult {
        try writing { w in try w.apply(changeSet, from: source) }
    }
    package func importFile(_ file: String) throws(LedgerError) -> ImportResult {
        try writing { w in try w.importFile(file) }
    }
    @discardableResult
    package func createGoal(
        title: String, cadence: Cadence = .once, progress: GoalProgress = .outcome, targetDate: Day? = nil, details: String? = nil,
        reminder: ReminderTime? = nil, tags: [String] = [], id: UUID = UUID(), now: Instant = .systemNow
    ) throws(LedgerError) -> UUID {
        try writing { w in
            try w.createGoal(
                title: title, cadence: cadence, progress: progress, targetDate: targetDate, details: details, reminder: reminder,
                tags: tags,
                id: id, now: now)
        }
    }
    @discardableResult
    package func recordProgress(_ goal: UUID, amount: Amount, occurredAt: Instant? = nil, now: Instant = .systemNow) throws(LedgerError)
        -> AppendResult
    {
        try writing { w in try w.recordProgress(goal, amount: amount, occurredAt: occurredAt, now: now) }
    }
    @discardableResult
    package func recordCompletion(_ goal: UUID, completed: Bool = true, occurredAt: Instant? = nil, now: Instant = .systemNow)
        throws(LedgerError) -> AppendResult
    {
        try writing { w in try w.recordCompletion(goal, completed: completed, occurredAt: occurredAt, now: now) }
    }
    @discardableResult
    package func removeEntry(_ entry: UUID, of goal: UUID, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try writing { w in try w.removeEntry(entry, of: goal, now: now) }
    }
    @discardableResult
    package func editGoal(
        _ goal: UUID, title: String? = nil, details: String?? = nil, cadence: Cadence? = nil, targetDate: Day?? = nil,
        target: Amount? = nil, unit: String?? = nil, now: Instant = .systemNow
    ) throws(LedgerError) -> AppendResult {
        try writing { w in
            try w.editGoal(
                goal, title: title, details: details, cadence: cadence, targetDate: targetDate, target: target, unit: unit, now: now)
        }
    }
    @discardableResult
    package func deleteGoal(_ goal: UUID, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try writing { w in try w.deleteGoal(goal, now: now) }
    }
    @discardableResult
    package func restoreGoal(_ goal: UUID, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try writing { w in try w.restoreGoal(goal, now: now) }
    }
    @discardableResult
    package func setReminder(_ goal: UUID, at time: ReminderTime, devices: [String]? = nil, now: Instant = .systemNow) throws(LedgerError)
        -> AppendResult
    {
        try writing { w in try w.setReminder(goal, at: time, devices: devices, now: now) }
    }
    @discardableResult
    package func clearReminder(_ goal: UUID, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try writing { w in try w.clearReminder(goal, now: now) }
    }
    @discardableResult
    package func addTag(_ tag: String, to goal: UUID, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try writing { w in try w.addTag(tag, to: goal, now: now) }
    }
    @discardableResult
    package func removeTag(_ tag: String, from goal: UUID, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try writing { w in try w.removeTag(tag, from: goal, now: now) }
    }
    @discardableResult
    package func configureDevice(_ settings: DeviceConfigured, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try writing { w in try w.configureDevice(settings, now: now) }
    }
    @discardableResult
    package func reportAuthorization(_ status: AuthorizationStatus, now: Instant = .systemNow) throws(LedgerError) -> AppendResult {
        try writing { w in try w.reportAuthorization(status, now: now) }
    }
    @discardableResult
    package func enrol(device other: String, publicKey: [UInt8], now: Instant) throws(LedgerError) -> AppendResult {
        try writing { w in try w.enrol(device: other, publicKey: publicKey, now: now) }
    }
    @discardableResult
    package func revoke(device other: String, now: Instant) throws(LedgerError) -> AppendResult {
        try writing { w in try w.revoke(device: other, now: now) }
    }
    @discardableResult
    package func rotateKey(now: Instant) throws(LedgerError) -> AppendResult {
        try writing { w in try w.rotateKey(now: now) }
    }
}
