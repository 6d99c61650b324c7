import Foundation
import GoalLedger
import Testing

// The example of the article "A goals screen with the typed API", compiled and run, with the
// public API only.

/// What a list screen holds: the goals and their views for this device at one moment.
struct GoalsScreen {
    var rows: [GoalSnapshot]

    init(store: LedgerStore, now: Instant) throws {
        rows = try store.read { try $0.goals(now: now) }
    }

    /// One row's text, as a cell would show it.
    func line(_ s: GoalSnapshot) -> String {
        var text = s.goal.title
        if s.goal.progressKind == .measurable, let target = s.goal.target {
            text += ": \(s.view.value ?? .zero)/\(target)"
        } else {
            text += s.view.completed ? ": done" : ": not yet"
        }
        if let streak = s.view.streak, streak.current > 0 { text += " · \(streak.current) in a row" }
        return text
    }
}

struct GoalsScreenExampleTests {
    @Test func aGoalsScreenFromTypedCalls() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-screen-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let morning = Instant(Date(timeIntervalSince1970: 1_793_606_400))  // 2026-11-02T07:00:00Z

        // Set up: this device's calendar, then two goals.
        let store = try LedgerStore.create(at: dir + "/store", device: "phone")
        let (water, call) = try store.write { writer in
            try writer.configureDevice(
                try DeviceConfigured(timeZone: TimeZone(identifier: "Europe/Berlin")!, firstWeekday: 2), now: morning)
            let water = try writer.createGoal(
                title: "Drink water", cadence: .daily, progress: .measurable(target: try .target(2), unit: "l"),
                reminder: try ReminderTime(hour: 9, minute: 0), now: morning)
            let call = try writer.createGoal(title: "Call grandma", cadence: .weekly, now: morning)
            return (water, call)
        }

        // Record progress: checked amounts, exact sums.
        try store.write { writer in
            for litres in [0.1, 0.2, 0.5] {
                try writer.recordProgress(water, amount: try Amount(litres), now: morning)
            }
            try writer.recordCompletion(call, now: morning)
        }

        // The screen, and a detail read from the same state.
        let screen = try GoalsScreen(store: store, now: morning)
        #expect(Set(screen.rows.map(screen.line)) == ["Drink water: 0.8/2", "Call grandma: done · 1 in a row"])
        let (rows, detail) = try store.read { snapshot in (try snapshot.goals(now: morning), try snapshot.goal(water, now: morning)) }
        #expect(rows.first { $0.id == water } == detail)

        // Cache the screen or hand it to a widget: snapshots are Codable in the command line's form.
        let data = try JSONEncoder().encode(rows)  // [{"id": …, "view": {…}}, …]
        let cached = try JSONDecoder().decode([GoalSnapshot].self, from: data)  // == rows
        #expect(cached == rows)

