import Foundation
import GoalLedger
import LedgerCommandLine
import Testing

/// The gate seen from both doors: typed values through the library and JSON lines through
/// `ledger append` get the same decision and name the same rule; a store written before the
/// gate works with every command.
struct EventGateCommandTests {
    static let measurable = "B0000000-0000-4000-8000-000000000001"
    static let outcome = "B0000000-0000-4000-8000-000000000002"
    static let setup = [
        #"{"type":"deviceConfigured","timeZone":"Europe/Berlin","firstWeekday":2,"locale":"en_US"}"#,
        #"{"type":"goalCreated","goal":"\#(measurable)","title":"Water","cadence":"daily","progress":{"kind":"measurable","target":8,"unit":"glasses"},"tags":["a"]}"#,
        #"{"type":"goalCreated","goal":"\#(outcome)","title":"Stretch","cadence":"weekly","tags":["a"]}"#,
    ]

    /// Values drawn by the property test: valid ones and ones just past each limit.
    final class Draw {
        /// The fuzz tests' seeded generator (SplitMix64).
        var rng: FuzzTests.Mutator
        init(rng: FuzzTests.Mutator) { self.rng = rng }
        func pick<T>(_ items: [T]) -> T { items[Int(rng.next() % UInt64(items.count))] }
        func maybe<T>(_ item: @autoclosure () -> T) -> T? { rng.next() % 3 == 0 ? nil : item() }

        /// Amounts the typed API can spell (an `Amount` is checked when made: values it refuses
        /// reach the gate only as JSON text, tested by `AmountTests`), including the ends of the
        /// range and values a `Double` would round.
        func number() -> Amount {
            pick(
                [
                    "0", "1", "-1", "0.5", "2.25", "1000000000000", "-1000000000000", "0.000001", "123456.123456", "999999.5",
                    "999999999999.999999", "-123456789012.345678", "9007199254.740993", "0.3",
                ].map { try! Amount($0) })
        }
        func text(_ limit: Int) -> String {
            pick([
                "", " ", "a", "Run", String(repeating: "x", count: limit), String(repeating: "x", count: limit + 1),
                "\u{E9}t\u{E9}", "e\u{301}te\u{301}", "a\u{7}b", "tab\tline\nend", "\u{1F44D}\u{1F3FD}", String(repeating: "e\u{301}", count: limit),
            ])
        }
        func hour() -> Int { pick([-1, 0, 9, 23, 24, 99]) }
        func minute() -> Int { pick([-1, 0, 30, 59, 60]) }
        func day() -> Day {
            pick([
                Day(daysSinceEpoch: 0), Day(daysSinceEpoch: -1), Day(daysSinceEpoch: 1), Day(daysSinceEpoch: 20_397),
                Day(daysSinceEpoch: 2_932_895), Day(daysSinceEpoch: 2_932_896),
            ])
        }
        func instant() -> Instant {
            pick([Instant(milliseconds: 0), Instant(milliseconds: -1), Instant(milliseconds: 1_793_000_000_000), Instant.latest])
        }
        func devices() -> [String]? {
            maybe(pick([["phone"], [], ["phone", "phone"], ["Bad Name"], ["laptop", "watch"]]))
        }

