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
        let amounts = drafts.map { d -> Amount? in
            guard case .progressRecorded(let p) = d.payload else { return nil }
            return p.amount
        }
        #expect(amounts == expected.map { try! Amount(whole: Int64($0 % 7)) })
        // With a final line feed the last line is empty and skipped.
        let (_, again) = try AppendCommand.parseLines(Data((text + "\n").utf8), schema: 2)
        #expect(again == expected)
    }

    /// Chunks of any size, read in turn, give the input back and the same events and line
    /// numbers as one reading: a line longer than a chunk, blank lines, carriage returns, an
    /// input with or without its final line feed, and an empty one.
    @Test(arguments: [1, 7, 300, 4_096, 1 << 20])
    func chunksGiveTheLinesOfOneReading(_ size: Int) throws {
        let (text, expected) = Self.input()
        // The first 400 or so lines (about 23 KiB), without the line feed after the last.
        let sample = text.split(separator: "\n", omittingEmptySubsequences: false).prefix(400).joined(separator: "\n")
        for input in ["", "\n", sample, sample + "\n"] {
            let data = Data(input.utf8)
            var chunks = AppendCommand.ChunkedInput(data, size: size)
            var joined: [UInt8] = []
            var lines: [Int] = []
            var before = 0
            var count = 0
            var lastChunkEmpty = false
            while let (bytes, last) = try chunks.next() {
                count += 1
                lastChunkEmpty = last && bytes.isEmpty
                #expect(last || bytes.last == UInt8(ascii: "\n"))
                joined += bytes
                let piece = bytes.withUnsafeBytes { AppendCommand.parseLines($0, schema: 2, endsInput: last) }
                #expect(piece.error == nil)
                lines += piece.lines.map { before + $0 }
                before += piece.lineCount
            }
            #expect(count >= 1)
            // Only an empty input ends with an empty chunk.
            #expect(data.isEmpty || !lastChunkEmpty)
            #expect(joined == Array(data))
            #expect(lines == (try AppendCommand.parseLines(data, schema: 2)).1)
            if !input.hasPrefix("\n") && !input.isEmpty { #expect(lines.count > 300 && Set(lines).isSubset(of: expected)) }
        }
    }

    @Test func resultLinesAreTheJSONOfTheResults() throws {
        for (position, duplicate) in [
            (UInt64(1), false), (9, true), (10, false), (100, true), (987_654_321, true), (999_999_999_999_999, false),
            (1_000_000_000_000_000, true),
        ] {
            for hlc in [position &* 65_537, 0, 0xF, UInt64.max] {
                let r = AppendResult(id: UUID(), position: position, hlc: HLC(rawValue: hlc), duplicate: duplicate)
                #expect(try AppendCommand.line(r) == (try JSONWriter.string(r.json)))
                // The clock as sixteen upper-case hex digits, read back as it was.
                #expect(r.hlc.description == String(format: "%016llX", hlc) && HLC(hex: r.hlc.description) == r.hlc)
            }
        }
    }

    /// The result lines, made in pieces on several threads, come out whole and in order:
    /// none, one, exactly a piece, and many rounds of pieces with a piece cut short (and a
    /// position past 10^18, whose line `JSONWriter` writes).
    @Test(arguments: [0, 1, AppendCommand.linesPerPiece, AppendCommand.linesPerPiece * 9 + 17])
    func resultLinesArePrintedWholeAndInOrder(_ count: Int) throws {
        var results: [AppendResult] = []
        for i in 0..<count {
            let clock = HLC(rawValue: UInt64(i) &* 65_537)
            results.append(AppendResult(id: UUID(), position: UInt64(i + 1), hlc: clock, duplicate: i % 5 == 0))
        }
        if count > 1 { results[count / 2] = AppendResult(id: UUID(), position: 1_000_000_000_000_001, hlc: HLC(rawValue: 7), duplicate: false) }
        var expected = ""
        for r in results { expected += try AppendCommand.line(r) + "\n" }
        // Made as printed, or ahead (the first lines while the write finishes): lines made
        // ahead of other results, or of more, are not printed.
        let others = results.map { AppendResult(id: UUID(), position: $0.position, hlc: $0.hlc, duplicate: $0.duplicate) }
        let more = results + [AppendResult(id: UUID(), position: 1, hlc: HLC(rawValue: 1), duplicate: false)]
        for ahead in [nil, results, others, more, Array(results.prefix(count / 3))] {
            var inv = Invocation(environment: [:], readInput: { Data() })
            try AppendCommand.printLines(of: results, formattedAhead: ahead.map(AppendCommand.FormattedLines.init), &inv)
            #expect(inv.out == expected, "ahead: \(ahead?.count ?? -1) lines")
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

/// An input larger than one chunk is appended chunk by chunk in one write: one atomic batch
/// whose line numbers, duplicates and refusals are those of the whole input.
struct ChunkedAppendTests {
    static let goal = "5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9E12"

    /// Lines padded to about 2 KiB each, so that `count` lines make several chunks.
    static func lines(_ count: Int, invalidAt bad: Int? = nil, repeatFirstIDAt repeated: Int? = nil) -> String {
        let padding = String(repeating: " ", count: 2_000)
        var out = [#"{"type":"goalCreated","goal":"\#(goal)","title":"Run","cadence":"daily","progress":{"kind":"measurable","target":5}}"#]
        for n in 2...count {
            let id = String(format: "E0000000-0000-4000-8000-%012d", n == repeated ? 2 : n)
            let amount = n == bad ? #""many""# : "\(n % 5)"
            out.append(#"{"id":"\#(id)","type":"progressRecorded","goal":"\#(goal)","amount":\#(amount)}"# + padding)
        }
        return out.joined(separator: "\n") + "\n"
    }

    @Test func aBatchOfSeveralChunksIsOneAtomicAppend() throws {
        let f = CLIFixture()
        f.run(["init", "--device", "phone"])
        let count = AppendCommand.chunkBytes / 2_000 * 2 + 500
        let file = f.root + "/big.jsonl"
        // Refused in the second chunk: the error names the line, and nothing of the first
        // chunk is kept.
        let bad = count - 100
        try Data(Self.lines(count, invalidAt: bad).utf8).write(to: URL(fileURLWithPath: file))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)).count > 2 * AppendCommand.chunkBytes)
        let before = f.replayText()
        let refused = f.run(["append", "--file", file])
        #expect(refused.exitCode == 3)
        #expect(refused.stderr.contains("line \(bad)"), "\(refused.stderr)")
        #expect(f.replayText() == before)
        // Accepted: positions in line order, and an id repeated in a later chunk is a duplicate
        // of its first line's event.
        try Data(Self.lines(count, repeatFirstIDAt: count - 1).utf8).write(to: URL(fileURLWithPath: file))
        let accepted = f.run(["append", "--file", file])
        #expect(accepted.exitCode == 0, "\(accepted.stderr)")
        let results = accepted.stdout.split(separator: "\n").map { try! JSONParser.parse(String($0)) }
        #expect(results.count == count)
        let positions = results.map { r -> Int in
            guard case .number(let p) = r["position"] else { return -1 }
            return Int(p)
        }
        let duplicates = results.map { $0["duplicate"] == .bool(true) }
        #expect(Array(positions[0..<count - 2]) == Array(1...count - 2))
        #expect(positions[count - 2] == 2 && duplicates[count - 2])
        #expect(positions[count - 1] == count - 1 && !duplicates[count - 1])
        #expect(duplicates.filter { $0 }.count == 1)
        let status = try f.json(["status"])
        #expect(status["events"] == .number(Double(count - 1)))
    }

    /// A line refused by the rules in the first chunk (while the next chunk is being parsed)
    /// stops the batch with its line, and nothing is appended.
    @Test func aRuleRefusedInTheFirstChunkStopsTheBatchWhileTheNextIsParsed() throws {
        let f = CLIFixture()
        f.run(["init", "--device", "phone"])
        let count = AppendCommand.chunkBytes / 2_000 * 2 + 500
        var lines = Self.lines(count).split(separator: "\n").map(String.init)
        // Line 10 records progress for a goal that does not exist.
        lines[9] = lines[9].replacingOccurrences(of: Self.goal, with: "F0000000-0000-4000-8000-000000000001")
        let file = f.root + "/big.jsonl"
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let before = f.replayText()
        let refused = f.run(["append", "--file", file])
        #expect(refused.exitCode == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains("line 10: field \"goal\": unknown goal"), "\(refused.stderr)")
        #expect(f.replayText() == before)
    }

    /// When the store's file has to grow mid-write, the write runs again from its start, and so
    /// does the input: every line is appended once, in order, on a store whose map starts tiny.
    @Test func aWriteRunAgainOnAGrownMapReadsTheInputAgain() throws {
        let dir = CLIFixture()
        var options = StoreOptions()
        options.initialMapSize = 128 << 10
        let store = try LedgerStore.create(at: dir.root + "/s", device: "phone", options: options)
        let count = 3_000
        let text = Self.lines(count).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "\n")
        for source in ["memory", "file"] {
            var input: AppendCommand.ChunkedInput
            if source == "file" {
                let file = dir.root + "/lines.jsonl"
                let other = text.replacingOccurrences(of: Self.goal, with: "5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9E13")
                try Data(other.replacingOccurrences(of: "\"E0000000-", with: "\"F0000000-").utf8)
                    .write(to: URL(fileURLWithPath: file))
                input = try AppendCommand.ChunkedInput(file: try #require(FileHandle(forReadingAtPath: file)), named: file, size: 16 << 10)
            } else {
                input = AppendCommand.ChunkedInput(Data(text.utf8), size: 16 << 10)
            }
            let before: UInt64 = source == "file" ? UInt64(count) : 0
            let mapBefore = store.env.mapSize
            let now = try #require(Instant(rfc3339: "2026-11-05T12:00:00Z"))
            let results = try AppendCommand.append(&input, to: store, expectedVersion: nil, now: now)
            #expect(store.env.mapSize > mapBefore, "\(source): the map did not grow")
            let positions: [UInt64] = results.map(\.position)
            let wanted: [UInt64] = Array((before + 1)...(before + UInt64(count)))
            #expect(positions == wanted, "\(source)")
            #expect(!results.contains { $0.duplicate })
        }
        #expect(try store.read { try $0.verify() }.isClean)
    }
}
