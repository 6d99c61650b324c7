import Foundation

/// A problem a reconciliation pass reports about one goal.
public struct ReminderIssue: Equatable, Hashable, Sendable {
    /// The goal the problem is about.
    public var goal: UUID
    /// What the problem is.
    public var kind: ReminderIssueKind
    /// `{"goal","kind"}`.
    public var json: JSONValue { .object([("goal", .string(goal.uuidString)), ("kind", .string(kind.rawValue))]) }
}

/// What a pass did to the device's notification center.
public struct ReconcileReport: Sendable {
    /// The device whose center the pass reconciled (the store's own).
    public var device: String
    /// The device's authorization, or nil when it never reported one ("can't tell", not "no";
    /// the JSON form says `unknown`).
    public var authorization: AuthorizationStatus?
    /// New and replaced requests, sorted.
    public var scheduled: [String] = []
    /// Goal reminders removed, sorted.
    public var cancelled: [String] = []
    /// Goal reminders examined that already matched.
    public var unchanged = 0
    /// Sorted by goal, then kind.
    public var issues: [ReminderIssue] = []
    /// Delivered goal reminders removed (their goal was deleted, its reminder cleared, or the
    /// one-time goal completed), sorted.
    public var removedDelivered: [String] = []
    /// Whether the pass read the device's whole table (else only the rows changed since its
    /// checkpoint and those of the requests the center holds).
    public var full = false
    /// The log position the pass brought the center up to.
    public var checkpoint: UInt64 = 0

    /// `{"device","authorization","scheduled","cancelled","unchanged","issues","full","checkpoint"}`,
    /// and `removedDelivered` when not empty.
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("device", .string(device)), ("authorization", .string(authorization?.rawValue ?? "unknown")),
            ("scheduled", .array(scheduled.map { .string($0) })), ("cancelled", .array(cancelled.map { .string($0) })),
            ("unchanged", .number(Double(unchanged))), ("issues", .array(issues.map(\.json))),
            ("full", .bool(full)), ("checkpoint", .number(Double(checkpoint))),
        ]
        if !removedDelivered.isEmpty { members.append(("removedDelivered", .array(removedDelivered.map { .string($0) }))) }
        return .object(members)
    }
}

/// Brings a device's notification center in line with its pending table (docs/reminders.md).
///
/// Every pass reads what the center holds, so drift is repaired whatever caused it: a request
/// removed, altered or refused behind the ledger's back is scheduled again, a `goal-reminder-`
/// request the table does not want (even one the ledger never scheduled) is cancelled, and ids
/// that are not goal reminders are never touched. Requests are scheduled before stale ones are
/// cancelled, so a failure never leaves the device with fewer reminders than before; a refused
/// request is reported as `schedulingFailure` and tried again by the next pass.
///
/// What a pass reads of the ledger: the pending table's change feed since its checkpoint (kept
/// in the store, one per center), then
/// - **incremental** (repeating strategy, the table within the device's capacity, no change of
///   settings or authorization): the rows of the goals that changed, of the requests the center
///   holds, of the requests refused last time and of those the last pass left in the center.
///   Cost: the rows changed plus the requests the center holds (at most its capacity), never
///   all goals.
/// - **full** otherwise (the first pass, `full: true`, the window strategy whose dated requests
///   roll with the days, a table larger than the capacity, whose ranking moves with time, a
///   change of settings or of any authorization): the device's whole table, read in time
///   proportional to its rows, never to all goals or events.
/// Rebuilding the projections does not move log positions, so it never makes a pass act again.
public struct Reconciler: Sendable {
    /// The store whose device's pending table the reconciler follows.
    public let store: LedgerStore
    /// The identity of the center the checkpoint belongs to.
    let centerID: String
    /// The app's wording of each request, when it has one.
    let content: ReminderContentProvider?

    /// A reconciler for a center of the app's (`centerID` names it, e.g. `system`: the
    /// checkpoint is kept per center). `content`, when given, words each request in the app's
    /// own language: its output is what a pass schedules and compares with what the center
    /// holds, so a center holding the app's wording is left alone until the goal changes.
    public init(store: LedgerStore, centerID: String, content: ReminderContentProvider? = nil) {
        self.store = store
        self.centerID = "center:" + centerID
        self.content = content
    }

