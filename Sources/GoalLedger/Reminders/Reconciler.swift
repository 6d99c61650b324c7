import Foundation
import LMDB

/// A problem a reconciliation pass reports about one goal.
public struct ReminderIssue: Equatable, Hashable, Sendable {
    public var goal: UUID
    public var kind: ReminderIssueKind
    public var json: JSONValue { .object([("goal", .string(goal.uuidString)), ("kind", .string(kind.rawValue))]) }
}

/// What a pass did to the device's notification center.
public struct ReconcileReport: Sendable {
    public var device: String
    /// The device's authorization, or `unknown` when it never reported one.
    public var authorization: String
    /// New and replaced requests, sorted.
    public var scheduled: [String] = []
    /// Goal reminders removed, sorted.
    public var cancelled: [String] = []
    /// Goal reminders examined that already matched.
    public var unchanged = 0
    /// Sorted by goal, then kind.
    public var issues: [ReminderIssue] = []
    /// Whether the pass looked at every goal (else only those changed since its checkpoint).
    public var full = false
    /// The log position the pass brought the center up to.
    public var checkpoint: UInt64 = 0

    public var json: JSONValue {
        .object([
            ("device", .string(device)), ("authorization", .string(authorization)),
            ("scheduled", .array(scheduled.map { .string($0) })), ("cancelled", .array(cancelled.map { .string($0) })),
            ("unchanged", .number(Double(unchanged))), ("issues", .array(issues.map(\.json))),
            ("full", .bool(full)), ("checkpoint", .number(Double(checkpoint))),
        ])
    }
}

/// Brings a device's notification center in line with the ledger (SPEC section 6).
///
/// It follows the projection's change feed from a checkpoint of its own, kept in the store per
/// notification center, so a pass after one change looks at that goal only. A full pass plans
/// every goal: the first pass, `full: true` (time passing), a change of the device's settings
/// or authorization, and every pass while the plan exceeds the device's capacity. Requests are
/// scheduled before stale ones are cancelled, so a failure never leaves the device with fewer
/// reminders than before; refused requests are reported and retried by the next pass. Ids
/// that are not goal reminders are never touched. Rebuilding projections does not move the
/// checkpoint's positions, so it never makes a pass fire again.
public struct Reconciler: Sendable {
    public let store: LedgerStore
    public let centerPath: String

    public init(store: LedgerStore, centerPath: String? = nil) {
        self.store = store
        self.centerPath = centerPath ?? store.path + "/notification-center.json"
    }

    /// The reconciler's own state, stored with the ledger.
    struct State: Equatable {
        var checkpoint: UInt64 = 0
        var overCapacity = false
        var retry: Set<UUID> = []
    }

    var stateKey: [UInt8] {
        let absolute = URL(fileURLWithPath: centerPath).standardizedFileURL.path
        return Array("reconciler:\(store.device):\(absolute)".utf8)
    }

