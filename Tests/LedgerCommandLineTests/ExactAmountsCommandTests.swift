import Foundation
import GoalLedger
import Testing

/// Amounts are exact decimals through the command line: every value of the contract's range is
/// accepted as written, sums past 2^53 millionths print exactly, a number out of range or with
/// too many digits is refused naming its line and field, and small amounts print in plain
/// decimal notation. Stores and an export file written before amounts were exact open, sync and
/// verify (fixtures in `GoalLedgerTests/Fixtures/double-amounts`).
struct ExactAmountsCommandTests {
    static let goal = "5A1E0C2B-7D3F-4E8A-9B6C-0D1E2F3A4B5C"

    static func created(target: String, cadence: String = "monthly") -> String {
        #"{"type":"goalCreated","goal":"\#(goal)","title":"Save","cadence":"\#(cadence)","progress":{"kind":"measurable","target":\#(target),"unit":"EUR"},"at":"2026-11-05T08:00:00Z"}"#
    }

    static func progress(_ amount: String, id: Int) -> String {
        #"{"id":"A0000000-0000-4000-8000-\#(String(format: "%012d", id))","type":"progressRecorded","goal":"\#(goal)","amount":\#(amount),"at":"2026-11-05T09:00:00Z"}"#
    }

    static func fixture() -> CLIFixture {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        return f
    }

