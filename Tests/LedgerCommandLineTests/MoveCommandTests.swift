import Foundation
import GoalLedger
import LedgerCommandLine
import Testing

/// `ledger move`, `goals --ordered` and `goalMoved` lines, through the real executable.
struct MoveCommandTests {
    let ids = (1...3).map { String(format: "B0000000-0000-4000-8000-%012d", $0) }

    /// Runs the built `ledger` on `store` with a fixed clock, time zone and locale.
    func ledger(_ store: String, _ args: [String], input: String = "") throws -> (status: Int32, stdout: String, stderr: String) {
        let p = Process()
        p.executableURL = ledgerExecutable()
        p.arguments = ["--store", store, "--now", "2026-11-05T12:00:00Z"] + args
        p.environment = ["TZ": "UTC", "LANG": "C", "LC_ALL": "C"]
        let (stdin, stdout, stderr) = (Pipe(), Pipe(), Pipe())
        p.standardInput = stdin
        p.standardOutput = stdout
        p.standardError = stderr
        try p.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    func titles(_ store: String, _ args: [String]) throws -> [String] {
        let r = try ledger(store, ["--json", "goals"] + args)
        guard case .array(let goals) = try JSONParser.parse(r.stdout) else { return [] }
        return goals.compactMap { g in
            guard case .object(let m) = g, case .string(let t)? = m.first(where: { $0.0 == "title" })?.1 else { return nil }
            return t
        }
    }

    @Test func moveReordersGoalsOrderedAndLeavesTheDefaultListAlone() throws {
        try #require(FileManager.default.isExecutableFile(atPath: ledgerExecutable().path), "build the ledger executable first")
        let f = CLIFixture()
        #expect(try ledger(f.store, ["init", "--device", "phone"]).status == 0)
        // Ids in the reverse of creation order.
        let lines = zip(["C", "B", "A"], ids.reversed()).enumerated().map { i, g in
            #"{"type":"goalCreated","goal":"\#(g.1)","title":"\#(g.0)","at":"2026-11-0\#(i + 1)T12:00:00Z"}"#
        }
        #expect(try ledger(f.store, ["append"], input: lines.joined(separator: "\n")).status == 0)
        let byID = try ledger(f.store, ["goals"]).stdout
        #expect(try titles(f.store, ["--ordered"]) == ["C", "B", "A"])
        #expect(try titles(f.store, []) == ["A", "B", "C"])

        var r = try ledger(f.store, ["move", ids[0], "--first"])
        #expect(r.status == 0 && r.stdout.hasPrefix("moved \(ids[0])"), "\(r.stderr)")
        #expect(try titles(f.store, ["--ordered"]) == ["A", "C", "B"])
        r = try ledger(f.store, ["move", ids[2], "--after", ids[1]])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try titles(f.store, ["--ordered"]) == ["A", "B", "C"])
        #expect(try ledger(f.store, ["move", ids[0], "--last"]).status == 0)
        #expect(try ledger(f.store, ["move", ids[1], "--before", ids[2]]).status == 0)
        #expect(try titles(f.store, ["--ordered"]) == ["B", "C", "A"])
        // The default list keeps its order and its bytes, but for the moved goals' new member.
        #expect(try titles(f.store, []) == ["A", "B", "C"])
        #expect(try ledger(f.store, ["goals"]).stdout == byID)

        // A goalMoved line, as append reads it; the log shows the key the store filled in.
        r = try ledger(f.store, ["append"], input: #"{"type":"goalMoved","goal":"\#(ids[2])","before":null}"#)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try titles(f.store, ["--ordered"]) == ["B", "A", "C"])
        let log =
            try ledger(f.store, ["log", "--goal", ids[2]]).stdout + (try ledger(f.store, ["--json", "log", "--goal", ids[2]]).stdout)
        #expect(log.contains(#""key":"ff"#), "\(log)")

        // Usage and refusals: exit 2 or 3, nothing written.
        let before = try ledger(f.store, ["--json", "status"]).stdout
        #expect(try ledger(f.store, ["move", ids[0], "--first", "--last"]).status == 2)
        #expect(try ledger(f.store, ["move", ids[0]]).status == 2)
        r = try ledger(f.store, ["move", ids[0], "--after", ids[0]])
        #expect(r.status == 3 && r.stderr.contains("after"), "\(r.stderr)")
        r = try ledger(f.store, ["move", ids[0], "--before", "B0000000-0000-4000-8000-000000000099"])
        #expect(r.status == 3 && r.stderr.contains("unknown goal"), "\(r.stderr)")
        #expect(try ledger(f.store, ["--json", "status"]).stdout == before)
        #expect(try ledger(f.store, ["verify"]).status == 0)
        #expect(try ledger(f.store, ["move", "--help"]).stdout.contains("--before GOAL"))
    }
}