        func payload(_ measurable: UUID, _ outcome: UUID) -> Payload {
            switch rng.next() % 9 {
            case 0:
                let kind: GoalLedger.ProgressKind = rng.next() % 2 == 0 ? .measurable : .outcome
                let reminder = rng.next() % 2 == 0 ? ReminderTime.default : nil
                return .goalCreated(
                    GoalCreated(
                        goal: UUID(), title: text(200), details: maybe(text(2000)), cadence: pick(Cadence.allCases),
                        targetDate: maybe(day()), progressKind: kind, target: kind == .measurable ? number() : nil,
                        unit: kind == .measurable ? maybe(text(32)) : nil, reminder: reminder,
                        tags: pick([[], [text(64)], Array(repeating: "t", count: 33), (0..<32).map { "t\($0)" }]),
                        reminderDevices: reminder == nil ? nil : devices()))
            case 1:
                var e = GoalEdited(goal: measurable)
                switch rng.next() % 4 {
                case 0: e.title = text(200)
                case 1: e.target = number()
                case 2: e.unit = .some(text(32))
                default: e.targetDate = .some(day())
                }
                return .goalEdited(e)
            case 2:
                return .reminderSet(ReminderSet(goal: measurable, hour: maybe(hour()), minute: maybe(minute()), devices: devices()))
            case 3, 4:
                return .progressRecorded(ProgressRecorded(goal: measurable, amount: number(), occurredAt: maybe(instant()), day: maybe(day())))
            case 5:
                return .progressRecorded(ProgressRecorded(goal: outcome, completed: true, occurredAt: maybe(instant())))
            case 6:
                return .tagAdded(TagAdded(goal: pick([measurable, outcome]), tag: text(64)))
            case 7:
                return .deviceConfigured(
                    DeviceConfigured(
                        timeZone: pick(["UTC", "Europe/Berlin", "Asia/Tokyo", "Mars/Olympus", "", "Etc/GMT+99"]),
                        firstWeekday: pick([0, 1, 7, 8]), locale: pick(["en_US", "ja", "x", "EN", "en-US", "zh_Hant_TW"]),
                        strategy: pick(NotificationStrategy.allCases), windowDays: pick([0, 1, 30, 31]), capacity: pick([0, 1, 512, 513])))
            default:
                return .notificationAuthorization(NotificationAuthorization(status: pick(AuthorizationStatus.allCases)))
            }
        }
    }

    /// The draft as a JSON line.
    static func line(_ draft: EventDraft) -> String {
        var members: [(String, JSONValue)] = [("type", .string(draft.payload.type.name))]
        if let at = draft.at { members.append(("at", .string(at.rfc3339))) }
        members += draft.payload.jsonMembers
        return try! JSONWriter.string(.object(members))
    }

    /// Messages that only the JSON door can give: the value has no JSON spelling the reader
    /// accepts (a non-finite number, a year past 9999, digits a number cannot hold).
    static func jsonOnly(_ message: String) -> Bool {
        ["malformed JSON", "must be a real date", "RFC 3339"].contains { message.contains($0) }
    }

    @Test(arguments: 0..<4)
    func typedDraftsAndJSONLinesGetTheSameDecisionAndTheSameRule(_ seed: Int) throws {
        let typed = CLIFixture()
        let lines = CLIFixture()
        for f in [typed, lines] {
            #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
            #expect(f.run(["append"], input: Self.setup.joined(separator: "\n")).exitCode == 0)
        }
        let store = try LedgerStore.open(at: typed.store)
        let now = Instant(rfc3339: typed.now)!
        let draw = Draw(rng: FuzzTests.Mutator(state: UInt64(seed) &* 7919 &+ 11))
        var accepted = 0
        for _ in 0..<60 {
            let draft = EventDraft(at: draw.rng.next() % 5 == 0 ? draw.instant() : nil, payload: draw.payload(UUID(uuidString: Self.measurable)!, UUID(uuidString: Self.outcome)!))
            let before = try (Data(contentsOf: URL(fileURLWithPath: typed.store + "/data.mdb")), Data(contentsOf: URL(fileURLWithPath: lines.store + "/data.mdb")))
            var typedError: LedgerError?
            do { try store.append([draft], now: now) } catch { typedError = error }
            let line = Self.line(draft)
            let r = lines.run(["append"], input: line)
            let after = try (Data(contentsOf: URL(fileURLWithPath: typed.store + "/data.mdb")), Data(contentsOf: URL(fileURLWithPath: lines.store + "/data.mdb")))
            #expect((typedError == nil) == (r.exitCode == 0), "\(line): typed \(typedError?.message ?? "accepted"), line \(r.stderr)")
            if let typedError {
                #expect(typedError.code == .invalidInput)
                #expect(r.exitCode == 3, "\(line): \(r.stderr)")
                #expect(after.0 == before.0 && after.1 == before.1, "a refused batch changed a store: \(line)")
                let message = typedError.message.replacingOccurrences(of: "event 1 of the batch: ", with: "")
                if !Self.jsonOnly(r.stderr) {
                    #expect(r.stderr.contains("line 1: " + message), "\(line)\n typed: \(typedError.message)\n line: \(r.stderr)")
                }
            } else {
                accepted += 1
            }
        }
        #expect(accepted > 5)
        #expect(try store.verify().isClean)
        #expect(typed.run(["verify"]).exitCode == 0)
        #expect(lines.run(["verify"]).exitCode == 0)
    }