    /// The entries' amounts of `show --json`, as the JSON text prints them.
    static func amounts(_ f: CLIFixture) -> [String] {
        let out = f.run(["show", goal, "--json"]).stdout
        return out.components(separatedBy: #""amount":"#).dropFirst().map { String($0.prefix { $0 != "," && $0 != "}" }) }
    }

    @Test(arguments: ["999999999999.999999", "123456789012.345678", "-999999999999.999999", "9007199254.740991", "9007199254.740993", "0.000001"])
    func everyValueOfTheRangeIsAcceptedExactlyAsWritten(_ amount: String) throws {
        let f = Self.fixture()
        let r = f.run(["append"], input: Self.created(target: "1000000000000") + "\n" + Self.progress(amount, id: 1))
        #expect(r.exitCode == 0, "\(amount): \(r.stderr)")
        #expect(Self.amounts(f) == [amount])
        #expect(f.run(["log"]).stdout.contains("amount=\(amount)"), "log prints the amount as written")
        #expect(f.run(["log", "--json"]).stdout.contains("\"amount\":\(amount)"), "log --json prints the amount as written")
        #expect(f.run(["goals"]).stdout.contains(" \(amount)/1000000000000 "), "\(f.run(["goals"]).stdout)")
        // The same value as a target.
        let g = Self.fixture()
        if !amount.hasPrefix("-") {
            #expect(g.run(["append"], input: Self.created(target: amount)).exitCode == 0)
            #expect(g.run(["show", Self.goal]).stdout.contains("measure   \(amount) EUR"))
        }
        #expect(f.run(["verify"]).exitCode == 0)
    }

    @Test func sumsPastTwoToTheFiftyThreeMillionthsPrintExactly() throws {
        let f = Self.fixture()
        #expect(f.run(["append"], input: [Self.created(target: "10000000000"), Self.progress("5000000000", id: 1), Self.progress("4999999999.999999", id: 2)].joined(separator: "\n")).exitCode == 0)
        var goals = try f.json(["goals", "--json"])
        #expect(JSONWriter.message(goals) .contains(#""value":9999999999.999999,"completed":false"#), "\(JSONWriter.message(goals))")
        #expect(f.run(["goals"]).stdout.contains("9999999999.999999/10000000000 (2026-11-01…2026-11-30)"))
        #expect(f.run(["append"], input: Self.progress("0.000002", id: 3)).exitCode == 0)
        goals = try f.json(["goals", "--json"])
        #expect(JSONWriter.message(goals).contains(#""value":10000000000.000001,"completed":true"#), "\(JSONWriter.message(goals))")
        #expect(f.run(["goals"]).stdout.contains("10000000000.000001/10000000000 done"))
        // Ten entries of the largest amount: a sum beyond what 64 bits of millionths hold, exact.
        let g = Self.fixture()
        let lines = [Self.created(target: "1")] + (1...10).map { Self.progress("999999999999.999999", id: $0) }
        #expect(g.run(["append"], input: lines.joined(separator: "\n")).exitCode == 0)
        #expect(g.run(["goals"]).stdout.contains(" 9999999999999.99999/1 done"), "\(g.run(["goals"]).stdout)")
        #expect(g.run(["verify"]).exitCode == 0)
    }

    @Test(arguments: [
        ("2.0000000000000001", "must have at most 6 digits after the decimal point, got 16"),
        ("0.1234567", "must have at most 6 digits after the decimal point, got 7"),
        ("1000000000000.000001", "must be a number between -1e12 and 1e12, got 1000000000000.000001"),
        ("-1000000000000.000001", "must be a number between -1e12 and 1e12"),
        ("1e400", "must be a number between -1e12 and 1e12, got 1e400"),
        ("1e-400", "must have at most 6 digits after the decimal point"),
        ("123456789012345678901234567890", "must be a number between -1e12 and 1e12"),
    ])
    func anAmountOrTargetOutOfRangeIsRefusedNamingItsLineAndField(_ amount: String, _ message: String) throws {
        let f = Self.fixture()
        #expect(f.run(["append"], input: Self.created(target: "5")).exitCode == 0)
        let before = f.replayText()
        let r = f.run(["append"], input: Self.progress("1", id: 1) + "\n" + Self.progress(amount, id: 2))
        #expect(r.exitCode == 3)
        #expect(r.stderr.contains(#"line 2: field "amount": "# + message), "\(amount): \(r.stderr)")
        #expect(!r.stderr.contains("malformed JSON"))
        let t = f.run(["append"], input: #"{"type":"goalEdited","goal":"\#(Self.goal)","target":\#(amount)}"#)
        #expect(t.exitCode == 3)
        #expect(t.stderr.contains(#"line 1: field "target": "#), "\(amount): \(t.stderr)")
        #expect(f.replayText() == before, "a refused batch changed the store")
        // A number that is not JSON is still malformed JSON.
        let m = f.run(["append"], input: Self.progress("1.", id: 3))
        #expect(m.exitCode == 3 && m.stderr.contains("malformed JSON"), "\(m.stderr)")
    }

    @Test func smallAmountsPrintInPlainDecimalEverywhere() throws {
        let f = Self.fixture()
        let lines = [Self.created(target: "0.000002", cadence: "daily"), Self.progress("0.000001", id: 1), Self.progress("1e-6", id: 2), Self.progress("0.0000010", id: 3)]
        #expect(f.run(["append"], input: lines.joined(separator: "\n")).exitCode == 0)
        for args in [["log"], ["log", "--json"], ["show", Self.goal], ["show", Self.goal, "--json"], ["goals"], ["goals", "--json"], ["replay", "--json"], ["audit", Self.goal]] {
            let out = f.run(args).stdout
            #expect(out.range(of: #"[0-9]e[-+][0-9]"#, options: .regularExpression) == nil, "\(args): \(out)")
            if args[0] != "goals" { #expect(out.contains("0.000001"), "\(args): \(out)") }
        }
        #expect(Self.amounts(f) == ["0.000001", "0.000001", "0.000001"])
        #expect(f.run(["goals"]).stdout.contains("0.000003/0.000002 done"), "\(f.run(["goals"]).stdout)")
    }

    /// Copies `name` of the fixture written before amounts were exact.
    static func legacy(_ name: String, into f: CLIFixture) throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("GoalLedgerTests/Fixtures/double-amounts/\(name)")
        let target = f.root + "/" + name
        try FileManager.default.createDirectory(atPath: f.root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: source.path, toPath: target)
        return target
    }

    @Test func storesAndAnExportWrittenBeforeExactAmountsOpenSyncAndVerify() throws {
        let f = CLIFixture()
        let phone = try Self.legacy("phone", into: f)
        let laptop = try Self.legacy("laptop", into: f)
        let export = try Self.legacy("phone.export", into: f)
        for store in [phone, laptop] {
            let v = CLIFixture.runAt(store, ["verify"])
            #expect(v.exitCode == 0, "\(v.stdout)\(v.stderr)")
        }
        // The amounts as they were typed, and their sum exact (before: 123458.088949).
        let show = CLIFixture.runAt(phone, ["show", Self.goal]).stdout
        for text in ["  0.000001  ", "  0  ", "  0.1  ", "  -999999999999  ", "  1000000000000  ", "  123456.789012  ", "123458.089013/9007199254.740993"] {
            #expect(show.contains(text), "\(text): \(show)")
        }
        // A new store of this version clones the old one, and an amount only exact amounts
        // hold goes from it to the old stores.
        let clone = CLIFixture.runAt(f.root + "/tablet", ["clone", phone, "--device", "tablet"])
        #expect(clone.exitCode == 0, "\(clone.stderr)")
        let tablet = f.root + "/tablet"
        let add = CLIFixture.runAt(tablet, ["append"], input: Self.progress("999999999999.999999", id: 99))
        #expect(add.exitCode == 0, "\(add.stderr)")
        for (a, b) in [(tablet, phone), (phone, laptop), (tablet, phone)] {
            let s = CLIFixture.runAt(a, ["sync", b])
            #expect(s.exitCode == 0, "\(s.stderr)")
        }
        let replays = [phone, laptop, tablet].map { CLIFixture.runAt($0, ["replay", "--json"]).stdout }
        #expect(replays[0] == replays[1] && replays[1] == replays[2])
        #expect(replays[0].contains(#""amount":999999999999.999999"#) && replays[0].contains(#""amount":0.000001"#))
        for store in [phone, laptop, tablet] { #expect(CLIFixture.runAt(store, ["verify"]).exitCode == 0) }
        // The old export file imports into a store of the same ledger.
        let g = CLIFixture()
        let copy = try Self.legacy("laptop", into: g)
        let i = CLIFixture.runAt(copy, ["import", export])
        #expect(i.exitCode == 0, "\(i.stderr)")
        #expect(CLIFixture.runAt(copy, ["verify"]).exitCode == 0)
    }
}
