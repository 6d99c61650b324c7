import Foundation
import GoalLedgerTesting
import Testing

@testable import GoalLedger

/// Every pass reads the center and repairs drift, with the in-memory double as the center: the
/// reconciler needs nothing but the `ReminderCenter` protocol.
struct ReconcilerDriftTests {
    let now = instant("2026-11-05T12:00:00Z")

    func store() throws -> TemporaryStore {
        let t = try TemporaryStore()
        try t.store.append(
            try drafts([
                #"{"type":"deviceConfigured","timeZone":"Europe/Berlin","firstWeekday":2,"at":"2026-11-01T00:00:00Z"}"#,
                #"{"type":"notificationAuthorization","status":"authorized","at":"2026-11-01T00:00:00Z"}"#,
                goal(1), goal(2), goal(3),
            ]), now: now)
        return t
    }

    func goal(_ n: Int, cadence: String = "daily", extra: String = "") -> String {
        #"{"type":"goalCreated","goal":"\#(goalID(n).uuidString)","title":"Goal \#(n)","cadence":"\#(cadence)","reminder":{"hour":7}\#(extra)}"#
    }

    func rid(_ n: Int) -> String { "goal-reminder-" + goalID(n).uuidString }

    /// A store and a center brought in line by a first pass.
    func reconciled() async throws -> (TemporaryStore, Reconciler, InMemoryReminderCenter) {
        let t = try store()
        let center = InMemoryReminderCenter()
        center.withState { s in
            s.requests.append(
                NotificationRequest(
                    id: "birthday", goal: nil, title: "x", body: "x", sound: "default",
                    trigger: NotificationTrigger(kind: .date(instant("2027-01-01T08:00:00Z")), repeats: false)))
        }
        let reconciler = Reconciler(store: t.store, centerID: "test")
        let first = try await reconciler.reconcile(center: center, now: now)
        #expect(first.full && first.scheduled == [rid(1), rid(2), rid(3)])
        center.withState { $0.calls = [] }
        return (t, reconciler, center)
    }

