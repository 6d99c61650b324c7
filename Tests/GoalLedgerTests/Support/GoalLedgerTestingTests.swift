import Foundation
import GoalLedger
import GoalLedgerTesting
import Testing

/// The testing product an app's tests use: temporary ledgers and the in-memory center.
@Suite struct GoalLedgerTestingTests {
    let now = Instant(rfc3339: "2026-03-02T08:00:00Z")!

    @Test func aTemporaryLedgerHoldsDevicesThatSyncAndIsRemovedWhenReleased() throws {
        var directory = ""
        do {
            let ledger = try TemporaryLedger(device: "phone")
            directory = ledger.directory
            let goal = try ledger.store.createGoal(title: "Read", now: now)
            let laptop = try ledger.device("laptop", now: now)
            try laptop.recordCompletion(goal, now: now)
            #expect(try ledger.store.sync(with: laptop).pulled.imported == 1)
            #expect(try ledger.store.goal(goal, now: now)?.view.completed == true)
            #expect(FileManager.default.fileExists(atPath: directory + "/laptop"))
        }
        #expect(!directory.isEmpty && !FileManager.default.fileExists(atPath: directory))
    }

    @Test func twoTemporaryLedgersAreApart() throws {
        let a = try TemporaryLedger()
        let b = try TemporaryLedger()
        #expect(a.directory != b.directory)
        #expect(a.store.ledgerID != b.store.ledgerID)
    }

    @Test func theInMemoryCenterReceivesAPassAndRefusesWhenFull() async throws {
        let ledger = try TemporaryLedger()
        try ledger.store.configureDevice(DeviceConfigured(timeZone: "UTC"), now: now)
        try ledger.store.reportAuthorization(.authorized, now: now)
        for title in ["Read", "Walk"] {
            try ledger.store.createGoal(title: title, cadence: .daily, reminder: try ReminderTime(hour: 9, minute: 0), now: now)
        }
        let center = InMemoryReminderCenter(capacity: 1)
        let report = try await Reconciler(store: ledger.store, centerID: "test").reconcile(center: center, now: now)
        #expect(center.requests.count == 1 && report.scheduled.count == 1)
        #expect(report.issues.map(\.kind) == [.schedulingFailure])
        #expect(center.requests.allSatisfy { $0.nextFireAt == nil && $0.goal != nil })
    }

    /// The article "Tests and previews", step by step, as it is written.
    @Test func theArticlesSteps() async throws {
        let now = Instant(rfc3339: "2026-03-02T08:00:00Z")!
        let ledger = try TemporaryLedger(device: "phone")
        try ledger.store.configureDevice(DeviceConfigured(timeZone: "Europe/Berlin"), now: now)
        try ledger.store.reportAuthorization(.authorized, now: now)
        let read = try ledger.store.createGoal(title: "Read", cadence: .daily, reminder: try ReminderTime(hour: 20, minute: 0), now: now)
        try ledger.store.recordCompletion(read, now: now)

        let goal = try #require(try ledger.store.goal(read, now: now))
        #expect(goal.view.completed)
        #expect(goal.view.streak?.current == 1)

        let laptop = try ledger.device("laptop", now: now)
        try laptop.recordCompletion(read, completed: false, now: now)
        _ = try await ledger.store.sync(with: laptop)
        #expect(try ledger.store.digest() == laptop.digest())
        #expect(try ledger.store.goal(read, now: now)?.view.completed == false)

        let center = InMemoryReminderCenter(capacity: 64)
        let report = try await Reconciler(store: ledger.store, centerID: "test").reconcile(center: center, now: now)
        #expect(center.requests.map(\.goal) == [read])
        #expect(center.withState { $0.calls }.count == report.scheduled.count)

        let water = try ledger.store.createGoal(
            title: "Drink water", cadence: .daily, progress: .measurable(target: try Amount(2), unit: "l"), now: now)
        try ledger.store.recordProgress(water, amount: try Amount("0.5"), now: now)
        #expect(try ledger.store.goal(water, now: now)?.view.value == (try Amount("0.5")))
    }
}
