import Foundation
import GoalLedger
import Testing

@testable import LedgerCommandLine

struct CommandLineTests {
    static func keys(_ v: JSONValue?) -> [String] {
        guard case .object(let m) = v else { return [] }
        return m.map(\.0)
    }

    @Test func everyCadenceAndKindReplaysWithEveryFieldOfTheSpec() throws {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        let appended = f.run(["append"], input: everyKindOfGoal.joined(separator: "\n") + "\n")
        #expect(appended.exitCode == 0, "\(appended.stderr)")
        let replay = try f.json(["replay"])
        #expect(Self.keys(replay) == ["position", "digest", "goals"])
        // Written goal by goal, the document is the same bytes as the whole value encoded at once.
        let projection = try LedgerStore.open(at: f.store).replay()
        let whole = try JSONWriter.string(.object([
            ("position", .number(Double(projection.position))), ("digest", .string(try projection.digest)), ("goals", projection.canonicalJSON),
        ]))
        #expect(f.run(["replay", "--json"]).stdout == whole + "\n")
        var streamed = ""
        let r = CommandLineTool.run(["--store", f.store, "replay", "--json"], environment: [:], input: { Data() }, output: { streamed += $0 })
        #expect(r.stdout.isEmpty && streamed == whole + "\n")
        #expect(replay["position"] == .number(21))
        guard case .array(let goals) = replay["goals"] else {
            Issue.record("no goals")
            return
        }
        #expect(goals.count == 10)
        for g in goals {
            #expect(
                Self.keys(g) == ["id", "title", "details", "cadence", "targetDate", "progress", "reminder", "tags", "deleted", "entries"])
            #expect(g["reminder"] == .object([("hour", .number(8)), ("minute", .number(0))]))
            guard case .array(let entries) = g["entries"], let entry = entries.first else {
                Issue.record("no entries")
                continue
            }
            let kind = g["progress"]?["kind"]
            #expect(Self.keys(entry) == ["id", kind == .string("measurable") ? "amount" : "completed", "occurredAt", "day", "device"])
            #expect(entry["device"] == .string("phone"))
            // 10:00 UTC is 05:00 in New York: still the 5th.
            #expect(entry["day"] == .string("2026-11-05"))
            if kind == .string("measurable") {
                #expect(Self.keys(g["progress"]) == ["kind", "target", "unit"])
            }
        }
        let ids = goals.compactMap { if case .string(let s) = $0["id"] { return s } else { return nil } }
        #expect(ids == ids.sorted())
        #expect(goals.first?["tags"] == .array([.string("common"), .string("t0")]))

        // show: the facts plus the view for the local device.
        for (i, id) in goalIDs.prefix(10).enumerated() {
            let shown = try f.json(["show", id])
            #expect(Self.keys(shown).last == "view")
            #expect(Self.keys(shown["view"]) == ["periodStart", "periodEnd", "value", "completed", "streak"])
            #expect(shown["view"]?["completed"] == .bool(true), "goal \(i)")
            let once = i < 2
            #expect((shown["view"]?["streak"] == .null) == once)
            if !once { #expect(shown["view"]?["streak"]?["current"] == .number(1)) }
        }
        let weekly = try f.json(["show", goalIDs[4]])
        #expect(weekly["view"]?["periodStart"] == .string("2026-11-01"))  // Sunday, the device's first weekday
        #expect(weekly["view"]?["periodEnd"] == .string("2026-11-07"))
        let measurableDaily = try f.json(["show", goalIDs[3]])
        #expect(measurableDaily["view"]?["value"] == .number(4))
        guard case .array(let listed) = try f.json(["goals"]) else {
            Issue.record("goals is not an array")
            return
        }
        #expect(listed.count == 10)
    }

