import Foundation
import GoalLedger
import LedgerHub
import LedgerSync
import LedgerScenarios

enum ScenarioCommand {
    static let hub = Option.text(
        "--hub", "URL", "sync every pair of devices through this hub (postgresql://, its schema created first) or sync service (https://)")

    static let spec = CommandSpec(
        name: "scenario", arguments: "run FILE…",
        summary: "run conflict scenarios (devices, appends, syncs, reconciles, expectations); exit 1 if any expectation fails",
        options: [
            hub.spec
        ],
        positionals: 2...Int.max, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        guard inv.positionals[0] == "run" else { throw LedgerError(.invalidArgument, "usage: ledger scenario run FILE…") }
        var hub: (any ScenarioHub)?
        if let url = try inv.value(Self.hub) {
            if SyncServiceClient.isServiceURL(url) {
                guard let base = URL(string: url) else { throw LedgerError(.invalidArgument, "--hub: not a URL") }
                hub = ServiceHub(client: SyncServiceClient(baseURL: base))
            } else {
                guard Hub.isURL(url) else {
                    throw LedgerError(.invalidArgument, "--hub must be a postgresql://, postgres://, https:// or http:// URL")
                }
                let direct = try Hub(url: url)
                try direct.initialize()
                hub = direct
            }
        }
        var reports: [ScenarioReport] = []
        for file in inv.positionals.dropFirst() {
            guard let data = FileManager.default.contents(atPath: file) else { throw LedgerError(.invalidInput, "cannot read \(file)") }
            let json: JSONValue
            do {
                json = try JSONParser.parse(Array(data))
            } catch {
                throw LedgerError(.invalidInput, "\(file): malformed JSON: \(error)")
            }
            let scenario = try Scenario(json: json, name: URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-scenario-\(UUID().uuidString)").path
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw LedgerError(.store, "cannot create \(directory): \(error.localizedDescription)")
            }
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let report = try ScenarioRunner.run(scenario, in: directory, hub: hub)
            reports.append(report)
            if !inv.json {
                inv.print("\(report.passed ? "ok  " : "FAIL") \(report.name) (\(report.steps) steps, \(report.checks) checks)")
                for f in report.failures { inv.print("     \(f)") }
            }
        }
        let failed = reports.filter { !$0.passed }
        if inv.json {
            try inv.printJSON(
                .array(
                    reports.map { r in
                        .object([
                            ("name", .string(r.name)), ("passed", .bool(r.passed)), ("steps", .number(Double(r.steps))),
                            ("checks", .number(Double(r.checks))), ("failures", .array(r.failures.map { .string($0) })),
                        ])
                    }))
        } else {
            inv.print("\(reports.count - failed.count) passed, \(failed.count) failed")
        }
        if !failed.isEmpty {
            throw LedgerError(
                .internal, "\(failed.count) scenario\(failed.count == 1 ? "" : "s") failed: \(failed.map(\.name).joined(separator: ", "))")
        }
    }
}

/// A hub can stand in for every sync of a scenario.
extension Hub: ScenarioHub {}

/// So can the sync service: every sync of a scenario goes through it, signed by each device.
struct ServiceHub: ScenarioHub {
    let client: SyncServiceClient
    func sync(_ store: LedgerStore) throws(LedgerError) -> SyncResult { try client.syncBlocking(store) }
}
