import Foundation
import GoalLedger
import LedgerCommandLine
import Testing

/// The four reproductions of convergence and range bugs, through the command line.
struct CorrectnessTests {
    static let goal = "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1"

    /// A phone store with one goal and a tablet cloned from it.
    static func twoDevices(_ f: CLIFixture, goalLine: String? = nil) -> String {
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        let created =
            goalLine ?? #"{"type":"goalCreated","goal":"\#(goal)","title":"Run","cadence":"daily","at":"2026-11-01T08:00:00Z"}"#
        #expect(f.run(["append"], input: created).exitCode == 0)
        let tablet = f.root + "/tablet"
        #expect(CLIFixture.runAt(tablet, ["clone", f.store, "--device", "tablet"]).exitCode == 0)
        return tablet
    }

    static func outputs(_ store: String, _ commands: [[String]]) -> [String] {
        commands.map { CLIFixture.runAt(store, $0 + ["--json"]).stdout }
    }

    @Test func canonicallyEquivalentTagsConvergeToTheSameBytes() throws {
        let f = CLIFixture()
        let tablet = Self.twoDevices(f)
        #expect(f.run(["append"], input: #"{"type":"tagAdded","goal":"\#(Self.goal)","tag":"\u00e9t\u00e9"}"#).exitCode == 0)
        #expect(
            CLIFixture.runAt(tablet, ["append"], input: #"{"type":"tagAdded","goal":"\#(Self.goal)","tag":"e\u0301te\u0301"}"#)
                .exitCode == 0)
        #expect(CLIFixture.runAt(tablet, ["sync", f.store]).exitCode == 0)
        let commands = [["replay"], ["goals"], ["conflicts"], ["show", Self.goal]]
        let phone = Self.outputs(f.store, commands)
        #expect(phone == Self.outputs(tablet, commands))
        // The projection prints the composed (NFC) form, once.
        let tags = try JSONParser.parse(phone[0])["goals"].flatMap { if case .array(let g) = $0 { g.first?["tags"] } else { nil } }
        #expect(tags == .array([.string("\u{e9}t\u{e9}")]))
        #expect(Array(phone[0].utf8).contains(0xCC) == false, "no combining accent (U+0301 is CC 81 in UTF-8) in the output")
        // The stored events keep what each author wrote.
        #expect(CLIFixture.runAt(tablet, ["log", "--json"]).stdout.contains("e\u{301}t"))
        // A removal written in the other form removes the tag on both.
        #expect(
            CLIFixture.runAt(tablet, ["append"], input: #"{"type":"tagRemoved","goal":"\#(Self.goal)","tag":"\u00e9t\u00e9"}"#)
                .exitCode == 0)
        #expect(CLIFixture.runAt(tablet, ["sync", f.store]).exitCode == 0)
        let after = Self.outputs(f.store, commands)
        #expect(after == Self.outputs(tablet, commands))
        #expect(!after[0].contains("t\u{e9}"))
        #expect(CLIFixture.runAt(tablet, ["verify"]).exitCode == 0)
    }

