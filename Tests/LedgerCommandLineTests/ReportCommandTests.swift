import Foundation
import GoalLedger
import Testing

@testable import LedgerCommandLine

/// `ledger report`'s command line: what it refuses, and that a refused or failed report leaves
/// no file behind.
struct ReportCommandTests {
    static let goal = "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1"

    static func demo() -> CLIFixture {
        let f = CLIFixture()
        f.now = "2026-11-05T19:30:00Z"
        f.run(["init", "--device", "phone"])
        f.run(["append", "--file", ReportBrowserTests.repository.appendingPathComponent("Tools/demo-events.jsonl").path])
        return f
    }

    static func files(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    @Test func anUnknownGoalOrDeviceExitsThreeNamingItAndWritesNothing() throws {
        let f = Self.demo()
        let out = f.root + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let unknown = "FFFFFFFF-0000-4000-8000-000000000000"
        let r = f.run(["report", "--goal", Self.goal, "--goal", unknown, "--out", out + "/r.html"])
        #expect(r.exitCode == 3)
        #expect(r.stderr.contains("unknown goal \(unknown)"), "\(r.stderr)")
        let d = f.run(["report", "--device", "watch", "--out", out + "/r.html"])
        #expect(d.exitCode == 3)
        #expect(d.stderr.contains("unknown device watch"), "\(d.stderr)")
        #expect(Self.files(out) == [])
        #expect(f.run(["report", "--goal", "not-a-uuid", "--out", out + "/r.html"]).exitCode == 2)
        #expect(f.run(["report"]).stderr.contains("--out"))
    }

    @Test func anUnwritableOutExitsWithAMessageAndLeavesNoPartialFile() throws {
        let f = Self.demo()
        let missing = f.root + "/no/such/dir/r.html"
        let r = f.run(["report", "--out", missing])
        #expect(r.exitCode == 3)
        #expect(r.stderr.contains("cannot write the report to \(missing)"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.root + "/no"))

        // The rename fails (the target is a non-empty directory): the temporary file is removed.
        let out = f.root + "/out"
        try FileManager.default.createDirectory(atPath: out + "/r.html", withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: out + "/r.html/keep"))
        let blocked = f.run(["report", "--out", out + "/r.html"])
        #expect(blocked.exitCode == 3)
        #expect(blocked.stderr.contains("cannot write the report to \(out)/r.html"), "\(blocked.stderr)")
        #expect(Self.files(out) == ["r.html"])
        #expect(Self.files(out + "/r.html") == ["keep"])
    }

    @Test func aReportReplacesThePreviousOneWholeAndHonoursNow() throws {
        let f = Self.demo()
        let page = f.root + "/r.html"
        try Data("old".utf8).write(to: URL(fileURLWithPath: page))
        #expect(f.run(["report", "--out", page]).exitCode == 0)
        let first = try String(contentsOfFile: page, encoding: .utf8)
        #expect(first.hasPrefix("<!DOCTYPE html>") && first.hasSuffix("</html>\n"))
        #expect(first.contains("at 2026-11-05 20:30"), "the subtitle shows --now in the device's zone")
        #expect(Self.files(f.root).filter { $0.hasSuffix(".tmp") } == [])
        // The same store and --now write the same bytes; another --now, another page.
        #expect(f.run(["report", "--out", page]).exitCode == 0)
        #expect(try String(contentsOfFile: page, encoding: .utf8) == first)
        f.now = "2026-11-12T19:30:00Z"
        #expect(f.run(["report", "--out", page]).exitCode == 0)
        #expect(try String(contentsOfFile: page, encoding: .utf8) != first)
    }

    /// With more goals than are drawn in full, the page says how to choose them, in the device's
    /// language (the command line's option, which the library's wording leaves to it).
    @Test func theNoteOnGoalsNotDrawnInFullNamesTheGoalOption() throws {
        let f = CLIFixture()
        f.run(["init", "--device", "phone"])
        let goals = (1...25).map { i in
            #"{"type":"goalCreated","goal":"00000000-0000-4000-8000-\#(String(format: "%012d", i))","title":"Goal \#(i)"}"#
        }
        #expect(f.run(["append"], input: goals.joined(separator: "\n")).exitCode == 0)
        let page = f.root + "/r.html"
        #expect(f.run(["report", "--out", page]).exitCode == 0)
        #expect(
            try String(contentsOfFile: page, encoding: .utf8).contains(
                "24 of 25 goals are drawn in full; the others are in the overview (choose them with --goal)."))
        #expect(f.run(["append"], input: #"{"type":"deviceConfigured","timeZone":"Asia/Tokyo","locale":"ja_JP"}"#).exitCode == 0)
        #expect(f.run(["report", "--out", page]).exitCode == 0)
        #expect(
            try String(contentsOfFile: page, encoding: .utf8).contains(
                "25件中24件の目標を詳しく表示しています。他は概要にあります(--goal で選べます)。"))
    }
}
