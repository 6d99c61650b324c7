import Foundation
import GoalLedger
import Testing

/// A weekly reminder's weekday through the command line: appended as a JSON line, printed by
/// `show`, `replay` and `log`, planned by `pending`; a reminder without one prints as before.
struct ReminderWeekdayCommandTests {
    static let swim = "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1"
    static let read = "1C6F3B9D-7D2A-4F1C-8D63-9E1D7C1F62B2"

    func fixture() -> CLIFixture {
        let f = CLIFixture()
        f.run(["init", "--device", "phone"])
        let lines = [
            #"{"type":"deviceConfigured","timeZone":"Europe/Berlin","firstWeekday":2}"#,
            #"{"type":"goalCreated","goal":"\#(Self.swim)","title":"Swim","cadence":"weekly","reminder":{"hour":8,"minute":15,"weekday":7}}"#,
            #"{"type":"goalCreated","goal":"\#(Self.read)","title":"Read","cadence":"weekly","reminder":{"hour":8,"minute":15}}"#,
        ]
        let r = f.run(["append"], input: lines.joined(separator: "\n") + "\n")
        #expect(r.exitCode == 0, "\(r.stderr)")
        return f
    }

    @Test func showReplayAndLogCarryTheWeekdayOnlyWhenChosen() throws {
        let f = fixture()
        #expect(f.run(["show", Self.swim]).stdout.contains("\n  reminder  08:15 Saturday\n"))
        #expect(f.run(["show", Self.read]).stdout.contains("\n  reminder  08:15\n"))
        let replay = f.run(["replay", "--json"]).stdout
        #expect(
            replay.contains(
                #""title":"Swim","details":null,"cadence":"weekly","targetDate":null,"progress":{"kind":"outcome"},"reminder":{"hour":8,"minute":15,"weekday":7}"#
            ))
        #expect(
            replay.contains(
                #""title":"Read","details":null,"cadence":"weekly","targetDate":null,"progress":{"kind":"outcome"},"reminder":{"hour":8,"minute":15},"tags""#
            ))
        let log = f.run(["log", "--json"]).stdout
        #expect(log.contains(#""reminder":{"hour":8,"minute":15,"weekday":7}"#))
    }

    @Test func pendingFiresOnSaturdayAndTheFirstWeekdayOtherwise() throws {
        let f = fixture()
        f.now = "2026-06-10T12:00:00Z"  // Wednesday
        guard case .array(let requests)? = try f.json(["pending"])["requests"] else {
            Issue.record("no requests")
            return
        }
        let byGoal = Dictionary(
            uniqueKeysWithValues: requests.compactMap { r -> (String, JSONValue)? in
                guard case .string(let g)? = r["goal"] else { return nil }
                return (g, r)
            })
        #expect(byGoal[Self.swim]?["trigger"]?["components"]?["weekday"] == .number(7))
        #expect(byGoal[Self.swim]?["nextFireAt"] == .string("2026-06-13T06:15:00Z"))
        #expect(byGoal[Self.read]?["trigger"]?["components"]?["weekday"] == .number(2))
        #expect(byGoal[Self.read]?["nextFireAt"] == .string("2026-06-15T06:15:00Z"))
    }

    @Test func aBadWeekdayIsRefusedNamingTheLineAndFieldAndChangesNothing() throws {
        let f = fixture()
        let before = f.replayText()
        let r = f.run(["append"], input: #"{"type":"reminderSet","goal":"\#(Self.swim)","weekday":8}"# + "\n")
        #expect(r.exitCode == 3)
        #expect(r.stderr.contains(#"line 1: field "weekday": must be between 1 and 7, got 8"#), "\(r.stderr)")
        #expect(f.replayText() == before)
    }
}
