import Foundation
import GoalLedger
import LedgerHub

enum ConflictsCommand {
    static let goal = Option.uuid("--goal", "GOAL", "only this goal's")

    static let spec = CommandSpec(
        name: "conflicts", summary: "concurrent changes and how they resolved",
        options: [goal.spec],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let goal = try inv.value(Self.goal)
        let store = try inv.openStore()
        let conflicts = try store.reading { try $0.conflicts(goal: goal) }
        if inv.json {
            try inv.printJSON(.array(conflicts.map(\.json)))
            return
        }
        if conflicts.isEmpty { inv.print("no conflicts") }
        for c in conflicts { inv.printText(ConflictText.describe(c)) }
    }
}
