import Foundation
import GoalLedger
import LedgerReport

enum ReportCommand {
    static let goal = Option.uuid("--goal", "GOAL", "a goal to report on (repeat for several; default: every goal)", repeats: true)
    static let device = Option.text("--device", "NAME", "whose calendar and language (default: this store's device)")
    static let out = Option.text("--out", "FILE.html", "the file to write (required; replaced whole)")

    /// The page's hint on choosing the goals drawn in full, by language: this command's option.
    static let choosingGoals = ["en": " (choose them with \(goal.name))", "ja": "(\(goal.name) で選べます)"]

    static let spec = CommandSpec(
        name: "report",
        summary: "write a self-contained HTML report: goals, calendar heat maps, period charts, per-device audit timelines, reminders",
        options: [
            goal.spec,
            device.spec,
            out.spec,
        ],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let out = try inv.required(Self.out, by: "report")
        let now = try inv.now()
        let listed = try inv.values(Self.goal)
        let goals = listed.isEmpty ? nil : listed
        let device = try inv.value(Self.device)
        if let device, !DeviceName.isValid(device) { throw LedgerError(.invalidArgument, "invalid device name \"\(device)\"") }
        let store = try inv.openStore()
        let report = try store.reading { try LedgerReport.make(snapshot: $0, device: device, goals: goals, now: now) }
        try report.write(to: out, choosingGoals: Self.choosingGoals[report.labels.language] ?? "")
        if inv.json {
            try inv.printJSON(
                .object([
                    ("out", .string(out)), ("device", .string(report.device.name)),
                    ("goals", .number(Double(report.overview.count + report.overviewOmitted))),
                    ("drawn", .number(Double(report.details.count))),
                ]))
        } else {
            inv.print(out)
        }
    }
}
