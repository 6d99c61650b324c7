import Foundation
import Testing

@testable import GoalLedger

/// The one gate: typed values from an app are checked like JSON lines, and a store written
/// before the gate stays usable.
struct EventGateTests {
    let now = instant("2026-11-05T12:00:00Z")
    let water = UUID(uuidString: "3C2E1B7A-5D4F-4A21-9E0B-1F2A3B4C5D6E")!

    /// A store with a measurable goal and an outcome goal, synced once with a second store.
    func twoSyncedStores(_ dir: TemporaryDirectory) throws -> (LedgerStore, LedgerStore, outcome: UUID) {
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        let outcome = UUID()
        try phone.append(
            [
                EventDraft(
                    payload: .goalCreated(
                        GoalCreated(goal: water, title: "Drink water", cadence: .daily, progressKind: .measurable, target: try! Amount("8"), unit: "glasses"))),
                EventDraft(payload: .goalCreated(GoalCreated(goal: outcome, title: "Stretch", cadence: .daily))),
                EventDraft(payload: .progressRecorded(ProgressRecorded(goal: water, amount: try! Amount("2")))),
            ], now: now)
        let laptop = try phone.clone(to: dir.path + "/laptop", device: "laptop", now: now)
        _ = try phone.sync(with: laptop)
        return (phone, laptop, outcome)
    }

