// A small goals app on the ledger's public API, run by the test command: it creates goals,
// records progress, shows its list screen in the person's order, observes changes made by
// another task and by another process (a goal and any read of its own), reconciles reminders
// with its own notification center, syncs a second device, then three devices through a relay
// of blobs with the outbox, appends a long input in chunks, guards an edit per field, and shows
// each error with its text for people. Every step checks what it expects; any miss exits 1.
import Foundation
import GoalLedger
import LedgerSync

func check(_ ok: Bool, _ what: String) {
    guard ok else {
        print("FAIL \(what)")
        exit(1)
    }
    print("ok   \(what)")
}

// Run as `goals-example --record STORE GOAL`, it is "another process" recording progress.
let arguments = CommandLine.arguments
/// Records 0.25 of `goal` in the store at `path`, in a write of its own.
func record(_ goal: UUID, in path: String) throws {
    let store = try LedgerStore.open(at: path)
    try store.write { try $0.recordProgress(goal, amount: try Amount(0.25)) }
}
if arguments.count == 4, arguments[1] == "--record", let goal = UUID(uuidString: arguments[3]) {
    try record(goal, in: arguments[2])
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

    /// Loses every key (a keychain wiped).
    func forget() { lock.withLock { keys.removeAll() } }

    /// Puts a new key in place of `device`'s (a key replaced by hand): the ledger refuses it.
    func substitute(ledger: UUID, device: String) { lock.withLock { keys["\(ledger)/\(device)"] = SigningKey.generate() } }
}

/// A copy of `store`'s files, opened as a store: the same device twice, as a careless restore
/// or a copied app container makes it (LMDB's lock file is not copied: it belongs to the
/// processes of the original).
func copyOfStore(_ store: LedgerStore, to path: String) throws -> LedgerStore {
    let fm = FileManager.default
    try fm.createDirectory(atPath: path, withIntermediateDirectories: true)
    for file in try fm.contentsOfDirectory(atPath: store.path) where file != "lock.mdb" {
        try fm.copyItem(atPath: store.path + "/" + file, toPath: path + "/" + file)
    }
    return try LedgerStore.open(at: path)
}

/// A center that cannot be reached (the system's, say, in a broken state).
struct FailingCenter: ReminderCenter {
    struct Unplugged: Error {}
    func pendingRequests() async throws -> [NotificationRequest] { throw Unplugged() }
    func add(_ request: NotificationRequest) async throws { throw Unplugged() }
    func removePendingRequests(withIdentifiers ids: [String]) async throws { throw Unplugged() }
}

