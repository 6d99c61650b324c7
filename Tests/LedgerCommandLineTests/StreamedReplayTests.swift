import Foundation
import GoalLedger
import Testing

@testable import LedgerCommandLine

/// `replay` without `--as-of` folds one goal at a time; it prints the same bytes as the fold of
/// the whole log (`--as-of` a moment after every event takes that path).
struct StreamedReplayTests {
    @Test func theGoalByGoalReplayPrintsWhatTheWholeFoldPrints() throws {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        var lines = everyKindOfGoal
        // More entries, removals (one of an entry still to come, one of a missing entry), edits
        // and a deletion, so that goals differ in more than their creation.
        for (n, goal) in goalIDs.prefix(10).enumerated() {
            let measurable = n % 2 == 1
            for d in 1...3 {
                let entry = measurable ? #""amount":\#(d).25"# : #""completed":\#(d != 2)"#
                lines.append(
                    #"{"id":"E3000000-0000-4000-8000-00000000\#(n)\#(d)00","type":"progressRecorded","goal":"\#(goal)",\#(entry),"at":"2026-11-1\#(d)T10:00:00Z"}"#)
            }
            lines.append(
                #"{"type":"progressRemoved","goal":"\#(goal)","entry":"E3000000-0000-4000-8000-00000000\#(n)200","at":"2026-11-15T10:00:00Z"}"#)
        }
        lines.append(#"{"type":"goalEdited","goal":"\#(goalIDs[3])","title":"renamed","at":"2026-11-16T10:00:00Z"}"#)
        lines.append(#"{"type":"goalDeleted","goal":"\#(goalIDs[4])","at":"2026-11-16T11:00:00Z"}"#)
        f.now = "2026-11-20T00:00:00Z"
        let appended = f.run(["append"], input: lines.joined(separator: "\n") + "\n")
        #expect(appended.exitCode == 0, "\(appended.stderr)")
        let whole = ["--as-of", "9999-12-31T23:59:59Z"]
        var compared = 0
        for to in [[], ["--to", "0"], ["--to", "1"], ["--to", "17"], ["--to", "40"], ["--to", "1000"]] {
            for json in [[], ["--json"]] {
                let streamed = f.run(["replay"] + to + json)
                #expect(streamed.exitCode == 0)
                #expect(streamed.stdout == f.run(["replay"] + to + whole + json).stdout, "replay \(to + json)")
                compared += streamed.stdout.isEmpty ? 0 : 1
            }
        }
        #expect(compared == 12)
        #expect(f.run(["replay"]).stdout.contains(" 10 goals · digest "))
    }
}
