import Foundation
import GoalLedger

enum VerifyCommand {
    static let spec = CommandSpec(
        name: "verify", summary: "check checksums, indexes, origin sequences and projections against a fresh replay",
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let report = try store.verify()
        if inv.json {
            try inv.printJSON(
                .object([
                    ("ok", .bool(report.isClean)), ("events", .number(Double(report.events))), ("goals", .number(Double(report.goals))),
                    ("problems", .array(report.problems.map { .string($0) })),
                    ("setAside", .array(report.setAside.map(json))),
                ]))
        } else if report.isClean {
            inv.print("ok: \(report.events) events, \(report.goals) goals; indexes, sequences and projections agree with the log")
            for e in report.setAside { inv.print("note: \(e.description); no projection reads it") }
        } else {
            for p in report.problems { inv.print(p) }
            for e in report.setAside { inv.print("note: \(e.description)") }
        }
        if !report.isClean {
            throw LedgerError(
                .store, "verify found \(report.problems.count) problem\(report.problems.count == 1 ? "" : "s") in \(store.path)")
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