/// What the app shows for a failure: the error's own text for people (no ids, paths or keys:
/// the message keeps those for the log), and its own words where the app reacts to the reason.
func shown(_ error: LedgerError) -> String {
    switch error.reason {
    case .peerUnreachable?: return "Offline. Your changes are saved and will sync later."
    case .versionConflict?: return "Someone changed this goal meanwhile. Here is the latest."
    case .fieldVersionConflict(_, let field)?: return "Someone changed this goal's \(field.rawValue) meanwhile. Here is the latest."
    default: return [error.localizedDescription, error.failureReason, error.recoverySuggestion].compactMap { $0 }.joined(separator: " ")
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
/// A relay that keeps the blobs it is given and hands each device all of them, as a CloudKit
/// container or a bucket would: here in memory, the last first and the first twice.
actor BlobRelay {
    private var blobs: [[UInt8]] = []
    func upload(_ blob: [UInt8]) { blobs.append(blob) }
    func download() -> [[UInt8]] { blobs.reversed() + blobs.prefix(1) }
}

/// Uploads what the relay lacks of `store`, blob by blob; returns the token to keep once every
/// upload is confirmed (a failed upload keeps the old token: the blob goes again).
func uploadToRelay(_ store: LedgerStore, token: RelayToken?, relay: BlobRelay) async throws -> RelayToken? {
    var confirmed = token
    while true {
        let since = confirmed
        let (blob, next) = try await store.read { try $0.outgoing(since: since) }
        if blob.count == 0 { return confirmed }
        await relay.upload(blob.encoded())
        confirmed = next
    }
}

/// Applies the relay's blobs in the order they came; returns the token moved past them.
func downloadFromRelay(_ store: LedgerStore, token: RelayToken?, blobs: [[UInt8]]) async throws -> RelayToken? {
    var current = token
    for bytes in blobs {
        let blob = try ChangeSet(decoding: bytes, source: "a blob of the relay")
        let since = current
        current = try await store.write { try $0.applyRelayed(blob, token: since) }.token
    }
    return current
}

extension Array {
    /// `map` with an async transform, in order.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for element in self { out.append(try await transform(element)) }
        return out
    }
}

try await runExample()

func runExample() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("goals-example-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let now = Instant(Date(timeIntervalSince1970: 1_793_606_400))  // 2026-11-02T07:00:00Z, a Monday

    // 1. Goals and progress, typed.
    let phone = try LedgerStore.create(at: directory + "/phone", device: "phone")
    try await phone.write {
        try $0.configureDevice(try DeviceConfigured(timeZone: TimeZone(identifier: "Europe/Berlin")!, firstWeekday: 2), now: now)
    }
    try await phone.write { try $0.reportAuthorization(.authorized, now: now) }
    let water = try await phone.write {
        try $0.createGoal(
            title: "Drink water", cadence: .daily, progress: .measurable(target: try .target(2), unit: "l"),
            reminder: try ReminderTime(hour: 20, minute: 0), now: now)
    }
    let call = try await phone.write {
        try $0.createGoal(title: "Call grandma", cadence: .weekly, reminder: try ReminderTime(hour: 18, minute: 30), now: now)
    }
    for litres in [0.1, 0.2, 0.2] { try await phone.write { try $0.recordProgress(water, amount: try Amount(litres), now: now) } }

    // 2. The list screen.
    let rows = try await phone.read { try $0.goals(now: now) }
    check(Set(rows.map(\.goal.title)) == ["Drink water", "Call grandma"], "goals(now:) lists both goals")
    check(rows.first { $0.id == water }?.view.value?.description == "0.5", "today's water is exactly 0.5 l (0.1 + 0.2 + 0.2)")
    check(rows.first { $0.id == call }?.view.completed == false, "the call is not done this week")

    // 2b. The person's order: the call goes first; a new goal goes last.
    try await phone.write { try $0.moveGoal(call, after: nil, now: now) }
    let stretch = try await phone.write { try $0.createGoal(title: "Stretch", cadence: .weekly, now: now) }
    let ordered = try await phone.read { try $0.goals(now: now) }.map(\.id)
    check(ordered == [call, water, stretch], "goals(now:) lists the person's order: the moved call first, the new goal last")
    // A weekly reminder on the day the person chose (Saturday), at its time in Berlin.
    try await phone.write { try $0.setReminder(stretch, at: try ReminderTime(weekday: 7, hour: 8, minute: 0), now: now) }
    let stretchReminder = try await phone.read { try $0.goal(stretch, now: now) }?.goal.reminder
    check(stretchReminder?.weekday == 7, "a weekly reminder keeps its chosen weekday")

    // 3. Observation: another task, then another process.
    let updates = phone.observeGoal(water, now: { now }, otherProcesses: .milliseconds(100))
    var iterator = updates.makeAsyncIterator()
    check(try await iterator.next()??.view.value?.description == "0.5", "the observation starts with the current value")
    _ = try await Task.detached { try await phone.write { try $0.recordProgress(water, amount: try Amount(0.25), now: now) } }.value
    check(try await iterator.next()??.view.value?.description == "0.75", "a write of another task arrives")
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

    // 3b. Any read observed: how many goals are still open today; a completion changes it.
    let openCount = phone.observe { snapshot in try snapshot.goals(now: now).filter { !$0.view.completed }.count }
    var openIterator = openCount.makeAsyncIterator()
    let openBefore = try await openIterator.next()
    check(openBefore == 3, "an observed read starts with its value (3 open goals)")
    try await phone.write { try $0.recordCompletion(stretch, now: now) }
    let openAfter = try await openIterator.next()
    check(openAfter == 2, "and yields again when a commit changes it (2 open)")

    // 4. Reminders in the app's own center, worded by the app.
    let center = AppCenter()
    let wording: ReminderContentProvider = { request in
        ReminderText(title: "⏰ " + request.title, body: "Time for it")
    }
    let reminders = Reconciler(store: phone, centerID: "app", content: wording)
    let report = try await reminders.reconcile(center: center, now: now)
    check(report.issues.isEmpty && !report.scheduled.isEmpty, "a pass schedules the goals' reminders (\(report.scheduled.count))")
    check(
        Set(await center.scheduledTitles) == ["⏰ Drink water", "⏰ Call grandma", "⏰ Stretch"],
        "the center holds the goals' reminders, in the app's words")
    let again = try await reminders.reconcile(center: center, now: now)
    check(again.scheduled.isEmpty && again.cancelled.isEmpty, "a second pass changes nothing")

    // 5. A second device, synced.
    let laptop = try phone.clone(to: directory + "/laptop", device: "laptop", now: now)
    try await laptop.write { try $0.recordCompletion(call, now: now) }
    let moved = try await phone.sync(with: laptop)
    check(moved.pulled.imported == 1, "the laptop's completion reaches the phone")
    let shownCall = try await phone.read { try $0.goal(call, now: now) }
    check(shownCall?.view.completed == true, "the phone shows the call done")
    // The facts are the same on both; the views are each device's own (the laptop has no
    // calendar of its own yet, so its days are UTC's).
    let phoneGoals = try await phone.read { try $0.goals(now: now) }
    let laptopGoals = try await laptop.read { try $0.goals(now: now) }
    check(Set(phoneGoals.map(\.goal)) == Set(laptopGoals.map(\.goal)), "both devices hold the same goals")
    check(laptopGoals.map(\.id) == phoneGoals.map(\.id), "and list them in the same order")

    // 5b. Three devices through a relay of blobs (a CloudKit container, a bucket): each uploads
    //     what the relay lacks and applies what it delivers, in any order and some twice.
    let tablet = try phone.clone(to: directory + "/tablet", device: "tablet", now: now)
    try await laptop.write { try $0.moveGoal(stretch, after: nil, now: now) }
    try await tablet.write { try $0.recordProgress(water, amount: try Amount("0.3"), now: now) }
    let relay = BlobRelay()
    var tokens: [String: Data] = [:]
    for device in [phone, laptop, tablet] {
        tokens[device.device] = try JSONEncoder().encode(try await uploadToRelay(device, token: nil, relay: relay))
    }
    for device in [phone, laptop, tablet] {
        let token = try JSONDecoder().decode(RelayToken?.self, from: tokens[device.device]!)
        let moved = try await downloadFromRelay(device, token: token, blobs: await relay.download())
        tokens[device.device] = try JSONEncoder().encode(moved)
        check(try await device.read { try $0.outgoing(since: moved).changes.count } == 0, "\(device.device): what came from the relay does not go back")
    }
    let relayedDigests = Set(try await [phone, laptop, tablet].asyncMap { store in try await store.read { try $0.digest() } })
    check(relayedDigests.count == 1, "the three devices converge through the relay")
    let relayedOrder = try await tablet.read { try $0.goals(now: now) }.map(\.id)
    check(relayedOrder.first == stretch, "the laptop's move reached the tablet through the relay")

    // 5c. A long input appended a chunk at a time, as one atomic batch (what `ledger append`
    //     does): the sample of the store's article, here from async code.
    let imported = try LedgerStore.create(at: directory + "/import", device: "import")
    let steps = try await imported.write {
        try $0.createGoal(title: "Steps", cadence: .daily, progress: .measurable(target: try .target(10_000)), now: now)
    }
    let half = try Amount(0.5)
    let drafts = (0..<2_500).map { _ in EventDraft(payload: .progressRecorded(ProgressRecorded(goal: steps, amount: half))) }
    let results = try await imported.write { writer in
        var rest = drafts[...]                          // the app's long input
        return try writer.append(chunks: { () throws(LedgerError) -> [EventDraft]? in
            guard !rest.isEmpty else { return nil }     // nil: the input has ended
            defer { rest = rest.dropFirst(1_000) }
            return Array(rest.prefix(1_000))
        }, now: now)
    }
    check(results.count == 2_500 && !results.contains { $0.duplicate }, "a long input in chunks appends every draft")
    let stepsToday = try await imported.read { try $0.goal(steps, now: now) }?.view.value?.description
    check(stepsToday == "1250", "its chunks make one batch: today's steps are 1250 (\(stepsToday ?? "none"))")
    check(try await imported.read { try $0.verify() }.isClean, "the store the chunks wrote verifies clean")

    // 6. Errors an app shows, by kind: each reason the app can meet, made to happen, and
    //    `shown(_:)` shows the error's text for people (no ids, paths or keys).
    do throws(FieldError) {
        _ = try Amount("0.1234567")
        check(false, "seven digits after the point are refused")
    } catch {
        check(error.field == "amount", "a checked value names its field (\(error.message))")
        check(error.localizedDescription == "The amount must have at most 6 digits after the decimal point.", "and says so for people: \(error.localizedDescription)")
    }
    func failure(_ what: String, _ body: () async throws -> Void) async -> LedgerError? {
        do {
            try await body()
            check(false, what + " is refused")
            return nil
        } catch let error as LedgerError {
            print("     \(shown(error))")
            return error
        } catch {
            check(false, what + " throws a LedgerError, not \(error)")
            return nil
        }
    }
    let one = try Amount(1)
    let stranger = UUID()
    let unknown = await failure("progress on an unknown goal") { () async throws in
        _ = try await phone.write { try $0.recordProgress(stranger, amount: one, now: now) }
    }
    check(
        unknown?.code == .invalidInput && unknown?.reason == .unknownGoal(goal: stranger, index: 1, line: nil), "an unknown goal is named")
    check(
        unknown.map(shown) == "This change could not be saved. This goal is not on this device (yet). Check the goal and try again."
            && unknown?.message.contains(stranger.uuidString) == true,
        "people read it without the id, which the message keeps for the log")
    let emptyTag = await failure("an empty tag") { () async throws in _ = try await phone.write { try $0.addTag("", to: water, now: now) } }
    if case .invalidEvent(let field, 1, nil)? = emptyTag?.reason {
        check(field == "tag", "an event that breaks a rule names its field: \(emptyTag!.localizedDescription)")
    } else {
        check(false, "an empty tag carries its reason")
    }
    let stale = await failure("a stale expected version") { () async throws in
        _ = try await phone.write {
            try $0.append([EventDraft(payload: .tagAdded(TagAdded(goal: water, tag: "x")))], expectedVersion: 1, now: now)
        }
    }
    if case .versionConflict(let goal, let expected, _)? = stale?.reason {
        check(goal == water && expected == 1, "a stale expected version is a version conflict of that goal")
    } else {
        check(false, "a stale expected version carries its reason")
    }
    // A guard on the title alone: progress logged meanwhile does not stop the edit, another
    // title edit does.
    let titleRead = try await phone.read { try $0.goal(water, now: now) }?.goal.version(of: .title) ?? .neverWritten
    _ = try await phone.write { try $0.recordProgress(water, amount: one, now: now) }
    _ = try await phone.write { try $0.editGoal(water, title: "Water", ifUnchangedSince: [.title: titleRead], now: now) }
    let titleStale = await failure("an edit of a title changed since it was read") { () async throws in
        _ = try await phone.write { try $0.editGoal(water, title: "Drink more", ifUnchangedSince: [.title: titleRead], now: now) }
    }
    check(
        titleStale?.reason == .fieldVersionConflict(goal: water, field: .title),
        "a guarded field changed since is a conflict of that field")
    let missing = await failure("a missing store") { () async throws in _ = try LedgerStore.open(at: directory + "/nowhere") }
    check(missing?.code == .store && missing?.reason == .noStore(path: directory + "/nowhere"), "a missing store says so")
    let twice = await failure("a second store where one is") { () async throws in
        _ = try LedgerStore.create(at: directory + "/phone", device: "phone")
    }
    check(twice?.reason == .storeExists(path: directory + "/phone"), "a store that exists already is named, and kept")
    // A new device nobody enrolled yet: it holds the ledger's events but may not write.
    let kiosk = try LedgerStore.create(at: directory + "/kiosk", device: "kiosk", ledger: phone.ledgerID)
    _ = try await kiosk.sync(with: phone)
    let notYet = await failure("a write of a device nobody enrolled") { () async throws in
        _ = try await kiosk.write { try $0.createGoal(title: "Hello", now: now) }
    }
    let kioskKey = try await kiosk.read { try $0.publicKey() }
    check(
        notYet?.reason == .deviceNotEnrolled(device: "kiosk", publicKey: kioskKey ?? []),
        "a device nobody enrolled is told so, with the key to enrol")
    // The laptop is revoked by the phone: it learns so and writes nothing more.
    _ = try await phone.write { try $0.revoke(device: "laptop", now: now) }
    _ = try await phone.sync(with: laptop)
    let revoked = await failure("a write of a revoked device") { () async throws in
        _ = try await laptop.write { try $0.createGoal(title: "Sneaky", now: now) }
    }
    if case .deviceRevoked(let device, _)? = revoked?.reason {
        check(device == "laptop", "a revoked device is told so")
    } else {
        check(false, "a revoked device carries its reason")
    }
    // A backup restored must hear from another device before it writes (or it could fork).
    try phone.backup(to: directory + "/backup", withKey: true)
    let restored = try LedgerStore.open(at: directory + "/backup")
    let early = await failure("a write of a restored backup") { () async throws in
        _ = try await restored.write { try $0.createGoal(title: "Early", now: now) }
    }
    check(early?.reason == .restoredFromBackup(device: "phone"), "a restored backup asks for a sync first")
    // A copy of the store used as the same device: its history forks, and what it offers waits.
    try await phone.write { try $0.createGoal(title: "Before the copy", now: now) }
    let twin = try copyOfStore(phone, to: directory + "/twin")
    try await twin.write { try $0.createGoal(title: "Written by the twin", now: now) }
    try await phone.write { try $0.createGoal(title: "Written by the phone", now: now) }
    let phoneState = try await phone.read { try $0.syncState() }
    let twinChanges = try await twin.read { try $0.changeSet(since: phoneState) }
    let offered = try await phone.write { try $0.apply(twinChanges, from: "the twin") }
    check(
        offered.waiting.map(\.cause) == [.fork] && offered.waiting.first?.origin == "phone",
        "a forked history waits, its cause named: \(offered.waiting.first?.reason ?? "")")
    // The sync service cannot be reached.
    let client = SyncServiceClient(baseURL: URL(string: "http://127.0.0.1:9/")!)
    let offline = await failure("a sync with a service that is down") { () async throws in _ = try await client.sync(phone) }
    check(offline?.reason == .peerUnreachable(peer: "127.0.0.1:9"), "an unreachable service is named")
    // The app's notification center fails: its own error comes back.
    let broken = await failure("a pass against a failing center") { () async throws in
        _ = try await Reconciler(store: phone, centerID: "broken").reconcile(center: FailingCenter(), now: now)
    }
    check(broken?.underlyingError is FailingCenter.Unplugged, "a failing center's own error is kept")
    // The device's key goes missing from the app's key store, then a wrong one is put there.
    let keys = AppKeyStore()
    let watch = try LedgerStore.create(at: directory + "/watch", device: "watch", keys: keys)
    try await watch.write { try $0.createGoal(title: "Stretch", now: now) }
    let watchKey = try await watch.read { try $0.publicKey() }
    check(keys.count == 1 && watchKey != nil, "a store signs with a key the app keeps")
    keys.forget()
    let lost = await failure("a write without the device's key") { () async throws in
        _ = try await watch.write { try $0.createGoal(title: "B", now: now) }
    }
    check(lost?.reason == .signingKeyMissing(device: "watch", path: watch.path), "a missing key is named, with the store")
    keys.substitute(ledger: watch.ledgerID, device: "watch")
    let wrong = await failure("a write with a key the ledger does not trust") { () async throws in
        _ = try await watch.write { try $0.createGoal(title: "C", now: now) }
    }
    check(wrong?.reason == .signerNotTrusted(device: "watch"), "a key the ledger does not trust is named")
    // A store of the first schema meets events of the current one: it must migrate first.
    let legacy = try LedgerStore.create(at: directory + "/legacy", device: "old-phone", schema: 1)
    try await legacy.write { try $0.createGoal(title: "From before", now: now) }
    let upgraded = try legacy.clone(to: directory + "/upgraded", device: "new-phone", now: now)
    _ = try upgraded.migrate(now: now)
    try await upgraded.write { try $0.createGoal(title: "After the upgrade", now: now) }
    let behind = await failure("events of a newer schema") { () async throws in _ = try await legacy.sync(with: upgraded) }
    check(behind?.reason == .needsMigration, "a store behind the schema asks to migrate")
    // The disk damages a record of the log (every copy of its bytes is flipped): the position
    // is named, and the app restores a backup.
    try await phone.write { try $0.createGoal(title: "Unmistakable-marker-title", now: now) }
    let damagedPath = directory + "/damaged"
    _ = try copyOfStore(phone, to: damagedPath)
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: damagedPath + "/data.mdb")))
    let marker = Array("Unmistakable-marker-title".utf8)
    var flipped = 0
    for i in 0..<(bytes.count - marker.count) where bytes[i] == marker[0] && Array(bytes[i..<(i + marker.count)]) == marker {
        bytes[i] ^= 0x20
        flipped += 1
    }
    try Data(bytes).write(to: URL(fileURLWithPath: damagedPath + "/data.mdb"))
    let damaged = await failure("reading a damaged log") { () async throws in
        _ = try await LedgerStore.open(at: damagedPath).read { try $0.replay() }
    }
    let lastPosition = try await phone.read { try $0.lastPosition() }
    if case .storeDamaged(let position?)? = damaged?.reason {
        check(flipped > 0 && position == lastPosition, "a damaged record is named by its position (\(position))")
    } else {
        check(false, "a damaged record carries its reason: \(String(describing: damaged?.reason))")
    }
    let verification = try await phone.read { try $0.verify() }
    check(verification.isClean, "the phone's store verifies clean")
    print("the goals example ran every step")
}