    /// The center holds the title in another Unicode form (decomposed) than the ledger's
    /// (composed): Swift's `String` calls them equal, but the bytes differ, so the request is
    /// outdated and replaced.
    @Test func aTitleHeldInAnotherUnicodeFormIsReplaced() async throws {
        let (t, reconciler, center) = try await reconciled()
        try t.store.append(try drafts([#"{"type":"goalEdited","goal":"\#(goalID(1).uuidString)","title":"Caf\u00e9"}"#]), now: now)
        _ = try await reconciler.reconcile(center: center, now: now)
        center.withState { s in
            let i = s.requests.firstIndex { $0.id == rid(1) }!
            s.requests[i].title = "Cafe\u{301}"
        }
        #expect(center.requests.first { $0.id == rid(1) }?.title == "Caf\u{E9}")
        let r = try await reconciler.reconcile(center: center, now: now)
        #expect(r.scheduled == [rid(1)], "\(r.scheduled)")
        #expect(center.requests.first { $0.id == rid(1) }.map { Array($0.title.utf8) } == Array("Caf\u{E9}".utf8))
    }

    @Test func aRequestRemovedBehindTheLedgersBackIsScheduledAgain() async throws {
        let (_, reconciler, center) = try await reconciled()
        center.withState { s in s.requests.removeAll { $0.id == rid(2) } }
        let r = try await reconciler.reconcile(center: center, now: now)
        #expect(!r.full)
        #expect(r.scheduled == [rid(2)] && r.cancelled.isEmpty && r.unchanged == 2)
        #expect(Set(center.requests.map(\.id)) == [rid(1), rid(2), rid(3), "birthday"])
    }

    @Test func anAlteredRequestIsReplaced() async throws {
        let (_, reconciler, center) = try await reconciled()
        center.withState { s in
            let i = s.requests.firstIndex { $0.id == rid(3) }!
            s.requests[i].title = "changed by hand"
            s.requests[i].trigger = NotificationTrigger(kind: .date(instant("2026-12-24T18:00:00Z")), repeats: false)
        }
        let r = try await reconciler.reconcile(center: center, now: now)
        #expect(!r.full)
        #expect(r.scheduled == [rid(3)])
        #expect(center.requests.first { $0.id == rid(3) }?.title == "Goal 3")
    }

    @Test func aRefusedRequestIsReportedAndRetriedWithoutAFullPass() async throws {
        let (t, reconciler, center) = try await reconciled()
        center.withState { s in
            s.requests.removeAll { $0.id == rid(1) }
            s.refuse = [rid(1), rid(4)]
        }
        try t.store.append(try drafts([goal(4)]), now: now)
        let r = try await reconciler.reconcile(center: center, now: now)
        #expect(!r.full)
        #expect(
            r.issues == [
                ReminderIssue(goal: goalID(1), kind: .schedulingFailure), ReminderIssue(goal: goalID(4), kind: .schedulingFailure),
            ])
        // Still refused: reported again.
        let again = try await reconciler.reconcile(center: center, now: now)
        #expect(!again.full && again.issues.count == 2)
        center.withState { $0.refuse = [] }
        let retry = try await reconciler.reconcile(center: center, now: now)
        #expect(!retry.full)
        #expect(retry.scheduled == [rid(1), rid(4)] && retry.issues.isEmpty)
    }

    @Test func aForeignGoalReminderIsCancelledAndOtherIdsAreNeverTouched() async throws {
        let (_, reconciler, center) = try await reconciled()
        let foreign = "goal-reminder-" + goalID(99).uuidString
        center.withState { s in
            for id in [foreign, foreign + "-20261106", "goal-reminder-not-a-uuid", "reminder-for-mum"] {
                s.requests.append(
                    NotificationRequest(
                        id: id, goal: nil, title: "x", body: "x", sound: "default",
                        trigger: NotificationTrigger(kind: .date(instant("2026-11-06T08:00:00Z")), repeats: false)))
            }
        }
        let r = try await reconciler.reconcile(center: center, now: now)
        #expect(!r.full)
        #expect(r.cancelled == [foreign, foreign + "-20261106"])
        #expect(Set(center.requests.map(\.id)) == [rid(1), rid(2), rid(3), "birthday", "goal-reminder-not-a-uuid", "reminder-for-mum"])
    }

    @Test func schedulingComesBeforeCancelling() async throws {
        let (t, reconciler, center) = try await reconciled()
        try t.store.append(
            try drafts([#"{"type":"goalDeleted","goal":"\#(goalID(1).uuidString)"}"#, goal(5)]), now: now)
        center.withState { s in s.requests.removeAll { $0.id == rid(2) } }
        let r = try await reconciler.reconcile(center: center, now: now)
        #expect(r.scheduled == [rid(2), rid(5)] && r.cancelled == [rid(1)])
        let calls = center.withState { $0.calls }
        #expect(calls.last == "remove \(rid(1))")
        #expect(calls.dropLast().allSatisfy { $0.hasPrefix("add ") } && calls.count == 3)
    }

    @Test func aPassAfterNothingChangedCallsNothingButTheReads() async throws {
        let (_, reconciler, center) = try await reconciled()
        let r = try await reconciler.reconcile(center: center, now: now)
        #expect(!r.full && r.unchanged == 3 && r.scheduled.isEmpty && r.cancelled.isEmpty)
        #expect(center.withState { $0.calls }.isEmpty)
    }

    @Test func deletingClearingOrCompletingRemovesDeliveredNotifications() async throws {
        let (t, reconciler, center) = try await reconciled()
        try t.store.append(try drafts([goal(6, cadence: "once", extra: #","targetDate":"2026-12-01""#), goal(7)]), now: now)
        func delivered(_ n: Int) -> DeliveredNotification {
            DeliveredNotification(id: rid(n), goal: goalID(n), title: "Goal \(n)", body: "b", deliveredAt: instant("2026-11-04T06:00:00Z"))
        }
        center.withState { s in
            s.delivered = [1, 2, 3, 6, 7].map(delivered)
            s.delivered.append(DeliveredNotification(id: "news", goal: nil, title: "x", body: "x", deliveredAt: now))
        }
        _ = try await reconciler.reconcile(center: center, now: now)
        #expect(center.withState { $0.delivered.count } == 6)  // nothing to remove yet
        try t.store.append(
            try drafts([
                #"{"type":"goalDeleted","goal":"\#(goalID(1).uuidString)"}"#,
                #"{"type":"reminderCleared","goal":"\#(goalID(2).uuidString)"}"#,
                #"{"type":"progressRecorded","goal":"\#(goalID(6).uuidString)","completed":true}"#,
                #"{"type":"progressRecorded","goal":"\#(goalID(7).uuidString)","completed":true}"#,
            ]), now: now)
        let r = try await reconciler.reconcile(center: center, now: now)
        #expect(r.removedDelivered == [rid(1), rid(2), rid(6)].sorted())
        // A recurring goal completed for today keeps its reminders; other ids are not touched.
        #expect(Set(center.withState { $0.delivered }.map(\.id)) == [rid(3), rid(7), "news"])
        #expect(r.cancelled == [rid(1), rid(2), rid(6)].sorted())
    }

    @Test func aCenterWithoutDeliveredNotificationsIsNotAskedForThem() async throws {
        let (t, reconciler, center) = try await reconciled()
        center.withState { $0.supportsDelivered = false }
        try t.store.append(try drafts([#"{"type":"goalDeleted","goal":"\#(goalID(1).uuidString)"}"#]), now: now)
        let r = try await reconciler.reconcile(center: center, now: now)
        #expect(r.removedDelivered.isEmpty && r.cancelled == [rid(1)])
        #expect(!center.withState { $0.calls }.contains { $0.hasPrefix("removeDelivered") })
    }

    @Test func aDryRunOnlyReadsTheCenter() async throws {
        let (t, reconciler, center) = try await reconciled()
        try t.store.append(try drafts([goal(8)]), now: now)
        let dry = try await reconciler.reconcile(center: center, now: now, dryRun: true)
        #expect(dry.scheduled == [rid(8)])
        #expect(center.withState { $0.calls }.isEmpty)
        let real = try await reconciler.reconcile(center: center, now: now)
        #expect(real.scheduled == [rid(8)])
    }

    @Test func rebuildingDoesNotMakeAPassAct() async throws {
        let (t, reconciler, center) = try await reconciled()
        try t.store.rebuild()
        let r = try await reconciler.reconcile(center: center, now: now)
        #expect(!r.full && r.scheduled.isEmpty && r.cancelled.isEmpty)
        #expect(center.withState { $0.calls }.isEmpty)
    }
}
