import Foundation
import GoalLedger
import HubTestSupport
import LedgerCommandLine
import PostgreSQL

/// A hub database of its own on the test run's server, stores in a temporary directory, and
/// ways to run `ledger` on them (in-process, or as a child process).
final class HubFixture: @unchecked Sendable {
    let cli = CLIFixture()
    let url: String
    let socketDirectory: String
    let database: String
    var root: String { cli.root }

    init(initialized: Bool = true, socketDirectory: String? = nil) throws {
        self.socketDirectory = try socketDirectory ?? TestServer.socketDirectory()
        url = try TestServer.database(on: self.socketDirectory)
        database = String(url.dropFirst("postgresql:///".count).prefix { $0 != "?" })
        if initialized {
            let r = CommandLineTool.run(["hub", "init", url], environment: [:], input: { Data() })
            guard r.exitCode == 0 else { throw LedgerError(.internal, "hub init failed: \(r.stderr)") }
        }
    }

    func path(_ device: String) -> String { root + "/" + device }

    /// The hub's URL for another role.
    func url(as role: String) -> String { TestServer.url(database, directory: socketDirectory, role: role) }

    /// `ledger --store ROOT/DEVICE …` in-process.
    @discardableResult
    func run(_ device: String, _ args: [String], input: String = "", environment: [String: String] = [:]) -> CommandLineTool.Result {
        CommandLineTool.run(
            ["--store", path(device), "--now", "2026-11-05T12:00:00Z"] + args,
            environment: ["TZ": "UTC", "LANG": "C"].merging(environment) { $1 },
            input: { Data(input.utf8) })
    }

    /// A new store for `device` with every kind of goal (21 events), synced with the hub.
    func seed(_ device: String = "phone") {
        run(device, ["init", "--device", device])
        run(device, ["append"], input: everyKindOfGoal.joined(separator: "\n"))
        run(device, ["sync", url])
    }

    func ledgerID(_ device: String) throws -> String {
        guard case .string(let id) = try JSONParser.parse(run(device, ["status", "--json"]).stdout)["ledger"] else {
            throw LedgerError(.internal, "no ledger id")
        }
        return id
    }

    /// `n` progress lines on one of `everyKindOfGoal`'s measurable goals.
    static func progress(_ n: Int, from start: Int = 0) -> String {
        (start..<start + n).map { i in
            #"{"type":"progressRecorded","goal":"\#(goalIDs[1])","amount":\#(i % 7 + 1),"at":"2026-11-05T10:00:00Z"}"#
        }
        .joined(separator: "\n")
    }

    /// A superuser connection to the hub database.
    func admin() throws -> Connection { try Connection(url) }

    func count(_ sql: String = "SELECT count(*) FROM hub.events", _ parameters: [Parameter] = []) throws -> Int {
        Int(try admin().query(sql, parameters).int64(0, 0))
    }

    /// Runs the built `ledger` executable as a child process.
    func child(_ device: String, _ args: [String], environment: [String: String] = [:]) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let p = Process()
        p.executableURL = ledgerExecutable()
        p.arguments = ["--store", path(device), "--now", "2026-11-05T12:00:00Z"] + args
        p.environment = ProcessInfo.processInfo.environment.merging(["TZ": "UTC", "LANG": "C"].merging(environment) { $1 }) { $1 }
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    /// Everything a store shows, to compare before and after a refused command.
    func state(_ device: String) -> String {
        run(device, ["replay", "--json"]).stdout + run(device, ["log", "--json"]).stdout + run(device, ["status", "--json"]).stdout
    }

    /// Every row of the hub's events, heads and access tables.
    func hubState() throws -> String {
        let c = try admin()
        var text = ""
        for q in [
            "SELECT ledger::text, origin, sequence::text, event_id::text, hlc::text, encode(record, 'hex') FROM hub.events ORDER BY 1, 2, sequence",
            "SELECT ledger::text, origin, head::text FROM hub.heads ORDER BY 1, 2",
            "SELECT ledger::text, role::text FROM hub.access ORDER BY 1, 2",
        ] {
            let r = try c.execute(q)
            for row in 0..<r.rowCount { text += (0..<r.columnCount).map { r.string(row, $0) }.joined(separator: "|") + "\n" }
        }
        return text
    }
}

/// Whether two long texts (a store's or the hub's whole state) are equal: compared outside the
/// expectation, so that a failure does not print them.
func same(_ a: String, _ b: String) -> Bool { a == b }
