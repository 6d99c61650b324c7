import Foundation
import GoalLedger

/// A goal and its view for the local device, as `goals` and `show` print them.
func goalWithView(_ g: GoalState, _ view: GoalView) -> JSONValue {
    guard case .object(var members) = g.json else { return g.json }
    members.append(("view", view.json))
    return .object(members)
}

enum GoalsCommand {
    static let all = Flag("--all", "include deleted goals")

    static let spec = CommandSpec(
        name: "goals", summary: "list current goals with period value, completion and streak for this device",
        options: [all.spec],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let now = try inv.now()
        let store = try inv.openStore()
        let projection = try store.projection()
        let calendar = projection.device(store.device).calendar
        let goals = projection.existingGoals.filter { inv.isSet(Self.all) || !$0.isDeleted }
        let views = goals.map { GoalView(goal: $0, calendar: calendar, now: now) }
        if inv.json {
            try inv.printJSON(.array(zip(goals, views).map { goalWithView($0, $1) }))
            return
        }
        if goals.isEmpty { inv.print("no goals") }
        for (g, v) in zip(goals, views) { inv.print(GoalText.line(g, view: v)) }
    }
}
