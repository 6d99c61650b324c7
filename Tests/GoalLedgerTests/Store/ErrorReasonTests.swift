import Foundation
import Testing

@testable import GoalLedger

/// The reasons an app branches on, beside the message it shows.
struct ErrorReasonTests {
    let now = instant("2026-11-05T12:00:00Z")

    struct BrokenCenter: ReminderCenter {
        struct Unplugged: Error, CustomStringConvertible { var description: String { "unplugged" } }
        func pendingRequests() async throws -> [NotificationRequest] { throw Unplugged() }
        func add(_ request: NotificationRequest) async throws {}
        func removePendingRequests(withIdentifiers ids: [String]) async throws {}
        var supportsDeliveredNotifications: Bool { false }
        func deliveredNotifications() async throws -> [DeliveredNotification] { [] }
        func removeDeliveredNotifications(withIdentifiers ids: [String]) async throws {}
    }

    @Test func eachFailureAnAppHandlesHasItsReason() async throws {
        let t = try TemporaryStore()
        let goal = try t.store.createGoal(title: "Read", now: now)
        // A rule broken by the second event of a batch: its field and place.
        let bad = ledgerError {
            try t.store.append(
                [EventDraft(payload: .tagAdded(TagAdded(goal: goal, tag: "a"))), EventDraft(payload: .tagAdded(TagAdded(goal: UUID(), tag: "b")))],
                now: now)
        }
        #expect(bad?.reason == .invalidEvent(field: "goal", index: 2, line: nil), "\(String(describing: bad?.reason))")
        // The same from JSON lines names the line too.
        let line = ledgerError {
            try t.store.append(try drafts([#"{"type":"tagAdded","goal":"\#(UUID().uuidString)","tag":"x"}"#]), lines: [7], now: now)
        }
        #expect(line?.reason == .invalidEvent(field: "goal", index: 1, line: 7), "\(String(describing: line?.reason))")
        let stale = ledgerError {
            try t.store.append([EventDraft(payload: .tagAdded(TagAdded(goal: goal, tag: "a")))], expectedVersion: 5, now: now)
        }
        #expect(stale?.reason == .versionConflict(goal: goal, expected: 5, actual: 1))
        let missing = ledgerError { _ = try LedgerStore.open(at: t.directory.path + "/nowhere") }
        #expect(missing?.reason == .noStore(path: t.directory.path + "/nowhere"))
        // A center that fails: its own error is carried.
        try t.store.reportAuthorization(.authorized, now: now)
        do {
            _ = try await Reconciler(store: t.store, centerID: "broken").reconcile(center: BrokenCenter(), now: now)
            Issue.record("a failing center went unreported")
        } catch {
            #expect(error.reason == .notificationCenterFailed(description: "unplugged"))
        }
        // A failure with no more specific reason than its code.
        #expect(LedgerError(.store, "anything").reason == nil)
        #expect(LedgerError(.store, "a projection row is damaged", remedy: .rebuild).reason == .projectionDamaged)
    }
}