        // A value the user typed that the ledger cannot hold is refused where it is made,
        // naming the field; nothing is written.
        do throws(FieldError) {
            _ = try Amount("0.1234567")
            Issue.record("an amount with seven digits after the point was accepted")
        } catch {
            #expect(error.field == "amount")
        }
        // A goal the store does not know: a `LedgerError` an app can show as it is.
        let one = try Amount(1)
        do {
            try store.write { try $0.recordProgress(UUID(), amount: one, now: morning) }
            Issue.record("progress on an unknown goal was accepted")
        } catch let error as LedgerError {
            #expect(error.code == .invalidInput)
            #expect(error.message.contains("event 1 of the batch"))
            #expect(error.localizedDescription == "This change could not be saved.")
            #expect(error.failureReason == "This goal is not on this device (yet).")
        }
        #expect(try store.read { try $0.goals(now: morning) }.count == 2)
    }

    /// The article's other steps: writes off the main actor, reminders in the app's own
    /// center and words, another device, and an error message chosen by its reason.
    @Test @MainActor func theArticlesOtherSteps() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-screen-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let morning = Instant(Date(timeIntervalSince1970: 1_793_606_400))  // 2026-11-02T07:00:00Z
        let store = try LedgerStore.create(at: dir + "/store", device: "phone")
        let reminder = try ReminderTime(hour: 18, minute: 0)
        let call = try await store.write { writer in
            try writer.reportAuthorization(.authorized, now: morning)
            return try writer.createGoal(title: "Call grandma", cadence: .weekly, reminder: reminder, now: morning)
        }

        // Write off the main actor.
        try await store.write { try $0.recordCompletion(call, now: morning) }

        // Reminders in the app's own center, in its own words.
        let center = InMemoryCenter()
        let reminders = Reconciler(store: store, centerID: "system") { request in
            ReminderText(title: request.title, body: "Time for it")
        }
        let report = try await reminders.reconcile(center: center, now: morning)
        #expect(report.scheduled.count == 1)
        #expect(await center.held.map(\.body) == ["Time for it"])

        // Another device.
        let laptop = try store.clone(to: dir + "/laptop", device: "laptop", now: morning)
        try await laptop.write { try $0.recordCompletion(call, completed: false, now: morning) }
        let result = try await store.sync(with: laptop)
        #expect(result.pulled.imported == 1)

        // An error's message, chosen by its reason.
        func message(for error: LedgerError) -> String {
            switch error.reason {
            case .unknownGoal?: "That goal is gone."
            case .versionConflict?: "Someone changed this goal meanwhile."
            case .peerUnreachable?: "Offline. Your changes are saved and will sync later."
            case .deviceRevoked?, .signerNotTrusted?, .signingKeyMissing?: "Set this device up again."
            default: error.localizedDescription
            }
        }
        do {
            try await store.write { try $0.recordCompletion(UUID(), now: morning) }
            Issue.record("a completion of an unknown goal was written")
        } catch let error as LedgerError {
            #expect(message(for: error) == "That goal is gone.")
        }
    }
}

/// A center an app keeps itself (the article's `center`).
actor InMemoryCenter: ReminderCenter {
    var held: [NotificationRequest] = []
    func pendingRequests() async throws -> [NotificationRequest] { held }
    func add(_ request: NotificationRequest) async throws {
        held.removeAll { $0.id == request.id }
        held.append(request)
    }
    func removePendingRequests(withIdentifiers ids: [String]) async throws { held.removeAll { ids.contains($0.id) } }
    /// The article's live values (any read observed) and its edit guarded on the title alone.
    @Test func theArticlesLiveValuesAndGuardedEdit() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-screen-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let morning = Instant(Date(timeIntervalSince1970: 1_793_606_400))  // 2026-11-02T07:00:00Z
        let store = try LedgerStore.create(at: dir + "/store", device: "phone")
        let water = try await store.write { writer in
            try writer.createGoal(
                title: "Drink water", cadence: .daily, progress: .measurable(target: try .target(2), unit: "l"), tags: ["health"],
                now: morning)
        }

        // Keep the screen live: any read, observed.
        let health = store.observe { snapshot in
            try snapshot.goals(now: morning, includingEntries: false).filter { $0.goal.tags.contains("health") }.count
        }
        var counts = health.makeAsyncIterator()
        #expect(try await counts.next() == 1)

        // Edit without overwriting another edit: progress logged meanwhile does not stop it.
        let shown = try #require(try await store.read { try $0.goal(water, now: morning) }).goal
        let one = try Amount(1)
        try await store.write { try $0.recordProgress(water, amount: one, now: morning) }
        try await store.write { writer in
            try writer.editGoal(water, title: "Water", ifUnchangedSince: [.title: shown.version(of: .title)], now: morning)
        }
        #expect(try await store.read { try $0.goal(water) }?.title == "Water")
        do {
            try await store.write { writer in
                try writer.editGoal(water, title: "Juice", ifUnchangedSince: [.title: shown.version(of: .title)], now: morning)
            }
            Issue.record("an edit of a title changed since it was read was written")
        } catch let error as LedgerError {
            #expect(error.code == .versionConflict && error.reason == .fieldVersionConflict(goal: water, field: .title))
        }
        try await store.write { writer in
            try writer.addTag("health", to: try writer.createGoal(title: "Walk", now: morning), now: morning)
        }
        #expect(try await counts.next() == 2)
    }
}
