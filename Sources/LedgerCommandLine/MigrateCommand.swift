import Foundation
import GoalLedger

enum MigrateCommand {
    static let spec = CommandSpec(
        name: "migrate", summary: "upgrade the store to the current event schema, then rebuild its projections",
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let before = try store.reading { $0.schema }
        let report = try store.migrate(now: try inv.now())
        if inv.json {
            try inv.printJSON(
                .object([
                    ("from", .number(Double(before))), ("schema", .number(Double(report.schema))),
                    ("applied", .array(report.applied.map { .string($0) })), ("rebuilt", .bool(report.rebuilt)),
                ]))
        } else if report.applied.isEmpty && !report.rebuilt {
            inv.print("already on schema \(report.schema); nothing to do")
        } else {
            inv.print(
                "migrated from schema \(before) to \(report.schema)"
                    + (report.applied.isEmpty ? "" : " (\(report.applied.joined(separator: ", ")))") + "; projections rebuilt")
        }
    }
}