    /// A reconciler whose checkpoint is kept under `rawCenterID` as it is (the command line's
    /// file center uses its file's path).
    package init(store: LedgerStore, rawCenterID: String) {
        self.store = store
        centerID = rawCenterID
        content = nil
    }

    /// The reconciler's own state, stored with the ledger.
    struct State: Equatable {
        var checkpoint: UInt64 = 0
        var overCapacity = false
        var retry: Set<UUID> = []
        /// The authorization the last pass saw, and the goals whose requests it left in the
        /// center; nil when the next pass must be full.
        var authorization: AuthorizationStatus?
        var held: Set<UUID>?
    }

    var stateKey: [UInt8] { Array("reconciler:\(store.device):\(centerID)".utf8) }

    /// One pass against `center`. With `dryRun`, the center is only read: what the pass would
    /// add or remove is reported, not done, and the checkpoint does not move.
    public func reconcile(center: some ReminderCenter, now: Instant = .systemNow, full: Bool = false, dryRun: Bool = false)
        async throws(LedgerError)
        -> ReconcileReport
    {
        guard dryRun else { return try await pass(center: center, now: now, full: full, saveState: true) }
        return try await pass(center: ReadOnlyCenter(center: center), now: now, full: full, saveState: false)
    }

    static func call<T>(_ what: String, _ body: () async throws -> T) async throws(LedgerError) -> T {
        do {
            return try await body()
        } catch {
            throw LedgerError.notificationCenterFailed("the notification center failed to \(what): \(error)", error)
        }
    }

    package func pass(center: some ReminderCenter, now: Instant, full requestedFull: Bool, saveState: Bool) async throws(LedgerError)
        -> ReconcileReport
    {
        let previous = try loadState()
        let changes = try PendingTableChanges(store: store, device: store.device, after: previous?.checkpoint ?? 0)
        let device = try store.reading { try $0.deviceState($0.device) }
        let authorization = device.authorization?.value
        var report = ReconcileReport(device: store.device, authorization: authorization)
        report.checkpoint = changes.checkpoint
        var state = State(checkpoint: changes.checkpoint, overCapacity: previous?.overCapacity ?? false, retry: previous?.retry ?? [])

        let held = try await Self.call("read the pending requests") { try await center.pendingRequests() }
        var heldGoalReminders: [String: NotificationRequest] = [:]
        for r in held where ReminderPlan.isGoalReminderID(r.id) { heldGoalReminders[r.id] = r }

        switch authorization {
        case nil:
            // Unknown: absent is "can't tell", not "no". Leave the device's center alone.
            report.full = requestedFull || previous == nil
        case .denied?, .notDetermined?:
            try await withdrawAll(heldGoalReminders, from: center, authorization: authorization, now: now, &report)
            state.retry = []
            state.authorization = authorization
        case .authorized?, .provisional?, .ephemeral?:
            let full =
                requestedFull || previous?.held == nil || previous?.authorization != authorization || changes.all
                || state.overCapacity || device.settings.strategy != .repeating
            let desired = try desiredRequests(
                device, now: now, full: full, changed: changes.goals, held: heldGoalReminders, previous: previous, &state, &report)
            state.retry = []
            state.held = try await scheduleThenCancel(desired, held: heldGoalReminders, in: center, &state, &report)
            state.authorization = authorization
        }
        if authorization != nil { report.removedDelivered = try await removeDelivered(center) }
        report.scheduled.sort(by: String.bytesPrecede)
        report.cancelled.sort(by: String.bytesPrecede)
        report.issues = Array(Set(report.issues)).sorted {
            $0.goal != $1.goal ? UUID.precedes($0.goal, $1.goal) : $0.kind.rawValue < $1.kind.rawValue
        }
        if saveState { try self.saveState(state) }
        return report
    }

