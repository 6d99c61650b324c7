import Foundation
import LedgerFileCenter
import Testing

@testable import GoalLedger

/// The reconciler against a store and a file-backed notification center.
struct ReconcilerTests {
    let now = instant("2026-11-05T12:00:00Z")

    /// A store with device settings (Berlin) and, optionally, an authorization.
    func store(_ authorization: AuthorizationStatus?, strategy: String = "repeating", capacity: Int = 64) throws -> TemporaryStore {
        let t = try TemporaryStore()
        var lines = [
            #"{"type":"deviceConfigured","timeZone":"Europe/Berlin","firstWeekday":2,"strategy":"\#(strategy)","capacity":\#(capacity),"at":"2026-11-01T00:00:00Z"}"#
        ]
        if let authorization {
            lines.append(#"{"type":"notificationAuthorization","status":"\#(authorization.rawValue)","at":"2026-11-01T00:00:00Z"}"#)
        }
        try t.store.append(try drafts(lines), now: now)
        return t
    }

    func goal(_ n: Int, cadence: String = "daily", extra: String = "") -> String {
        #"{"type":"goalCreated","goal":"\#(goalID(n).uuidString)","title":"Goal \#(n)","cadence":"\#(cadence)","reminder":{"hour":7}\#(extra)}"#
    }

    func center(_ t: TemporaryStore) throws -> NotificationCenterFile {
        try NotificationCenterFile.load(FileCenterReconciler(store: t.store).centerPath, defaultCapacity: 64)
    }

    func rid(_ n: Int) -> String { "goal-reminder-" + goalID(n).uuidString }

    @Test func authorizedSchedulesAndAnIdenticalPassChangesNothing() throws {
        let t = try store(.authorized)
        try t.store.append(try drafts([goal(1), goal(2, cadence: "weekly")]), now: now)
        let first = try FileCenterReconciler(store: t.store).reconcile(now: now)
        #expect(first.full)
        #expect(first.scheduled == [rid(1), rid(2)].sorted())
        let second = try FileCenterReconciler(store: t.store).reconcile(now: now, full: true)
        #expect(second.scheduled.isEmpty && second.cancelled.isEmpty && second.unchanged == 2)
    }

    @Test(arguments: [AuthorizationStatus.denied, .notDetermined])
    func deniedAndUndeterminedCancelGoalRemindersOnly(_ status: AuthorizationStatus) throws {
        let t = try store(.authorized)
        try t.store.append(try drafts([goal(1)]), now: now)
        _ = try FileCenterReconciler(store: t.store).reconcile(now: now)
        var file = try center(t)
        file.requests.append(
            NotificationRequest(
                id: "water-the-plants", goal: nil, title: "Plants", body: "Water them", sound: "default",
                trigger: NotificationTrigger(
                    kind: .calendar(year: nil, month: nil, day: nil, weekday: nil, hour: 8, minute: 0), repeats: true)))
        try file.save()
        try t.store.append(try drafts([#"{"type":"notificationAuthorization","status":"\#(status.rawValue)"}"#]), now: now)
        let r = try FileCenterReconciler(store: t.store).reconcile(now: now)
        #expect(r.cancelled == [rid(1)])
        #expect(try center(t).requests.map(\.id) == ["water-the-plants"])
        #expect(r.issues == (status == .denied ? [ReminderIssue(goal: goalID(1), kind: .permissionDenied)] : []))
        // The goal's reminder setting is untouched.
        #expect(try t.store.goalState(goalID(1)).reminder?.value == ReminderTime(hour: 7, minute: 0))
        // Recovery: authorized again reschedules everything.
        try t.store.append(try drafts([#"{"type":"notificationAuthorization","status":"authorized"}"#]), now: now)
        let back = try FileCenterReconciler(store: t.store).reconcile(now: now)
        #expect(back.scheduled == [rid(1)])
        #expect(Set(try center(t).requests.map(\.id)) == [rid(1), "water-the-plants"])
    }

    @Test func anUnconfiguredDeviceIsLeftAlone() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts([goal(1)]), now: now)
        var file = try center(t)
        let stale = NotificationRequest(
            id: rid(9), goal: goalID(9), title: "Old", body: "Old", sound: "default",
            trigger: NotificationTrigger(kind: .calendar(year: nil, month: nil, day: nil, weekday: nil, hour: 8, minute: 0), repeats: true))
        file.requests = [stale]
        try file.save()
        let r = try FileCenterReconciler(store: t.store).reconcile(now: now, full: true)
        #expect(r.authorization == nil)
        #expect(r.scheduled.isEmpty && r.cancelled.isEmpty && r.issues.isEmpty)
        #expect(try center(t).requests == [stale])
    }

    @Test func changedRequestsAreReplacedAndUnrelatedIdsNeverTouched() throws {
        let t = try store(.authorized)
        try t.store.append(try drafts([goal(1), goal(2), goal(3), goal(4)]), now: now)
        _ = try FileCenterReconciler(store: t.store).reconcile(now: now)
        var file = try center(t)
        file.requests.append(
            NotificationRequest(
                id: "goal-reminder-not-a-uuid", goal: nil, title: "x", body: "x", sound: "default",
                trigger: NotificationTrigger(kind: .date(instant("2027-01-01T08:00:00Z")), repeats: false)))
        file.requests.append(
            NotificationRequest(
                id: "birthday", goal: nil, title: "x", body: "x", sound: "default",
                trigger: NotificationTrigger(kind: .calendar(year: nil, month: 5, day: 1, weekday: nil, hour: 8, minute: 0), repeats: true))
        )
        try file.save()
        try t.store.append(
            try drafts([
                #"{"type":"goalEdited","goal":"\#(goalID(1).uuidString)","title":"Renamed"}"#,
                #"{"type":"reminderSet","goal":"\#(goalID(2).uuidString)","hour":21}"#,
                #"{"type":"goalEdited","goal":"\#(goalID(3).uuidString)","cadence":"monthly"}"#,
            ]), now: now)
        // A body edited behind the ledger's back is repaired by the next pass, incremental too.
        var tampered = try center(t)
        let i = tampered.requests.firstIndex { $0.id == rid(4) }!
        tampered.requests[i].body = "tampered"
        try tampered.save()
        let incremental = try FileCenterReconciler(store: t.store).reconcile(now: now)
        #expect(!incremental.full)
        #expect(incremental.scheduled == [rid(1), rid(2), rid(3), rid(4)].sorted())
        let full = try FileCenterReconciler(store: t.store).reconcile(now: now, full: true)
        #expect(full.scheduled.isEmpty)
        #expect(full.unchanged == 4)
        let ids = Set(try center(t).requests.map(\.id))
        #expect(ids.contains("birthday") && ids.contains("goal-reminder-not-a-uuid"))
        let requests = try center(t).requests
        #expect(requests.first { $0.id == rid(1) }?.title == "Renamed")
        #expect(
            requests.first { $0.id == rid(2) }?.trigger.kind
                == .calendar(year: nil, month: nil, day: nil, weekday: nil, hour: 21, minute: 0))
        #expect(requests.first { $0.id == rid(3) }?.body == "Keep up this month's goal")
    }

    @Test func aRefusedRequestIsReportedAndRetriedByTheNextPass() throws {
        let t = try store(.authorized)
        var file = try center(t)
        file.refuse = [rid(1)]
        try file.save()
        try t.store.append(try drafts([goal(1), goal(2)]), now: now)
        let r = try FileCenterReconciler(store: t.store).reconcile(now: now)
        #expect(r.issues == [ReminderIssue(goal: goalID(1), kind: .schedulingFailure)])
        #expect(r.scheduled == [rid(2)])
        var lifted = try center(t)
        lifted.refuse = []
        try lifted.save()
        // Nothing changed in the ledger; the incremental pass still retries the failed goal.
        let retry = try FileCenterReconciler(store: t.store).reconcile(now: now)
        #expect(!retry.full)
        #expect(retry.scheduled == [rid(1)])
        #expect(retry.issues.isEmpty)
    }

    @Test func capacityKeepsTheSoonestAndReportsTheRest() throws {
        let t = try store(.authorized, capacity: 64)
        // 100 daily goals, reminder minutes spread so the soonest are well defined.
        let lines = (1...100).map { n in
            #"{"type":"goalCreated","goal":"\#(goalID(n).uuidString)","title":"G\#(n)","cadence":"daily","reminder":{"hour":\#(n / 60 + 13),"minute":\#(n % 60)}}"#
        }
        try t.store.append(try drafts(lines), now: now)
        let r = try FileCenterReconciler(store: t.store).reconcile(now: now)
        #expect(r.scheduled.count == 64)
        let over = r.issues.filter { $0.kind == .overCapacity }.map(\.goal)
        #expect(Set(over) == Set((65...100).map(goalID)))
        #expect(Set(try center(t).requests.compactMap(\.goal)) == Set((1...64).map(goalID)))
    }

    @Test func rebuildingNeverMakesAPassFire() throws {
        let t = try store(.authorized)
        try t.store.append(try drafts([goal(1), goal(2)]), now: now)
        _ = try FileCenterReconciler(store: t.store).reconcile(now: now)
        try t.store.rebuild()
        let r = try FileCenterReconciler(store: t.store).reconcile(now: now)
        // The pass compares what the center holds, finds it matching, and changes nothing.
        #expect(r.scheduled.isEmpty && r.cancelled.isEmpty && r.unchanged == 2)
        #expect(!r.full)
    }

    @Test func deletingAGoalOrClearingItsReminderCancelsItsRequest() throws {
        let t = try store(.authorized)
        try t.store.append(try drafts([goal(1), goal(2), goal(3, cadence: "once", extra: #","targetDate":"2026-12-01""#)]), now: now)
        #expect(try FileCenterReconciler(store: t.store).reconcile(now: now).scheduled.count == 3)
        try t.store.append(
            try drafts([
                #"{"type":"goalDeleted","goal":"\#(goalID(1).uuidString)"}"#,
                #"{"type":"reminderCleared","goal":"\#(goalID(2).uuidString)"}"#,
                #"{"type":"progressRecorded","goal":"\#(goalID(3).uuidString)","completed":true}"#,
            ]), now: now)
        let r = try FileCenterReconciler(store: t.store).reconcile(now: now)
        #expect(!r.full)
        #expect(r.cancelled == [rid(1), rid(2), rid(3)].sorted())
        #expect(try center(t).requests.isEmpty)
        // Restored with its reminder, the goal is scheduled again.
        try t.store.append(try drafts([#"{"type":"goalRestored","goal":"\#(goalID(1).uuidString)"}"#]), now: now)
        #expect(try FileCenterReconciler(store: t.store).reconcile(now: now).scheduled == [rid(1)])
    }

    @Test func dryRunChangesNothing() throws {
        let t = try store(.authorized)
        try t.store.append(try drafts([goal(1)]), now: now)
        let dry = try FileCenterReconciler(store: t.store).reconcile(now: now, dryRun: true)
        #expect(dry.scheduled == [rid(1)])
        #expect(try center(t).requests.isEmpty)
        #expect(try FileCenterReconciler(store: t.store).reconcile(now: now).scheduled == [rid(1)])
    }

    /// After any random change, an incremental pass leaves the same center as a full pass.
    @Test(arguments: 0..<40)
    func anIncrementalPassMatchesAFullPass(_ seed: Int) throws {
        let t = try store(.authorized, strategy: seed % 2 == 0 ? "repeating" : "window", capacity: 64)
        let dir = TemporaryDirectory()
        let incremental = FileCenterReconciler(store: t.store, centerPath: dir.path + "/incremental.json")
        let full = FileCenterReconciler(store: t.store, centerPath: dir.path + "/full.json")
        var rng = SeededRandom(seed: UInt64(seed) &+ 99)
        for step in 0..<8 {
            let batch = try RandomHistory.validBatch(for: t.store, rng: &rng, size: 1 + Int(rng.next() % 3), step: step)
                .map { d -> EventDraft in
                    // Give new goals a reminder so there is something to schedule.
                    guard case .goalCreated(var g) = d.payload else { return d }
                    g.reminder = try ReminderTime(hour: Int(rng.next() % 24), minute: 0)
                    var copy = d
                    copy.payload = .goalCreated(g)
                    return copy
                }
            try t.store.append(batch, now: now)
            let at = Instant(milliseconds: 1_793_602_800_000 + Int64(step) * 3_600_000 + 1_800_000)
            _ = try incremental.reconcile(now: at)
            _ = try full.reconcile(now: at, full: true)
            let a = try NotificationCenterFile.load(incremental.centerPath, defaultCapacity: 64).json
            let b = try NotificationCenterFile.load(full.centerPath, defaultCapacity: 64).json
            #expect(a == b, "seed \(seed) step \(step)")
        }
    }

    @Test func aRequestRemovedFromTheCenterFileIsScheduledAgainWithoutAFullPass() throws {
        let t = try store(.authorized)
        try t.store.append(try drafts([goal(1), goal(2)]), now: now)
        _ = try FileCenterReconciler(store: t.store).reconcile(now: now)
        var file = try center(t)
        file.requests.removeAll { $0.id == rid(1) }
        try file.save()
        let r = try FileCenterReconciler(store: t.store).reconcile(now: now)
        #expect(!r.full && r.scheduled == [rid(1)] && r.unchanged == 1)
    }

    @Test func aFiredOneTimeRequestIsDeliveredAndRemovedOnceTheGoalIsCompleted() throws {
        let t = try store(.authorized)
        try t.store.append(try drafts([goal(1, cadence: "once", extra: #","targetDate":"2026-11-06""#)]), now: now)
        #expect(try FileCenterReconciler(store: t.store).reconcile(now: now).scheduled == [rid(1)])
        // The next day, after 07:00 Berlin: the request has fired and is delivered.
        let later = instant("2026-11-06T09:00:00Z")
        _ = try FileCenterReconciler(store: t.store).reconcile(now: later)
        #expect(try center(t).requests.isEmpty)
        #expect(try center(t).delivered.map(\.id) == [rid(1)])
        try t.store.append(try drafts([#"{"type":"progressRecorded","goal":"\#(goalID(1).uuidString)","completed":true}"#]), now: later)
        let r = try FileCenterReconciler(store: t.store).reconcile(now: later)
        #expect(r.removedDelivered == [rid(1)])
        #expect(try center(t).delivered.isEmpty)
    }
}
