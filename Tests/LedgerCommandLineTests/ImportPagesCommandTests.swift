import Foundation
import GoalLedger
import LedgerCommandLine
import Testing

/// `ledger import` reads and imports a page of events at a time (`LEDGER_IMPORT_PAGE_EVENTS`):
/// whatever the page size, it prints what an import in one page prints and leaves the same
/// goals behind.
struct ImportPagesCommandTests {
    static func progress(_ count: Int, from first: Int) -> String {
        (first..<(first + count)).map { i in
            #"{"type":"progressRecorded","goal":"5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9E11","amount":\#(i % 5 + 1),"at":"2026-11-0\#(i % 4 + 1)T0\#(i % 9):00:00Z"}"#
        }.joined(separator: "\n")
    }

    func run(_ store: String, _ args: [String], environment: [String: String] = [:], input: String = "") -> CommandLineTool.Result {
        CommandLineTool.run(
            ["--store", store, "--now", "2026-11-05T12:00:00Z"] + args, environment: ["TZ": "UTC", "LANG": "C"].merging(environment) { $1 },
            input: { Data(input.utf8) })
    }

    @Test func anImportInPagesPrintsAndHoldsWhatOnePageDoes() throws {
        let f = CLIFixture()
        let phone = f.root + "/phone"
        #expect(run(phone, ["init", "--device", "phone"]).exitCode == 0)
        let create = #"{"type":"goalCreated","goal":"5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9E11","title":"Run","cadence":"daily","progress":{"kind":"measurable","target":5,"unit":"km"}}"#
        #expect(run(phone, ["append"], input: create).exitCode == 0)
        let laptop = f.root + "/laptop"
        #expect(run(laptop, ["clone", phone, "--device", "laptop"]).exitCode == 0)
        for batch in 0..<4 { #expect(run(phone, ["append"], input: Self.progress(6, from: batch * 6)).exitCode == 0) }
        let export = f.root + "/phone.export"
        #expect(run(phone, ["export", "--out", export]).exitCode == 0)
        try FileManager.default.copyItem(atPath: laptop, toPath: f.root + "/desk")
        try FileManager.default.copyItem(atPath: laptop, toPath: f.root + "/shelf")
        let paged = run(laptop, ["import", export], environment: ["LEDGER_IMPORT_PAGE_EVENTS": "2"])
        let whole = run(f.root + "/desk", ["import", export])
        // A value that is not a positive number is the default, as for the hub's pages.
        let unset = run(f.root + "/shelf", ["import", export], environment: ["LEDGER_IMPORT_PAGE_EVENTS": "0"])
        #expect(paged.exitCode == 0, "\(paged.stderr)")
        #expect(paged.stdout == whole.stdout && paged.stderr == whole.stderr && unset.stdout == whole.stdout, "\(paged.stdout) / \(whole.stdout)")
        #expect(paged.stdout.contains("imported 24 events"), "\(paged.stdout)")
        let goals = [laptop, f.root + "/desk", phone].map { run($0, ["goals", "--json"]).stdout }
        #expect(goals[0] == goals[1] && goals[1] == goals[2])
        #expect(run(laptop, ["verify"]).exitCode == 0)
    }
}
