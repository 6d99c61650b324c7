import Foundation
import GoalLedger
import LedgerHub

enum ConflictsCommand {
    static let spec = CommandSpec(
        name: "conflicts", summary: "concurrent changes and how they resolved",
        options: [OptionSpec(name: "--goal", value: "GOAL", help: "only this goal's")],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let goal = try inv.uuidOption("--goal")
        let store = try inv.openStore()
        let conflicts = try store.conflicts(goal: goal)
        if inv.json {
            try inv.printJSON(.array(conflicts.map(\.json)))
            return
        }
        if conflicts.isEmpty { inv.print("no conflicts") }
        for c in conflicts { inv.print(ConflictText.describe(c)) }
    }
}
