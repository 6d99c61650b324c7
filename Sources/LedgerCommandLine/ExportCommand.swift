import Foundation
import GoalLedger
import LedgerHub

enum ExportCommand {
    static let out = Option.text("--out", "FILE", "the file to write (required)")

    static let spec = CommandSpec(
        name: "export", summary: "write every event to a file another store can import",
        options: [out.spec],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let file = try inv.required(Self.out, by: "export")
        let store = try inv.openStore()
        let count = try store.reading { try $0.export(to: file) }
        if inv.json {
            try inv.printJSON(.object([("events", .number(Double(count))), ("file", .string(file))]))
        } else {
            inv.print("exported \(count) events to \(file)")
        }
    }
}