    /// Without permission (denied, or not asked yet): every goal reminder the center holds is
    /// removed; a denied device's planned goals are reported as such.
    private func withdrawAll(
        _ held: [String: NotificationRequest], from center: some ReminderCenter, authorization: AuthorizationStatus?,
        now: Instant, _ report: inout ReconcileReport
    ) async throws(LedgerError) {
        report.full = true
        let ids = held.keys.sorted(by: String.bytesPrecede)
        if !ids.isEmpty {
            try await Self.call("remove requests") { try await center.removePendingRequests(withIdentifiers: ids) }
            report.cancelled = ids
        }
        if authorization == .denied {
            let plan = try store.reading { try $0.pendingPlan(device: $0.device, now: now).1 }
            report.issues = Set(plan.requests.map(\.plannedGoal)).map { ReminderIssue(goal: $0, kind: .permissionDenied) }
        }
    }

    /// The requests the device should hold: an incremental pass reads only the rows of the goals
    /// that changed, are to be retried or are held; a full pass (asked for, or when the
    /// incremental rows would exceed the capacity) plans the whole table.
    private func desiredRequests(
        _ device: DeviceState, now: Instant, full requested: Bool, changed: Set<UUID>, held: [String: NotificationRequest],
        previous: State?, _ state: inout State, _ report: inout ReconcileReport
    ) throws(LedgerError) -> [NotificationRequest] {
        var full = requested
        if !full, let previousHeld = previous?.held {
            var goals = changed.union(state.retry).union(previousHeld)
            for id in held.keys { goals.insert(Self.goal(ofReminderID: id)) }
            let capacity = device.settings.capacity
            let (rows, exceeds) = try store.reading { try $0.pendingRows(device: $0.device, goals: goals, limit: capacity) }
            if !exceeds {
                report.full = false
                return try store.reading { try $0.expand(rows, device: device, now: now).requests }
            }
            full = true
        }
        let plan = try store.reading { try $0.pendingPlan(device: $0.device, now: now).1 }
        state.overCapacity = !plan.overCapacity.isEmpty
        report.issues += plan.overCapacity.map { ReminderIssue(goal: $0, kind: .overCapacity) }
        report.full = full
        return plan.requests
    }

    /// Schedules every desired request the center does not hold as it is, then cancels the goal
    /// reminders the table does not want (schedule before cancel: a failure leaves the old
    /// reminder in place). The goals whose reminder is held afterwards.
    private func scheduleThenCancel(
        _ desired: [NotificationRequest], held: [String: NotificationRequest], in center: some ReminderCenter, _ state: inout State,
        _ report: inout ReconcileReport
    ) async throws(LedgerError) -> Set<UUID> {
        var left = Set<UUID>()
        for request in desired {
            var pending = request.asHeld
            if let content {
                let text = content(request)
                pending.title = text.title
                pending.body = text.body
            }
            if held[request.id] == pending {
                report.unchanged += 1
                left.insert(request.plannedGoal)
                continue
            }
            do {
                try await center.add(pending)
                report.scheduled.append(request.id)
                left.insert(request.plannedGoal)
            } catch {
                report.issues.append(ReminderIssue(goal: request.plannedGoal, kind: .schedulingFailure))
                state.retry.insert(request.plannedGoal)
            }
        }
        let wanted = Set(desired.map(\.id))
        let stale = held.keys.filter { !wanted.contains($0) }.sorted(by: String.bytesPrecede)
        if !stale.isEmpty {
            try await Self.call("remove requests") { try await center.removePendingRequests(withIdentifiers: stale) }
            report.cancelled = stale
        }
        return left
    }

