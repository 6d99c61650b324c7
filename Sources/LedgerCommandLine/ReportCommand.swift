import Foundation
import GoalLedger

enum ReportCommand {
    static let spec = CommandSpec(
        name: "report",
        summary: "write a self-contained HTML report: goals, calendar heat maps, period charts, per-device audit timelines, reminders",
        options: [
            OptionSpec(name: "--goal", value: "GOAL", help: "a goal to report on (repeat for several; default: every goal)", repeats: true),
            OptionSpec(name: "--device", value: "NAME", help: "whose calendar and language (default: this store's device)"),
            OptionSpec(name: "--out", value: "FILE.html", help: "the file to write (required; replaced whole)"),
        ],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        guard let out = inv.options["--out"] else { throw LedgerError(.invalidArgument, "report needs --out FILE.html") }
        let now = try inv.now()
        var goals: [UUID]?
        if let texts = inv.repeated["--goal"] {
            goals = []
            for text in texts {
                guard let id = UUID(uuidString: text) else { throw LedgerError(.invalidArgument, "--goal must be a UUID, got \"\(text)\"") }
                goals!.append(id)
            }
        }
        let device = inv.options["--device"]
        if let device, !DeviceName.isValid(device) { throw LedgerError(.invalidArgument, "invalid device name \"\(device)\"") }
        let store = try inv.openStore()
        let report = try LedgerReport.make(store: store, device: device, goals: goals, now: now)
        try report.write(to: out)
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
