import Foundation
@testable import GoalLedger
import Testing

@testable import LedgerCommandLine

/// `append` reads a large input in pieces, in parallel: the events, their line numbers and the
/// first error must be those of a reading in order.
struct AppendInputTests {
    /// About 3 MiB of lines, with blank lines, carriage returns and no final line feed.
    static func input(badLines: Set<Int> = []) -> (text: String, expected: [Int]) {
        let goal = "5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9E11"
        var lines: [String] = []
        var expected: [Int] = []
        for n in 1...30_000 {
            if badLines.contains(n) {
                lines.append(n % 2 == 0 ? #"{"type":"progressRecorded","goal":"\#(goal)","amount":"#
                    : #"{"type":"progressRecorded","goal":"\#(goal)","colour":1}"#)
            } else if n % 97 == 0 {
                lines.append(n % 2 == 0 ? "" : " \t ")
            } else {
                lines.append(#"{"type":"progressRecorded","goal":"\#(goal)","amount":\#(n % 7)}"# + (n % 5 == 0 ? "\r" : ""))
                expected.append(n)
            }
        }
        return (lines.joined(separator: "\n"), expected)
    }

    @Test func piecesGiveTheLinesOfAReadingInOrder() throws {
        let (text, expected) = Self.input()
        #expect(text.utf8.count > 1 << 21)
        let (drafts, lines) = try AppendCommand.parseLines(Data(text.utf8), schema: 2)
        #expect(lines == expected)
        #expect(drafts.count == expected.count)
        let amounts = drafts.map { d -> Double? in
            guard case .progressRecorded(let p) = d.payload else { return nil }
            return p.amount
        }
        #expect(amounts == expected.map { Double($0 % 7) })
        // With a final line feed the last line is empty and skipped.
        let (_, again) = try AppendCommand.parseLines(Data((text + "\n").utf8), schema: 2)
        #expect(again == expected)
    }

    @Test func resultLinesAreTheJSONOfTheResults() throws {
        for (position, duplicate) in [(UInt64(1), false), (987_654_321, true), (999_999_999_999_999, false), (1_000_000_000_000_000, true)] {
            let r = AppendResult(id: UUID(), position: position, hlc: HLC(rawValue: position &* 65_537), duplicate: duplicate)
            #expect(try AppendCommand.line(r) == (try JSONWriter.string(r.json)))
        }
    }

    @Test(arguments: [[29_001], [2, 29_001], [15_000, 15_001], [30_000]])
    func theFirstInvalidLineIsNamed(_ bad: [Int]) throws {
        let (text, _) = Self.input(badLines: Set(bad))
        do {
            _ = try AppendCommand.parseLines(Data(text.utf8), schema: 2)
            Issue.record("an invalid line was accepted")
        } catch {
            #expect(error.message.hasPrefix("line \(bad.min()!)"), "\(error.message)")
        }
    }
}
