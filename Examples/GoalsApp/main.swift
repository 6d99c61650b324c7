// A small goals app on the ledger's public API, run by the test command: it creates goals,
// records progress, shows its list screen, observes changes made by another task and by another
// process, reconciles reminders with its own notification center, syncs a second device, and
// handles each kind of error. Every step checks what it expects; any miss exits 1.
import Foundation
import GoalLedger

func check(_ ok: Bool, _ what: String) {
    guard ok else {
        print("FAIL \(what)")
        exit(1)
    }
    print("ok   \(what)")
}

// Run as `goals-example --record STORE GOAL`, it is "another process" recording progress.
let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "--record", let goal = UUID(uuidString: arguments[3]) {
    let store = try LedgerStore.open(at: arguments[2])
    try store.recordProgress(goal, amount: try Amount(0.25))
    exit(0)
}

/// The app's own key store (an app would use the keychain): `SigningKey` comes with
/// `import GoalLedger`, no other module.
final class AppKeyStore: DeviceKeyStore, @unchecked Sendable {
    private let lock = NSLock()
    private var keys: [String: SigningKey] = [:]
    var count: Int { lock.withLock { keys.count } }

    func key(ledger: UUID, device: String) throws(LedgerError) -> SigningKey? {
        lock.withLock { keys["\(ledger)/\(device)"] }
    }

    func save(_ key: SigningKey, ledger: UUID, device: String) throws(LedgerError) {
        lock.withLock { keys["\(ledger)/\(device)"] = key }
    }
}

/// The app's own notification center: an actor holding what is scheduled.
actor AppCenter: ReminderCenter {
    private var pending: [String: NotificationRequest] = [:]
    var scheduledTitles: [String] { pending.values.map(\.title).sorted() }

    func pendingRequests() async throws -> [NotificationRequest] { Array(pending.values) }
    func add(_ request: NotificationRequest) async throws { pending[request.id] = request }
    func removePendingRequests(withIdentifiers ids: [String]) async throws { for id in ids { pending[id] = nil } }
    nonisolated var supportsDeliveredNotifications: Bool { false }
    func deliveredNotifications() async throws -> [DeliveredNotification] { [] }
    func removeDeliveredNotifications(withIdentifiers ids: [String]) async throws {}
}

// A step that waits for a change that never comes fails the run instead of hanging it.
DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
    print("FAIL the example did not finish within 60 s")
    exit(1)
}
try await runExample()

