import Foundation
import GoalLedgerTesting
import Testing

@testable import GoalLedger

/// An app's own words for its reminders: the provider's output is what a pass schedules and
/// compares, so a center holding the app's wording is stable.
struct ReminderContentProviderTests {
    let now = instant("2026-11-05T12:00:00Z")

    @Test func theProvidersWordsAreScheduledAndAPassThatChangesNothingAddsNothing() async throws {
        let t = try TemporaryStore()
        try t.store.configureDevice(try DeviceConfigured(timeZone: TimeZone(identifier: "Europe/Berlin")!, locale: "de_DE"), now: now)
        try t.store.reportAuthorization(.authorized, now: now)
        let run = try t.store.createGoal(title: "Laufen", cadence: .daily, reminder: try ReminderTime(hour: 7, minute: 30), now: now)
        let german: ReminderContentProvider = { request in
            ReminderText(title: "🏃 " + request.title, body: "Zeit für dein Tagesziel")
        }
        let center = InMemoryReminderCenter()
        let reconciler = Reconciler(store: t.store, centerID: "app", content: german)
        let first = try await reconciler.reconcile(center: center, now: now)
        #expect(first.scheduled.count == 1)
        #expect(center.requests.map(\.title) == ["🏃 Laufen"] && center.requests.map(\.body) == ["Zeit für dein Tagesziel"])

        // Nothing changed: the held request is the provider's output, so nothing is re-added.
        let calls = center.withState { $0.calls.count }
        let second = try await reconciler.reconcile(center: center, now: now, full: true)
        #expect(second.scheduled.isEmpty && second.unchanged == 1)
        #expect(center.withState { $0.calls.count } == calls, "nothing added or removed")

        // A new title: the provider words it anew.
        try t.store.editGoal(run, title: "Joggen", now: now)
        let third = try await reconciler.reconcile(center: center, now: now)
        #expect(third.scheduled.count == 1 && center.requests.map(\.title) == ["🏃 Joggen"])

        // Without the provider, the ledger's own wording replaces the app's.
        let plain = try await Reconciler(store: t.store, centerID: "app").reconcile(center: center, now: now, full: true)
        #expect(plain.scheduled.count == 1 && center.requests.map(\.title) == ["Joggen"])
        _ = run
    }
}
