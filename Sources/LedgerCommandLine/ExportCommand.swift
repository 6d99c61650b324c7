import Foundation
import GoalLedger
import LedgerHub

enum ExportCommand {
    static let spec = CommandSpec(
        name: "export", summary: "write every event to a file another store can import",
        options: [OptionSpec(name: "--out", value: "FILE", help: "the file to write (required)")],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        guard let file = inv.options["--out"] else { throw LedgerError(.invalidArgument, "export needs --out FILE") }
        let store = try inv.openStore()
        let count = try store.export(to: file)
        if inv.json {
            try inv.printJSON(.object([("events", .number(Double(count))), ("file", .string(file))]))
        } else {
            inv.print("exported \(count) events to \(file)")
        }
    }
}