func runExample() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("goals-example-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let now = Instant(Date(timeIntervalSince1970: 1_793_606_400))  // 2026-11-02T07:00:00Z, a Monday

    // 1. Goals and progress, typed.
    let phone = try LedgerStore.create(at: directory + "/phone", device: "phone")
    try await phone.configureDevice(try DeviceConfigured(timeZone: TimeZone(identifier: "Europe/Berlin")!, firstWeekday: 2), now: now)
    try await phone.reportAuthorization(.authorized, now: now)
    let water = try await phone.createGoal(
        title: "Drink water", cadence: .daily, progress: .measurable(target: try .target(2), unit: "l"),
        reminder: try ReminderTime(hour: 20, minute: 0), now: now)
    let call = try await phone.createGoal(title: "Call grandma", cadence: .weekly, reminder: try ReminderTime(hour: 18, minute: 30), now: now)
    for litres in [0.1, 0.2, 0.2] { try await phone.recordProgress(water, amount: try Amount(litres), now: now) }

    // 2. The list screen.
    let rows = try phone.goals(now: now)
    check(Set(rows.map(\.goal.title)) == ["Drink water", "Call grandma"], "goals(now:) lists both goals")
    check(rows.first { $0.id == water }?.view.value == 0.5, "today's water is exactly 0.5 l (0.1 + 0.2 + 0.2)")
    check(rows.first { $0.id == call }?.view.completed == false, "the call is not done this week")

    // 3. Observation: another task, then another process.
    let updates = phone.observeGoal(water, now: { now }, otherProcesses: .milliseconds(100))
    var iterator = updates.makeAsyncIterator()
    check(try await iterator.next()??.view.value == 0.5, "the observation starts with the current value")
    try await Task.detached { try phone.recordProgress(water, amount: try Amount(0.25), now: now) }.value
    check(try await iterator.next()??.view.value == 0.75, "a write of another task arrives")
    let child = Process()
    child.executableURL = URL(fileURLWithPath: arguments[0])
    child.arguments = ["--record", directory + "/phone", water.uuidString]
    try child.run()
    child.waitUntilExit()
    check(child.terminationStatus == 0, "another process recorded progress")
    var fromOtherProcess = false
    while let value = try await iterator.next() {
        if value?.goal.entries.count == 5 {
            fromOtherProcess = true
            break
        }
    }
    check(fromOtherProcess, "a write of another process arrives")

    // 4. Reminders in the app's own center.
    let center = AppCenter()
    let report = try await Reconciler(store: phone, centerID: "app").reconcile(center: center, now: now)
    check(report.issues.isEmpty && !report.scheduled.isEmpty, "a pass schedules the goals' reminders (\(report.scheduled.count))")
    check(Set(await center.scheduledTitles) == ["Drink water", "Call grandma"], "the center holds both goals' reminders")
    let again = try await Reconciler(store: phone, centerID: "app").reconcile(center: center, now: now)
    check(again.scheduled.isEmpty && again.cancelled.isEmpty, "a second pass changes nothing")

    // 5. A second device, synced.
    let laptop = try phone.clone(to: directory + "/laptop", device: "laptop", now: now)
    try await laptop.recordCompletion(call, now: now)
    let moved = try await phone.sync(with: laptop)
    check(moved.pulled.imported == 1, "the laptop's completion reaches the phone")
    check(try phone.goal(call, now: now)?.view.completed == true, "the phone shows the call done")
    // The facts are the same on both; the views are each device's own (the laptop has no
    // calendar of its own yet, so its days are UTC's).
    check(Set(try phone.goals(now: now).map(\.goal)) == Set(try laptop.goals(now: now).map(\.goal)), "both devices hold the same goals")

    // 6. Errors an app shows, by kind.
    do {
        _ = try Amount(0.1234567)
        check(false, "seven digits after the point are refused")
    } catch {
        check(error.field == "amount", "a checked value names its field (\(error.message))")
    }
    let one = try Amount(1)
    do {
        try await phone.recordProgress(UUID(), amount: one, now: now)
        check(false, "progress on an unknown goal is refused")
    } catch {
        check(
            error.code == .invalidInput && error.reason == .invalidEvent(field: "goal", index: 1, line: nil),
            "an event that breaks a rule names its field and place: \(error.localizedDescription)")
    }
    do {
        try await phone.append([EventDraft(payload: .tagAdded(TagAdded(goal: water, tag: "x")))], expectedVersion: 1, now: now)
        check(false, "a stale expected version is refused")
    } catch {
        if case .versionConflict(let goal, let expected, _)? = error.reason {
            check(goal == water && expected == 1, "a stale expected version is a version conflict of that goal")
        } else {
            check(false, "a stale expected version carries its reason")
        }
    }
    do {
        _ = try LedgerStore.open(at: directory + "/nowhere")
        check(false, "a missing store is refused")
    } catch {
        check(error.code == .store && error.reason == .noStore(path: directory + "/nowhere"), "a missing store says so: \(error.message)")
    }
    check(try phone.verify().isClean, "the phone's store verifies clean")

    // 7. The app keeps the device key itself.
    let keys = AppKeyStore()
    let watch = try LedgerStore.create(at: directory + "/watch", device: "watch", keys: keys)
    try await watch.createGoal(title: "Stretch", now: now)
    let watchKey = try watch.publicKey()
    check(keys.count == 1 && watchKey != nil, "a store signs with a key the app keeps")
    print("the goals example ran every step")
}