    public func reconcile(now: Instant, full requestedFull: Bool = false, dryRun: Bool = false) throws(LedgerError) -> ReconcileReport {
        let previous = try loadState()
        let feed = ChangeFeed(store: store, after: previous?.checkpoint ?? 0)
        var changedGoals = Set<UUID>()
        var deviceChanged = false
        while case let batch = try feed.next(limit: 10_000), !batch.isEmpty {
            for c in batch {
                if let g = c.goal { changedGoals.insert(g) }
                if c.device == store.device { deviceChanged = true }
            }
        }
        let device = try store.deviceState(store.device)
        var report = ReconcileReport(device: store.device, authorization: device.authorization?.value.rawValue ?? "unknown")
        report.checkpoint = feed.checkpoint
        var state = previous ?? State()
        state.checkpoint = feed.checkpoint
        var full = requestedFull || previous == nil || deviceChanged || state.overCapacity

        report.full = full
        var center = try NotificationCenterFile.load(centerPath, defaultCapacity: device.settings.capacity)
        pruneDelivered(&center, device: device, now: now)

        switch device.authorization?.value {
        case nil:
            // Unknown: absent is "can't tell", not "no". Leave the device's requests alone.
            break
        case .denied?, .notDetermined?:
            report.full = true
            for r in center.requests where ReminderPlan.isGoalReminderID(r.id) {
                center.cancel(r.id)
                report.cancelled.append(r.id)
            }
            if device.authorization?.value == .denied {
                let plan = ReminderPlan.plan(goals: try store.projection().existingGoals, device: device, now: now)
                report.issues = Set(plan.requests.map(\.goal)).map { ReminderIssue(goal: $0, kind: .permissionDenied) }
            }
            state.retry = []
        case .authorized?, .provisional?, .ephemeral?:
            var desired: [NotificationRequest] = []
            var scope: (String) -> Bool = { _ in true }
            if !full {
                let goals = changedGoals.union(state.retry)
                for g in goals { desired += ReminderPlan.requests(for: try store.goalState(g), device: device, now: now) }
                let prefixes = Set(goals.map { "goal-reminder-" + $0.uuidString })
                scope = { id in prefixes.contains(String(id.prefix(14 + 36))) }
                // Room check: if these changes could push the plan past capacity, plan everything.
                let kept = center.requests.filter { ReminderPlan.isGoalReminderID($0.id) && !scope($0.id) }.count
                if kept + desired.count > device.settings.capacity { full = true }
            }
            if full {
                let plan = ReminderPlan.plan(goals: try store.projection().existingGoals, device: device, now: now)
                desired = plan.requests
                scope = { _ in true }
                state.overCapacity = !plan.overCapacity.isEmpty
                report.issues += plan.overCapacity.map { ReminderIssue(goal: $0, kind: .overCapacity) }
            }
            report.full = full
            state.retry = []
            // Schedule first…
            let held = Dictionary(uniqueKeysWithValues: center.requests.map { ($0.id, $0) })
            for request in desired {
                let pending = PendingRequest(request)
                if held[request.id] == pending {
                    report.unchanged += 1
                } else if center.schedule(pending) {
                    report.scheduled.append(request.id)
                } else {
                    report.issues.append(ReminderIssue(goal: request.goal, kind: .schedulingFailure))
                    state.retry.insert(request.goal)
                }
            }
            // …then cancel recognized goal reminders that are no longer desired.
            let wanted = Set(desired.map(\.id))
            for r in center.requests where ReminderPlan.isGoalReminderID(r.id) && scope(r.id) && !wanted.contains(r.id) {
                center.cancel(r.id)
                report.cancelled.append(r.id)
            }
        }
        report.scheduled.sort(by: String.bytesPrecede)
        report.cancelled.sort(by: String.bytesPrecede)
        report.issues = Array(Set(report.issues)).sorted {
            $0.goal != $1.goal ? $0.goal.uuidString < $1.goal.uuidString : $0.kind.rawValue < $1.kind.rawValue
        }
        if !dryRun {
            try center.save()
            try saveState(state)
        }
        return report
    }

    /// The device's desired notification table at `now` (what `ledger pending` prints).
    public static func pending(store: LedgerStore, device name: String, now: Instant) throws(LedgerError) -> (DeviceState, ReminderPlan) {
        let device = try store.deviceState(name)
        return (device, ReminderPlan.plan(goals: try store.projection().existingGoals, device: device, now: now))
    }

    /// A real notification center forgets one-shot requests once they have fired.
    func pruneDelivered(_ center: inout NotificationCenterFile, device: DeviceState, now: Instant) {
        let zone = device.calendar.timeZone
        center.requests.removeAll { r in
            guard !r.trigger.repeats else { return false }
            switch r.trigger.kind {
            case .date(let at): return at <= now
            case .calendar(let y?, let m?, let d?, _, let hour, let minute):
                guard let day = Day(year: y, month: m, day: d) else { return false }
                return localInstant(day: day, hour: hour, minute: minute, timeZone: zone) <= now
            default: return false
            }
        }
    }

    // MARK: State

    func loadState() throws(LedgerError) -> State? {
        guard let bytes = try store.metaValue(stateKey) else { return nil }
        return bytes.withUnsafeBytes { raw -> State? in
            var r = ByteReader(raw)
            do throws(DecodingError) {
                var s = State(checkpoint: try r.varint(), overCapacity: try r.u8() == 1)
                for _ in 0..<(try r.varint()) { s.retry.insert(try r.uuid()) }
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
        for g in s.retry.sorted(by: { $0.uuidString < $1.uuidString }) { w.uuid(g) }
        try store.setMetaValue(stateKey, w.bytes)
    }
}

extension LedgerStore {
    func metaValue(_ key: [UInt8]) throws(LedgerError) -> [UInt8]? {
        try read { txn in try txn.get(layout.meta, key: key) }
    }

    func setMetaValue(_ key: [UInt8], _ value: [UInt8]) throws(LedgerError) {
        let layout = self.layout
        do {
            try env.write { txn in try txn.put(layout.meta, key: key, value: value) }
        } catch {
            throw LedgerError(.store, "writing to \(path) failed: \(error)")
        }
    }
}