    @Test func amountsBeyondTheLimitAreRefusedAndJSONNeverPrintsInfinity() throws {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        let create = #"{"type":"goalCreated","goal":"\#(Self.goal)","title":"Save","cadence":"daily","progress":{"kind":"measurable","target":1e12}}"#
        #expect(f.run(["append"], input: create).exitCode == 0)
        let before = f.replayText()
        for amount in ["1e308", "1.0000001e12", "-2e12"] {
            let r = f.run(["append"], input: #"{"type":"progressRecorded","goal":"\#(Self.goal)","amount":\#(amount)}"#)
            #expect(r.exitCode == 3, "amount \(amount)")
            #expect(r.stderr.contains("line 1: field \"amount\""), "\(r.stderr)")
        }
        let edit = f.run(["append"], input: #"{"type":"goalEdited","goal":"\#(Self.goal)","target":2e12}"#)
        #expect(edit.exitCode == 3 && edit.stderr.contains("field \"target\""))
        #expect(f.replayText() == before)
        // At the limit, sums stay finite and print as JSON numbers.
        let lines = Array(repeating: #"{"type":"progressRecorded","goal":"\#(Self.goal)","amount":1e12}"#, count: 3)
        #expect(f.run(["append"], input: lines.joined(separator: "\n")).exitCode == 0)
        for command in [["goals"], ["show", Self.goal], ["replay"]] {
            let out = f.run(command + ["--json"]).stdout
            #expect(!out.contains("inf") && !out.contains("nan"))
            _ = try JSONParser.parse(out)
        }
        #expect(try f.json(["show", Self.goal])["view"]?["value"] == .number(3e12))
    }

    @Test func sumsAreExactDecimalsInEveryCommand() throws {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        let create = #"{"type":"goalCreated","goal":"\#(Self.goal)","title":"Water","cadence":"daily","progress":{"kind":"measurable","target":1,"unit":"l"}}"#
        let tenths = ["0.1", "0.2"].map { #"{"type":"progressRecorded","goal":"\#(Self.goal)","amount":\#($0),"at":"2026-11-05T09:00:00Z"}"# }
        #expect(f.run(["append"], input: ([create] + tenths).joined(separator: "\n")).exitCode == 0)
        let goals = f.run(["goals"]).stdout
        #expect(goals.contains("0.3/1") && !goals.contains("0.30000000000000004"), "\(goals)")
        #expect(try f.json(["show", Self.goal])["view"]?["value"] == .number(0.3))
        #expect(f.run(["report", "--out", f.root + "/r.html"]).exitCode == 0)
        let html = try String(contentsOfFile: f.root + "/r.html", encoding: .utf8)
        #expect(!html.contains("0.30000000000000004"))
        // Seven more tenths complete the target exactly (floating-point addition stops at 0.9999999999999999).
        let more = Array(repeating: #"{"type":"progressRecorded","goal":"\#(Self.goal)","amount":0.1,"at":"2026-11-05T10:00:00Z"}"#, count: 7)
        #expect(f.run(["append"], input: more.joined(separator: "\n")).exitCode == 0)
        let view = try f.json(["show", Self.goal])["view"]
        #expect(view?["value"] == .number(1) && view?["completed"] == .bool(true), "\(String(describing: view))")
        // Many entries at the limit add up without overflow.
        let huge = Array(repeating: #"{"type":"progressRecorded","goal":"\#(Self.goal)","amount":1e12,"at":"2026-11-05T11:00:00Z"}"#, count: 12)
        #expect(f.run(["append"], input: huge.joined(separator: "\n")).exitCode == 0)
        #expect(try f.json(["show", Self.goal])["view"]?["value"] == .number(12e12 + 1))
    }

    @Test func theJSONWriterRefusesNonFiniteNumbers() {
        for n in [Double.infinity, -Double.infinity, Double.nan] {
            #expect(throws: LedgerError.self) { try JSONWriter.string(.array([.number(1), .number(n)])) }
        }
    }

    /// Phone deletes at 10:00 and restores at 12:00; the tablet, which has seen neither, edits the
    /// title at 11:00 or at 13:00. Both are the same causal history: the edit is listed either way.
    @Test(arguments: ["2026-11-02T11:00:00Z", "2026-11-02T13:00:00Z"])
    func aChangeConcurrentWithADeletionIsListedWhateverRestoreFollows(_ editAt: String) throws {
        let f = CLIFixture()
        let tablet = Self.twoDevices(f)
        #expect(
            f.run(
                ["append"],
                input: """
                    {"type":"goalDeleted","goal":"\(Self.goal)","at":"2026-11-02T10:00:00Z"}
                    {"type":"goalRestored","goal":"\(Self.goal)","at":"2026-11-02T12:00:00Z"}
                    """
            ).exitCode == 0)
        #expect(
            CLIFixture.runAt(tablet, ["append"], input: #"{"type":"goalEdited","goal":"\#(Self.goal)","title":"Walk","at":"\#(editAt)"}"#)
                .exitCode == 0)
        #expect(CLIFixture.runAt(tablet, ["sync", f.store]).exitCode == 0)
        for store in [f.store, tablet] {
            let conflicts = try JSONParser.parse(CLIFixture.runAt(store, ["conflicts", "--json"]).stdout)
            guard case .array(let list) = conflicts else { throw LedgerError(.internal, "not an array") }
            let deleted = list.filter { $0["field"] == .string("deleted") }
            #expect(deleted.count == 1, "\(store): \(conflicts)")
            #expect(deleted.first?["winner"]?["device"] == .string("phone"))
            guard case .array(let over) = deleted.first?["overwritten"] else { continue }
            #expect(over.count == 1 && over.first?["device"] == .string("tablet"))
        }
        // An edit made after the tablet had seen the deletion and the restore is not a conflict.
        #expect(
            CLIFixture.runAt(tablet, ["append"], input: #"{"type":"goalEdited","goal":"\#(Self.goal)","title":"Swim","at":"2026-11-02T14:00:00Z"}"#)
                .exitCode == 0)
        #expect(CLIFixture.runAt(tablet, ["sync", f.store]).exitCode == 0)
        let list = try JSONParser.parse(f.run(["conflicts", "--json"]).stdout)
        let text = JSONWriter.message(list)
        #expect(!text.contains("Swim"), "\(text)")
    }

    @Test func instantsAndDatesOutsideTheYears1970To9999AreRefused() throws {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        #expect(
            f.run(["append"], input: #"{"type":"deviceConfigured","timeZone":"America/New_York","firstWeekday":1,"locale":"en_US"}"#)
                .exitCode == 0)
        let before = f.replayText()
        let refused: [(String, String)] = [
            (#"{"type":"goalCreated","goal":"\#(Self.goal)","title":"Far","targetDate":"9999-12-31","reminder":{"hour":23,"minute":59}}"#, "targetDate"),
            (#"{"type":"goalCreated","goal":"\#(Self.goal)","title":"Far","targetDate":"1970-01-01"}"#, "targetDate"),
            (#"{"type":"goalCreated","goal":"\#(Self.goal)","title":"Old","at":"1969-12-31T23:59:59Z"}"#, "at"),
            (#"{"type":"goalCreated","goal":"\#(Self.goal)","title":"Late","at":"9999-12-31T23:00:00-05:00"}"#, "at"),
        ]
        for (line, field) in refused {
            let r = f.run(["append"], input: line)
            #expect(r.exitCode == 3, "\(line)")
            #expect(r.stderr.contains("field \"\(field)\""), "\(r.stderr)")
        }
        #expect(f.replayText() == before)
        let early = CommandLineTool.run(["--store", f.store, "--now", "1970-01-01T12:00:00Z", "goals"], environment: [:], input: { Data() })
        #expect(early.exitCode == 2 && early.stderr.contains("--now must be between"), "\(early.stderr)")
        // The latest target date works, and its reminder is a four-digit-year RFC 3339 instant.
        let ok = #"{"type":"goalCreated","goal":"\#(Self.goal)","title":"Far","targetDate":"9999-12-30","reminder":{"hour":23,"minute":59}}"#
        #expect(f.run(["append"], input: ok).exitCode == 0)
        f.now = "9999-12-30T12:00:00Z"
        let pending = try f.json(["pending"])
        guard case .array(let requests) = pending["requests"], let first = requests.first,
            case .string(let next) = first["nextFireAt"]
        else { throw LedgerError(.internal, "no request in \(pending)") }
        #expect(next == "9999-12-31T04:59:00Z")
    }
}

/// Library messages name no command; the command line adds the one that repairs or upgrades.
struct RemedyHintTests {
    @Test func theCommandLineNamesTheCommandThatUpgradesAStore() throws {
        let f = CLIFixture()
        let legacy = f.root + "/legacy"
        let migrated = f.root + "/migrated"
        let goal = "3D2C1B0A-9F8E-4D7C-8B6A-5F4E3D2C1B0A"
        #expect(CLIFixture.runAt(legacy, ["init", "--device", "phone", "--schema", "1"]).exitCode == 0)
        let create = #"{"type":"goalCreated","goal":"\#(goal)","title":"Read","cadence":"daily","progress":{"kind":"measurable","target":20}}"#
        #expect(CLIFixture.runAt(legacy, ["append"], input: create).exitCode == 0)
        #expect(CLIFixture.runAt(migrated, ["clone", legacy, "--device", "tablet"]).exitCode == 0)
        #expect(CLIFixture.runAt(migrated, ["migrate"]).exitCode == 0)
        #expect(CLIFixture.runAt(migrated, ["append"], input: #"{"type":"progressRecorded","goal":"\#(goal)","amount":3}"#).exitCode == 0)
        let sync = CLIFixture.runAt(legacy, ["sync", migrated])
        #expect(sync.exitCode == 5)
        #expect(sync.stderr.hasSuffix("this store is on schema 1: run `ledger migrate` first\n"), "\(sync.stderr)")
    }

    @Test func eachReasonHasItsHint() {
        func hinted(_ reason: LedgerError.Reason) -> String { CommandLineTool.hinted(LedgerError("m", reason: reason)).message }
        #expect(hinted(.projectionDamaged) == "m (run `ledger rebuild`)")
        #expect(hinted(.indexDamaged(position: 3)) == "m (run `ledger verify`, then `ledger rebuild`)")
        #expect(hinted(.storeDamaged(position: 3)) == "m (run `ledger verify`, and restore a backup if the log is damaged)")
        #expect(
            hinted(.fileDamaged(position: nil))
                == "m (`ledger verify` names the damage; `ledger recover --out NEWDIR --from PEER` builds a new store from what is readable and what a peer holds)"
        )
        #expect(hinted(.needsMigration) == "m: run `ledger migrate` first")
        #expect(hinted(.hubNotInitialized(hub: "h")) == "m (`ledger hub init URL`)")
        #expect(hinted(.hubAccessNotGranted(hub: "h")) == "m (`ledger hub grant URL --ledger ID --role NAME`)")
        let newKey = "m (restore this device's key with `ledger backup`'s copy, or make a new device with `ledger clone`)"
        #expect(hinted(.signerNotTrusted(device: "phone")) == newKey)
        #expect(hinted(.deviceNotEnrolled(device: "phone", publicKey: [])) == newKey)
        #expect(hinted(.deviceRevoked(device: "phone", after: 2)) == "m (make a new device with `ledger clone`)")
        #expect(hinted(.restoredFromBackup(device: "phone")) == "m (run `ledger sync` with another device or the hub)")
        // Failures the command line has nothing to add to, a service's refusal among them.
        let plain: [LedgerError.Reason] = [
            .deviceNotEnrolled(device: "phone", publicKey: [], byService: true), .serviceRefused(peer: "s", status: 401),
            .peerUnreachable(peer: "s"), .storeExists(path: "/s"), .versionConflict(goal: UUID(), expected: 1, actual: 2),
            .fieldVersionConflict(goal: UUID(), field: .title), .invalidEvent(field: nil, index: 1, line: 2),
            .unknownGoal(goal: UUID(), index: 1, line: nil), .notificationCenterFailed(description: "x"),
        ]
        for reason in plain { #expect(hinted(reason) == "m", "\(reason)") }
        #expect(CommandLineTool.hinted(LedgerError(.store, "m")).message == "m")
        // Two hints go inside the message; the library's own hint gives way to the command line's.
        #expect(CommandLineTool.hinted(.noStore(at: "/s")).message == "no ledger store at /s (create one with `ledger init --device NAME`)")
        let keyless = LedgerError.signingKeyMissing(device: "phone", path: "/s", hint: " (the library's)")
        #expect(
            CommandLineTool.hinted(keyless).message
                == "the signing key of phone is missing from /s (a backup restored without --with-key?): this device cannot sign; nothing was written")
        #expect(CommandLineTool.hinted(keyless).reason == keyless.reason)
        let error = LedgerError("a projection row is damaged: a header of 3 bytes", reason: .projectionDamaged)
        #expect(error.message == "a projection row is damaged: a header of 3 bytes")
        #expect(CommandLineTool.hinted(error).message == "a projection row is damaged: a header of 3 bytes (run `ledger rebuild`)")
    }
}
