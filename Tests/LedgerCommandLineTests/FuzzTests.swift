import Foundation
import GoalLedger
import Testing

@testable import LedgerCommandLine

/// Seeded mutations of valid inputs: never a crash or a hang, always a documented exit code and
/// a message, and a refused input changes nothing.
struct FuzzTests {
    struct Mutator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }

        /// One of: truncation, bit flips, a value of another type, a huge number, deep nesting,
        /// invalid UTF-8, a huge string, random bytes, a duplicated key, an empty object.
        mutating func mutate(_ input: [UInt8]) -> [UInt8] {
            var b = input
            switch below(11) {
            case 0: b = Array(b.prefix(below(b.count)))
            case 1: for _ in 0...below(4) where !b.isEmpty { b[below(b.count)] ^= UInt8(1 << below(8)) }
            case 2: b = replaceValue(b, with: ["\"text\"", "true", "null", "[]", "{}", "-1", "3.5", "\"\""][below(8)])
            case 3: b = replaceValue(b, with: ["1e308", "-1e308", "99999999999999999999999", "1e400", "-0", "0.0000001"][below(6)])
            case 4:
                let depth = 60 + below(2000)
                b = Array(repeating: UInt8(ascii: "["), count: depth) + b + Array(repeating: UInt8(ascii: "]"), count: depth)
            case 5:
                b.insert(
                    contentsOf: [[0xC3, 0x28], [0xFF], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80]][below(4)], at: below(b.count + 1)
                )
            case 6: b = replaceValue(b, with: "\"" + String(repeating: "é", count: 50_000 + below(50_000)) + "\"")
            case 7: for _ in 0...below(8) { b.insert(UInt8(truncatingIfNeeded: next()), at: below(b.count + 1)) }
            case 8:
                if let colon = b.firstIndex(of: UInt8(ascii: ",")) {
                    b.insert(contentsOf: Array(#""type":"goalDeleted","#.utf8), at: colon + 1)
                }
            case 9: b = Array("{}".utf8)
            default:
                let start = below(b.count)
                b.removeSubrange(start..<min(b.count, start + below(20)))
            }
            return b
        }

        /// Replaces the value after one of the `:` of a JSON text.
        mutating func replaceValue(_ b: [UInt8], with value: String) -> [UInt8] {
            let colons = b.indices.filter { b[$0] == UInt8(ascii: ":") }
            guard !colons.isEmpty else { return b }
            let start = colons[below(colons.count)] + 1
            var end = start
            var depth = 0
            var inString = false
            while end < b.count {
                let c = b[end]
                if inString {
                    if c == UInt8(ascii: "\\") {
                        end += 1
                    } else if c == UInt8(ascii: "\"") {
                        inString = false
                        if depth == 0 {
                            end += 1
                            break
                        }
                    }
                } else if c == UInt8(ascii: "\"") {
                    inString = true
                } else if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                    depth += 1
                } else if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                    if depth == 0 { break }
                    depth -= 1
                    if depth == 0 {
                        end += 1
                        break
                    }
                } else if depth == 0 && c == UInt8(ascii: ",") {
                    break
                }
                end += 1
            }
            return Array(b[..<start]) + Array(value.utf8) + Array(b[min(end, b.count)...])
        }
    }

    func run(_ store: String, _ args: [String], input: [UInt8] = []) -> CommandLineTool.Result {
        CommandLineTool.run(["--store", store, "--now", "2026-11-05T12:00:00Z"] + args, environment: [:], input: { Data(input) })
    }

    /// The parts of a store a refused command must not change.
    func fingerprint(_ path: String) throws -> String {
        let s = try LedgerStore.open(at: path)
        return "\(try s.lastPosition()) \(try s.clock()) \(try s.originHeads().sorted { $0.key < $1.key }) \(try s.projectionStatus())"
    }

    @Test(arguments: 0..<4)
    func mutatedEventLines(_ shard: Int) throws {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        #expect(f.run(["append"], input: everyKindOfGoal.joined(separator: "\n")).exitCode == 0)
        let seeds =
            everyKindOfGoal
            + [
                #"{"type":"goalEdited","goal":"\#(goalIDs[3])","title":"T","details":null,"targetDate":"2027-01-31"}"#,
                #"{"type":"reminderSet","goal":"\#(goalIDs[2])","hour":7,"minute":15}"#,
                #"{"type":"tagRemoved","goal":"\#(goalIDs[2])","tag":"common"}"#,
                #"{"type":"deviceConfigured","timeZone":"Asia/Tokyo","firstWeekday":2,"locale":"ja_JP","strategy":"window","windowDays":5,"capacity":10}"#,
            ].map { $0.replacingOccurrences(of: #""id":"E[0-9A-F-]+","#, with: "", options: .regularExpression) }
        var m = Mutator(state: UInt64(shard) &* 7919 &+ 17)
        var refused = 0
        for case_ in 0..<600 {
            let line = m.mutate(Array(seeds[m.below(seeds.count)].utf8))
            let before = try fingerprint(f.store)
            let r = run(f.store, ["append"], input: line)
            #expect(
                [0, 3].contains(r.exitCode), "case \(case_): exit \(r.exitCode) for \(String(decoding: line.prefix(200), as: UTF8.self))")
            if r.exitCode != 0 {
                refused += 1
                #expect(r.stdout.isEmpty)
                #expect(r.stderr.hasPrefix("ledger: line 1"), "case \(case_): \(r.stderr.prefix(200))")
                #expect(try fingerprint(f.store) == before, "case \(case_) changed the store")
            }
        }
        #expect(refused > 400)
        #expect(try LedgerStore.open(at: f.store).verify().isClean)
    }

    @Test func mutatedExportFiles() throws {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        let tablet = f.root + "/tablet"
        #expect(CLIFixture.runAt(tablet, ["clone", f.store, "--device", "tablet"]).exitCode == 0)
        #expect(CLIFixture.runAt(tablet, ["append"], input: everyKindOfGoal.joined(separator: "\n")).exitCode == 0)
        let export = f.root + "/t.export"
        #expect(CLIFixture.runAt(tablet, ["export", "--out", export]).exitCode == 0)
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: export)))
        var m = Mutator(state: 99)
        let before = try fingerprint(f.store)
        for case_ in 0..<800 {
            var bytes = original
            switch m.below(4) {
            case 0: bytes = Array(bytes.prefix(m.below(bytes.count)))
            case 1: bytes[m.below(bytes.count)] ^= UInt8(1 << m.below(8))
            case 2: bytes.insert(UInt8(truncatingIfNeeded: m.next()), at: m.below(bytes.count))
            default:
                let start = m.below(bytes.count)
                bytes.removeSubrange(start..<max(start, bytes.count - m.below(40)))
            }
            if bytes == original { continue }  // not a mutation
            let file = f.root + "/mutated.export"
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let r = run(f.store, ["import", file])
            #expect(r.exitCode == 3, "case \(case_): exit \(r.exitCode): \(r.stderr.prefix(200))")
            #expect(r.stderr.contains("mutated.export"), "case \(case_): \(r.stderr.prefix(200))")
        }
        #expect(try fingerprint(f.store) == before)
        #expect(run(f.store, ["import", export]).exitCode == 0)
    }

    @Test func mutatedScenarioFiles() throws {
        let f = CLIFixture()
        let sources = [
            "03-different-fields-edited.json", "09-sequential-edits-are-not-conflicts.json", "11-reminder-reaches-the-other-device.json",
        ]
        .map { Array(try! Data(contentsOf: ScenarioTests.folder.appendingPathComponent($0))) }
        var m = Mutator(state: 4242)
        var outcomes: [Int32: Int] = [:]
        for case_ in 0..<150 {
            let bytes = m.mutate(sources[m.below(sources.count)])
            let file = f.root + "/fuzzed.json"
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let r = CommandLineTool.run(["scenario", "run", file], environment: [:], input: { Data() })
            outcomes[r.exitCode, default: 0] += 1
            // 0: still valid and passing; 1: a changed expectation now fails; 3: invalid file.
            #expect([0, 1, 3].contains(r.exitCode), "case \(case_): exit \(r.exitCode): \(r.stderr.prefix(300))")
            if r.exitCode == 3 { #expect(r.stderr.contains("fuzzed"), "case \(case_): \(r.stderr.prefix(200))") }
        }
        #expect((outcomes[3] ?? 0) > 50, "\(outcomes)")
    }
}