    /// Removes the delivered goal reminders of goals that were deleted, whose reminder was
    /// cleared, or (one-time goals) that were completed. Cost: the delivered notifications.
    func removeDelivered(_ center: some ReminderCenter) async throws(LedgerError) -> [String] {
        guard center.supportsDeliveredNotifications else { return [] }
        let delivered = try await Self.call("read the delivered notifications") { try await center.deliveredNotifications() }
        let recognized = delivered.filter { ReminderPlan.isGoalReminderID($0.id) }
        guard !recognized.isEmpty else { return [] }
        let goals = Set(recognized.map { Self.goal(ofReminderID: $0.id) })
        let facts = try store.reading { try $0.reminderFacts(goals) }
        let gone = recognized.filter { n in
            guard let f = facts[Self.goal(ofReminderID: n.id)] else { return true }
            return f.cadence == .once && f.completed
        }.map(\.id).sorted(by: String.bytesPrecede)
        if !gone.isEmpty {
            try await Self.call("remove delivered notifications") { try await center.removeDeliveredNotifications(withIdentifiers: gone) }
        }
        return gone
    }

    /// The goal of a `goal-reminder-` id (`isGoalReminderID` holds).
    static func goal(ofReminderID id: String) -> UUID {
        let utf8 = Array(id.utf8)
        let start = ReminderPlan.idPrefix.utf8.count
        return UUID.parse(String(decoding: utf8[start..<start + 36], as: UTF8.self))!
    }

    /// The device's desired notification table at `now` (what `ledger pending` prints), from
    /// the stored pending table.
    public static func pending(store: LedgerStore, device name: String, now: Instant) throws(LedgerError) -> (DeviceState, ReminderPlan) {
        try store.reading { try $0.pendingPlan(device: name, now: now) }
    }

    // MARK: State

    func loadState() throws(LedgerError) -> State? {
        guard let bytes = try store.metaValue(stateKey) else { return nil }
        return bytes.withUnsafeBytes { raw -> State? in
            var r = ByteReader(raw)
            do throws(RecordDecodingError) {
                var s = State(checkpoint: try r.varint(), overCapacity: try r.u8() == 1)
                for _ in 0..<(try r.varint()) { s.retry.insert(try r.uuid()) }
                // Written since passes read the center: the authorization seen and what was left.
                if !r.isAtEnd, try r.u8() == 1 {
                    s.authorization = AuthorizationStatus(storedCode: try r.u8())
                    var held = Set<UUID>()
                    for _ in 0..<(try r.varint()) { held.insert(try r.uuid()) }
                    s.held = held
                }
                return s
            } catch {
                return nil  // unreadable state: start over with a full pass
            }
        }
    }

    func saveState(_ s: State) throws(LedgerError) {
        var w = ByteWriter()
        w.varint(s.checkpoint)
        w.u8(s.overCapacity ? 1 : 0)
        w.varint(UInt64(s.retry.count))
        for g in s.retry.sorted(by: UUID.precedes) { w.uuid(g) }
        if let held = s.held, let a = s.authorization {
            w.u8(1)
            w.u8(a.storedCode)
            w.varint(UInt64(held.count))
            for g in held.sorted(by: UUID.precedes) { w.uuid(g) }
        } else {
            w.u8(0)
        }
        try store.setMetaValue(stateKey, w.bytes)
    }
}

extension LedgerStore {
    func metaValue(_ key: [UInt8]) throws(LedgerError) -> [UInt8]? {
        try readTransaction { txn in try txn.get(layout.meta, key: key) }
    }

    func setMetaValue(_ key: [UInt8], _ value: [UInt8]) throws(LedgerError) {
        let layout = self.layout
        try writeTransaction("writing to \(path)") { txn in try txn.put(layout.meta, key: key, value: value) }
    }
}

/// A dry run's view of a center: what it holds is read through; what a pass would add or remove
/// is accepted and dropped. (A pass reads the center once, before it changes anything.)
private struct ReadOnlyCenter<Center: ReminderCenter>: ReminderCenter {
    let center: Center
    func pendingRequests() async throws -> [NotificationRequest] { try await center.pendingRequests() }
    func add(_ request: NotificationRequest) async throws {}
    func removePendingRequests(withIdentifiers ids: [String]) async throws {}
    var supportsDeliveredNotifications: Bool { center.supportsDeliveredNotifications }
    func deliveredNotifications() async throws -> [DeliveredNotification] { try await center.deliveredNotifications() }
    func removeDeliveredNotifications(withIdentifiers ids: [String]) async throws {}
}