    @Test func reappendingTheSameLinesIsANoOpThatReportsOriginalPositions() throws {
        let f = CLIFixture()
        f.run(["init", "--device", "phone"])
        let input = everyKindOfGoal.joined(separator: "\n")
        let first = f.run(["append"], input: input).stdout
        let digest = try f.json(["replay"])["digest"]
        let second = f.run(["append"], input: input)
        #expect(second.exitCode == 0)
        let a = try first.split(separator: "\n").map { try JSONParser.parse(String($0)) }
        let b = try second.stdout.split(separator: "\n").map { try JSONParser.parse(String($0)) }
        #expect(a.count == b.count)
        for (x, y) in zip(a, b) {
            #expect(Self.keys(y) == ["id", "position", "hlc", "duplicate"])
            #expect(x["position"] == y["position"] && x["hlc"] == y["hlc"] && x["id"] == y["id"])
            #expect(x["duplicate"] == .bool(false) && y["duplicate"] == .bool(true))
        }
        #expect(try f.json(["status"])["events"] == .number(21))
        #expect(try f.json(["replay"])["digest"] == digest)
    }

    @Test func exitCodesFollowTheSpec() throws {
        let f = CLIFixture()
        #expect(f.run(["goals"]).exitCode == 5)  // no store yet
        #expect(f.run(["frobnicate"]).exitCode == 2)
        #expect(f.run(["init"]).exitCode == 2)
        #expect(f.run(["init", "--device", "Bad Name"]).exitCode == 2)
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        #expect(f.run(["init", "--device", "phone"]).exitCode == 5)
        #expect(f.run(["append"], input: everyKindOfGoal.joined(separator: "\n")).exitCode == 0)
        #expect(f.run(["show", "not-a-uuid"]).exitCode == 2)
        #expect(f.run(["replay", "--to", "minus"]).exitCode == 2)
        #expect(f.run(["--now", "tomorrow", "goals"]).exitCode == 2)
        #expect(f.run(["show", "B0000000-0000-4000-8000-000000000000"]).exitCode == 3)
        let before = f.replayText()
        let bad = f.run(
            ["append"],
            input: #"{"type":"goalEdited","goal":"\#(goalIDs[0])","title":"ok"}"# + "\n\n"
                + #"{"type":"goalEdited","goal":"\#(goalIDs[0])","title":7}"#)
        #expect(bad.exitCode == 3)
        #expect(bad.stderr.contains("line 3") && bad.stderr.contains("\"title\""), "\(bad.stderr)")
        let conflict = f.run(["append", "--expect-version", "7"], input: #"{"type":"goalEdited","goal":"\#(goalIDs[0])","title":"x"}"#)
        #expect(conflict.exitCode == 4, "\(conflict.stderr)")
        #expect(f.replayText() == before)
        #expect(
            f.run(["append", "--expect-version", "2"], input: #"{"type":"goalEdited","goal":"\#(goalIDs[0])","title":"x"}"#).exitCode == 0)
        // A final line feed is the end of the one line, not a batch of its own.
        #expect(
            f.run(["append", "--expect-version", "3"], input: #"{"type":"goalEdited","goal":"\#(goalIDs[0])","title":"y"}"# + "\n").exitCode
                == 0)
        #expect(f.run(["append", "--file", f.root + "/absent.jsonl"]).exitCode == 3)
    }

    @Test func statusLogAndTimeTravel() throws {
        let f = CLIFixture()
        f.run(["init", "--device", "phone"])
        f.run(["append"], input: everyKindOfGoal.joined(separator: "\n"))
        let status = try f.json(["status"])
        #expect(
            Self.keys(status) == [
                "ledger", "device", "schema", "events", "origins", "projections", "digest", "migrations", "deviceKey", "devices", "signed",
            ])
        #expect(status["signed"] == .bool(true))
        #expect(status["origins"] == .object([("phone", .number(21))]))
        #expect(status["digest"] == (try f.json(["replay"]))["digest"])
        guard case .array(let log) = try f.json(["log", "--goal", goalIDs[0]]) else {
            Issue.record("log is not an array")
            return
        }
        #expect(log.count == 2)
        #expect(Self.keys(log[0]).prefix(8) == ["position", "id", "type", "device", "sequence", "hlc", "at", "schema"])
        #expect(try f.json(["replay", "--to", "3"])["position"] == .number(3))
        guard case .array(let early) = try f.json(["replay", "--as-of", "2026-11-02T00:00:00Z"])["goals"] else { return }
        #expect(early.count == 2)  // only the two goals created on the 1st
        let asOf = try f.json(["show", goalIDs[2], "--as-of", "2026-11-02T14:00:00Z"])
        #expect(asOf["entries"] == .array([]))
        let help = f.run(["--help"])
        #expect(help.exitCode == 0 && help.stdout.contains("append"))
        #expect(f.run(["append", "--help"]).stdout.contains("--expect-version"))
    }
}

struct ProjectionCommandTests {
    @Test func rebuildVerifyAndAuditFromTheCommandLine() throws {
        let f = CLIFixture()
        f.run(["init", "--device", "phone"])
        f.run(["append"], input: everyKindOfGoal.joined(separator: "\n"))
        f.run(
            ["append"],
            input: [
                #"{"type":"goalEdited","goal":"\#(goalIDs[0])","title":"first"}"#,
                #"{"type":"goalEdited","goal":"\#(goalIDs[0])","title":"second"}"#,
            ].joined(separator: "\n"))
        let before = try f.json(["replay"])["digest"]
        let status = try f.json(["status"])
        #expect(status["projections"]?["goals"]?["checkpoint"] == .number(23))
        #expect(status["digest"] == before)
        let rebuilt = f.run(["rebuild"])
        #expect(rebuilt.exitCode == 0, "\(rebuilt.stderr)")
        #expect(try f.json(["status"])["digest"] == before)
        let verified = try f.json(["verify"])
        #expect(verified["ok"] == .bool(true))
        #expect(verified["events"] == .number(23))
        guard case .array(let steps) = try f.json(["audit", goalIDs[0]])["steps"] else {
            Issue.record("audit has no steps")
            return
        }
        #expect(steps.count == 4)
        #expect(
            steps[2]["changes"]
                == .array([.object([("field", .string("title")), ("before", .string("once outcome")), ("after", .string("first"))])]))
        let text = f.run(["audit", goalIDs[0]]).stdout
        #expect(text.contains(#"title: "first" → "second""#), "\(text)")
        #expect(f.run(["audit", "B0000000-0000-4000-8000-000000000000"]).exitCode == 3)
    }

    @Test func verifyExitsWithAStoreProblemWhenTheLogIsDamaged() throws {
        let f = CLIFixture()
        f.run(["init", "--device", "phone"])
        f.run(["append"], input: everyKindOfGoal.joined(separator: "\n"))
        let store = try LedgerStore.open(at: f.store)
        let title = Data("yearly measurable".utf8)
        let file = URL(fileURLWithPath: store.path + "/data.mdb")
        var data = try Data(contentsOf: file)
        // The title is in the event record and in the projection row: damage every copy.
        var found = 0
        while let range = data.range(of: title) {
            data[range.lowerBound] = UInt8(ascii: "Y")
            found += 1
        }
        #expect(found >= 1)
        try data.write(to: file)
        let r = f.run(["verify"])
        #expect(r.exitCode == 5)
        #expect(r.stdout.contains("is damaged: checksum mismatch"), "\(r.stdout)")
    }

    /// The library's messages name no command-line option; the command line adds its own hints
    /// to the failures its commands fix, and prints them as it always has.
    @Test func theCommandLineHintsAtItsOwnCommandsAndOptions() throws {
        let f = CLIFixture()
        let missing = f.run(["goals"])
        #expect(missing.exitCode == 5)
        #expect(missing.stderr == "ledger: no ledger store at \(f.store) (create one with `ledger init --device NAME`)\n")
        let peer = f.root + "/absent"
        f.run(["init", "--device", "phone"])
        #expect(f.run(["sync", peer]).stderr == "ledger: no ledger store at \(peer) (create one with `ledger init --device NAME`)\n")

        // A backup restored without its key: once it has caught up, it still cannot sign.
        let tablet = f.root + "/tablet"
        #expect(CLIFixture.runAt(tablet, ["clone", f.store, "--device", "tablet"]).exitCode == 0)
        let keyless = f.root + "/keyless"
        #expect(f.run(["backup", keyless]).exitCode == 0)
        #expect(CLIFixture.runAt(keyless, ["sync", tablet]).exitCode == 0)
        let refused = CLIFixture.runAt(keyless, ["append"], input: everyKindOfGoal[0])
        #expect(refused.exitCode == 5)
        #expect(
            refused.stderr
                == "ledger: the signing key of phone is missing from \(keyless) (a backup restored without --with-key?): this device cannot sign; nothing was written\n"
        )
    }
}
