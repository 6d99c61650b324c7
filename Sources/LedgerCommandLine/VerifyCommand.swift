import Foundation
import GoalLedger

enum VerifyCommand {
    static let spec = CommandSpec(
        name: "verify", summary: "check checksums, indexes, origin sequences and projections against a fresh replay",
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let report = try store.reading { try $0.verify() }
        let problems = report.findings
        if inv.json {
            try inv.printJSON(
                .object([
                    ("ok", .bool(report.isClean)), ("events", .number(Double(report.events))), ("goals", .number(Double(report.goals))),
                    ("problems", .array(problems.map { .string($0.message) })),
                    ("setAside", .array(report.setAside.map(json))),
                ]))
        } else if report.isClean {
            inv.print("ok: \(report.events) events, \(report.goals) goals; indexes, sequences and projections agree with the log")
            for e in report.setAside { inv.print("note: \(e.description); no projection reads it") }
        } else {
            for p in problems { inv.print(p.message) }
            for e in report.setAside { inv.print("note: \(e.description)") }
        }
        if !report.isClean {
            throw LedgerError(.store, "verify found \(problems.count) problem\(problems.count == 1 ? "" : "s") in \(store.path)")
        }
    }

    /// A set-aside event in the JSON forms of `verify` and `status`.
    static func json(_ e: SetAsideEvent) -> JSONValue {
        .object([
            ("position", .number(Double(e.position))), ("id", .string(e.id.uuidString)), ("origin", .string(e.origin)),
            ("sequence", .number(Double(e.sequence))), ("reason", .string(e.reason)),
        ])
    }
}