    /// The bytes of the store's data file: a refused batch leaves them as they were.
    func fileBytes(_ store: LedgerStore) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: store.path + "/data.mdb")) }

    @Test func everyTypedValueThatOnceBrokeALedgerIsRefusedNamingItsFieldAndChangesNothing() throws {
        let dir = TemporaryDirectory()
        let (phone, laptop, outcome) = try twoSyncedStores(dir)
        let cases: [(Payload, Instant?, String)] = [
            // Amounts NaN, infinite, 1e308 or with seven digits after the point cannot be
            // spelled in the typed API: `Amount` refuses them when made (below).
            (.progressRecorded(ProgressRecorded(goal: water)), nil, "amount"),
            (.goalCreated(GoalCreated(goal: UUID(), title: "")), nil, "title"),
            (.goalCreated(GoalCreated(goal: UUID(), title: String(repeating: "x", count: 500))), nil, "title"),
            (.goalCreated(GoalCreated(goal: UUID(), title: "Tags", tags: [String(repeating: "t", count: 100)])), nil, "tags[0]"),
            (.goalCreated(GoalCreated(goal: UUID(), title: "Outcome", progressKind: .outcome, target: try! Amount("3"))), nil, "progress.target"),
            (.goalEdited(GoalEdited(goal: water, target: try! Amount("-1"))), nil, "target"),
            (.reminderSet(ReminderSet(goal: water, hour: 25, minute: 61)), nil, "hour"),
            (.reminderSet(ReminderSet(goal: water, hour: 7, minute: 61)), nil, "minute"),
            (.deviceConfigured(DeviceConfigured(timeZone: "Mars/Olympus")), nil, "timeZone"),
            (.deviceConfigured(DeviceConfigured(timeZone: "UTC", capacity: 0)), nil, "capacity"),
            (.progressRecorded(ProgressRecorded(goal: outcome, completed: true)), instant("1969-12-31T23:59:59Z"), "at"),
            (.progressRecorded(ProgressRecorded(goal: outcome, completed: true, occurredAt: Instant(milliseconds: -1))), nil, "occurredAt"),
        ]
        let digest = try phone.digest()
        let count = try phone.lastPosition()
        let bytes = try fileBytes(phone)
        for (payload, at, field) in cases {
            let good = EventDraft(payload: .progressRecorded(ProgressRecorded(goal: water, amount: try! Amount("1"))))
            do {
                try phone.append([good, EventDraft(at: at, payload: payload)], now: now)
                Issue.record("\(payload) was accepted")
            } catch {
                #expect(error.code == .invalidInput)
                #expect(error.message.hasPrefix("event 2 of the batch: field \"\(field)\": "), "\(error.message)")
            }
        }
        #expect(try phone.digest() == digest)
        #expect(try phone.lastPosition() == count)
        #expect(try fileBytes(phone) == bytes)
        // The two stores still sync, and both verify clean.
        try laptop.append([EventDraft(payload: .progressRecorded(ProgressRecorded(goal: water, amount: try Amount(0.5))))], now: now)
        _ = try phone.sync(with: laptop)
        #expect(try phone.digest() == laptop.digest())
        #expect(try phone.verify().isClean)
        #expect(try laptop.verify().isClean)
    }

    @Test func aJSONLineAndTheSameTypedValueGetTheSameMessage() throws {
        let t = try TemporaryStore()
        try t.store.append([EventDraft(payload: .goalCreated(GoalCreated(goal: water, title: "Water", progressKind: .measurable, target: try! Amount("8"))))], now: now)
        let line = #"{"type":"reminderSet","goal":"\#(water.uuidString)","hour":24}"#
        var fromLine: LedgerError?
        do { try t.store.append([try EventDraft(line: line, number: 7)], now: now) } catch { fromLine = error }
        var typed: LedgerError?
        do { try t.store.append([EventDraft(payload: .reminderSet(ReminderSet(goal: water, hour: 24)))], now: now) } catch { typed = error }
        #expect(fromLine?.message == #"line 7: field "hour": must be between 0 and 23, got 24"#)
        #expect(typed?.message == #"event 1 of the batch: field "hour": must be between 0 and 23, got 24"#)
    }

    @Test func amountsHaveAtMostSixDigitsAfterThePointAndAreNeverRounded() throws {
        #expect(FieldRules.fractionDigits(0.1) == 1)
        #expect(FieldRules.fractionDigits(2) == 0)
        #expect(FieldRules.fractionDigits(0.000001) == 6)
        #expect(FieldRules.fractionDigits(1e-7) == 7)
        #expect(FieldRules.fractionDigits(0.1 + 0.2) == 17)
        #expect(FieldRules.fractionDigits(123_456_789.123456) == 6)
        #expect(FieldRules.fractionDigits(-1e12) == 0)
        #expect(throws: FieldError.self) { try Amount(0.1 + 0.2) }
        #expect(try Amount(0.3).description == "0.3")
        #expect(throws: FieldError.self) { try Amount(.infinity) }
        #expect(throws: FieldError.self) { try Amount(1e308 as Double) }
        #expect(throws: FieldError.self) { try Amount(0.1234567 as Double) }
        #expect(throws: FieldError.self) { try Amount.target(0) }
        // A JSON literal with digits beyond what a Double holds keeps its text, never rounded
        // (an amount then reads it exactly, or refuses it naming its field); trailing zeros
        // say nothing more.
        #expect(try JSONParser.parse("2.0000000000000001") == .decimal("2.0000000000000001"))
        #expect(try JSONParser.parse("123456789012.1234567") == .decimal("123456789012.1234567"))
        #expect(try JSONParser.parse("2.0000000000000001") != .number(2))
        #expect(try JSONParser.parse("0.1000000") == .number(0.1))
        #expect(try JSONParser.parse("25e-1") == .number(2.5))
        let seven = try? EventDraft(line: #"{"type":"progressRecorded","goal":"\#(water.uuidString)","amount":0.0000001}"#, number: 1)
        #expect(seven == nil)
    }

    @Test func checkedValueTypesRefuseNonsenseWhereTheyAreMade() throws {
        #expect(throws: FieldError("hour", "must be between 0 and 23, got 25")) { try ReminderTime(hour: 25, minute: 0) }
        #expect(throws: FieldError("minute", "must be between 0 and 59, got 61")) { try ReminderTime(hour: 7, minute: 61) }
        #expect(try ReminderTime(hour: 7, minute: 30).minute == 30)
        #expect(throws: FieldError.self) { try Amount(.nan) }
        #expect(throws: FieldError.self) { try Amount(-1e13 as Double) }
        #expect(throws: FieldError.self) { try Day(validating: "1969-12-31") }
        #expect(throws: FieldError.self) { try Day(validating: "2026-02-30") }
        #expect(try Day(validating: "2026-02-28") == day("2026-02-28"))
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        #expect(throws: FieldError.self) { try DeviceConfigured(timeZone: berlin, firstWeekday: 8) }
        #expect(try DeviceConfigured(timeZone: berlin, firstWeekday: 2).timeZone == "Europe/Berlin")
        #expect(throws: FieldError.self) { try EventDraft(payload: .tagAdded(TagAdded(goal: water, tag: " "))).checkWellFormed() }
    }

    /// Copies the two stores of the fixture written before the gate to `dir`.
    static func legacyFixture(in dir: TemporaryDirectory) throws -> (phone: String, laptop: String) {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/legacy-malformed")
        for name in ["phone", "laptop"] {
            try FileManager.default.createDirectory(atPath: dir.path + "/" + name, withIntermediateDirectories: true)
            for file in ["data.mdb", "device.key"] {
                try FileManager.default.copyItem(
                    atPath: source.appendingPathComponent("\(name)/\(file)").path, toPath: dir.path + "/\(name)/\(file)")
            }
        }
        return (dir.path + "/phone", dir.path + "/laptop")
    }

    @Test func aStoreWrittenBeforeTheGateSetsItsMalformedEventsAsideAndConvergesWithAPeer() throws {
        let dir = TemporaryDirectory()
        let paths = try Self.legacyFixture(in: dir)
        let phone = try LedgerStore.open(at: paths.phone)
        let laptop = try LedgerStore.open(at: paths.laptop)
        // Opened by this code, the projection is rebuilt and the three malformed events set aside.
        let aside = try phone.setAsideEvents()
        #expect(aside.map(\.origin) == ["phone", "phone", "phone"])
        #expect(aside.map { String($0.reason.prefix(14)) } == [#"field "amount""#, #"field "title":"#, #"field "hour": "#])
        let report = try phone.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.setAside.map(\.sequence) == aside.map(\.sequence))
        // No read sees them: the goal counts 2 + 1 + 3 glasses, the empty-titled goal does not
        // exist, the reminder is still 10:00, and the digest is computed.
        let state = try phone.goalState(water)
        #expect(state.entries.compactMap(\.amount).reduce(0, +) == 6)
        #expect(try state.reminder?.value == ReminderTime(hour: 10, minute: 0))
        var titles: [String] = []
        try phone.forEachGoal { titles.append($0.title?.value ?? "") }
        #expect(titles == ["Drink water"])
        _ = try phone.digest()
        #expect(try phone.canonicalEvents().allSatisfy { $0.event.isFoldable })
        // Sync carries them as the signed records they are; the peer sets them aside too, and
        // the two stores converge.
        let result = try phone.sync(with: laptop)
        #expect(result.pulled.imported == 1)
        #expect(result.pushed.setAside == 3)
        #expect(try laptop.setAsideEvents().map(\.sequence) == aside.map(\.sequence))
        #expect(try phone.digest() == laptop.digest())
        #expect(try phone.replay().canonicalJSON == laptop.replay().canonicalJSON)
        #expect(try laptop.verify().isClean)
        // Both devices go on writing and syncing.
        try phone.append([EventDraft(payload: .progressRecorded(ProgressRecorded(goal: water, amount: try! Amount("1"))))], now: now)
        _ = try laptop.sync(with: phone)
        #expect(try phone.digest() == laptop.digest())
        #expect(try laptop.goalState(water).entries.compactMap(\.amount).reduce(0, +) == 8.5)
    }
}

struct LedgerErrorPresentationTests {
    @Test func theLocalizedDescriptionIsForPeopleAndTheDescriptionKeepsTheDetail() {
        let message = #"event 1 of the batch: field "amount": must be a number between -1e12 and 1e12, got nan"#
        let error: any Error = LedgerError(.invalidInput, message)
        #expect(error.localizedDescription == "This change could not be saved.")
        #expect("\(error)" == message)
    }
}
