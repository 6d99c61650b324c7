import Foundation
import GoalLedger
import LedgerCommandLine

/// A temporary store directory and a way to run `ledger` on it in-process, with a fixed clock,
/// time zone and locale.
final class CLIFixture {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-cli-\(UUID().uuidString)").path
    var store: String { root + "/store" }
    var now = "2026-11-05T12:00:00Z"

    init() { try! FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(atPath: root) }

    @discardableResult
    func run(_ args: [String], input: String = "") -> CommandLineTool.Result {
        CommandLineTool.run(["--store", store, "--now", now] + args, environment: ["TZ": "UTC", "LANG": "C"], input: { Data(input.utf8) })
    }

    func json(_ args: [String], input: String = "") throws -> JSONValue {
        let r = run(args + ["--json"], input: input)
        guard r.exitCode == 0 else { throw LedgerError(.internal, "ledger \(args) exited \(r.exitCode): \(r.stderr)") }
        return try JSONParser.parse(r.stdout)
    }

    /// Runs `ledger` in-process on another store.
    static func runAt(_ store: String, _ args: [String], input: String = "") -> CommandLineTool.Result {
        CommandLineTool.run(
            ["--store", store, "--now", "2026-11-05T12:00:00Z"] + args, environment: ["TZ": "UTC", "LANG": "C"], input: { Data(input.utf8) }
        )
    }

    /// The whole store as bytes of its log: to compare before and after a refused command.
    func replayText() -> String { run(["replay", "--json"]).stdout + run(["log", "--json"]).stdout + run(["status", "--json"]).stdout }
}

/// The built `ledger` executable, next to the test bundle.
func ledgerExecutable() -> URL {
    if let path = ProcessInfo.processInfo.environment["LEDGER_BIN"] { return URL(fileURLWithPath: path) }
    let candidates = [
        Bundle.main.bundleURL.appendingPathComponent("ledger"),
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ledger"),
        Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("ledger"),
    ]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
}

let goalIDs = (1...10).map { String(format: "A0000000-0000-4000-8000-%012d", $0) }

/// Goals of every cadence and both progress kinds, with progress, each line with an id.
let everyKindOfGoal: [String] = {
    var lines = [
        #"{"id":"E0000000-0000-4000-8000-000000000001","type":"deviceConfigured","timeZone":"America/New_York","firstWeekday":1,"locale":"en_US","at":"2026-11-01T12:00:00Z"}"#
    ]
    let cadences = ["once", "daily", "weekly", "monthly", "yearly"]
    var n = 1
    for (i, cadence) in cadences.enumerated() {
        for measurable in [false, true] {
            let goal = goalIDs[n - 1]
            let progress = measurable ? #"{"kind":"measurable","target":4,"unit":"km"}"# : #"{"kind":"outcome"}"#
            let target = cadence == "once" ? #","targetDate":"2027-05-31""# : ""
            lines.append(
                #"{"id":"E1000000-0000-4000-8000-0000000000\#(n % 10)\#(i)","type":"goalCreated","goal":"\#(goal)","title":"\#(cadence) \#(measurable ? "measurable" : "outcome")","details":"why","cadence":"\#(cadence)"\#(target),"progress":\#(progress),"reminder":{"hour":8},"tags":["t\#(i)","common"],"at":"2026-11-0\#(1 + i)T13:00:00Z"}"#
            )
            let entry = measurable ? #""amount":4"# : #""completed":true"#
            lines.append(
                #"{"id":"E2000000-0000-4000-8000-0000000000\#(n % 10)\#(i)","type":"progressRecorded","goal":"\#(goal)",\#(entry),"at":"2026-11-05T10:00:00Z"}"#
            )
            n += 1
        }
    }
    return lines
}()