    @Test func linesTheTypedAPICannotSpellAreRefusedWithTheirLine() {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        for bad in [
            #"{"type":"goalCreated","goal":"\#(Self.measurable)","title":"\ud800"}"#,
            #"{"type":"goalCreated","goal":"\#(Self.measurable)","title":"ok","progress":{"kind":"measurable","target":2.0000000000000001}}"#,
            #"{"type":"goalCreated","goal":"\#(Self.measurable)","title":"ok","progress":{"kind":"measurable","target":1e999}}"#,
        ] {
            let r = f.run(["append"], input: bad)
            #expect(r.exitCode == 3, "\(bad): \(r.stderr)")
            #expect(r.stderr.contains("line 1:"), "\(r.stderr)")
        }
    }

    @Test func everyCommandWorksOnAStoreWrittenBeforeTheGate() throws {
        let f = CLIFixture()
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("GoalLedgerTests/Fixtures/legacy-malformed")
        for name in ["phone", "laptop"] {
            try FileManager.default.createDirectory(atPath: f.root + "/" + name, withIntermediateDirectories: true)
            for file in ["data.mdb", "device.key"] {
                try FileManager.default.copyItem(atPath: source.appendingPathComponent("\(name)/\(file)").path, toPath: f.root + "/\(name)/\(file)")
            }
        }
        let phone = f.root + "/phone"
        let verify = CLIFixture.runAt(phone, ["verify"])
        #expect(verify.exitCode == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains(#"phone/7"#) && verify.stdout.contains(#"field "amount""#), "\(verify.stdout)")
        let status = CLIFixture.runAt(phone, ["status", "--json"])
        #expect(status.exitCode == 0, "\(status.stderr)")
        #expect(status.stdout.contains(#""setAside":["#))
        for args in [["goals"], ["goals", "--json"], ["replay", "--json"], ["show", "3C2E1B7A-5D4F-4A21-9E0B-1F2A3B4C5D6E"], ["log", "--json"],
            ["audit", "3C2E1B7A-5D4F-4A21-9E0B-1F2A3B4C5D6E"], ["pending"], ["reconcile", "--dry-run"], ["report", "--out", f.root + "/r.html"]]
        {
            let r = CLIFixture.runAt(phone, args)
            #expect(r.exitCode == 0, "\(args): \(r.stderr)")
            #expect(!r.stdout.contains("nan") && !r.stdout.contains("25:61"), "\(args): \(r.stdout)")
        }
        let sync = CLIFixture.runAt(phone, ["sync", f.root + "/laptop"])
        #expect(sync.exitCode == 0, "\(sync.stderr)")
        let a = CLIFixture.runAt(phone, ["replay", "--json"]).stdout
        let b = CLIFixture.runAt(f.root + "/laptop", ["replay", "--json"]).stdout
        #expect(!a.isEmpty && a == b)
        #expect(CLIFixture.runAt(f.root + "/laptop", ["verify"]).exitCode == 0)
    }
}
