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
    static let ordered = Flag("--ordered", "list goals in the person's order (see move) instead of by id")

    static let spec = CommandSpec(
        name: "goals", summary: "list current goals with period value, completion and streak for this device",
        options: [all.spec, ordered.spec],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let now = try inv.now()
        let store = try inv.openStore()
        // Goal by goal: only the goal being printed is in memory. The text form shows no
        // entries, so it reads none: the views come from the rows kept with the projection.
        var any = false
        if inv.json { inv.write("[") }
        func show(_ g: GoalState, _ view: GoalView) throws(LedgerError) {
            if inv.json {
                inv.write((any ? "," : "") + (try JSONWriter.string(goalWithView(g, view))))
            } else {
                inv.printText(GoalText.line(g, view: view))
            }
            any = true
        }
        let includingDeleted = inv.isSet(Self.all)
        if inv.isSet(Self.ordered) {
            // The order needs every goal's key before the first is printed.
            var rows: [(order: GoalOrderKey, goal: GoalState, view: GoalView)] = []
            try store.reading {
                try $0.forEachGoalView(now: now, includingDeleted: includingDeleted, entries: inv.json) { g, view in
                    if let order = g.orderKey { rows.append((order, g, view)) }
                }
            }
            for row in rows.sorted(by: { $0.order < $1.order }) { try show(row.goal, row.view) }
        } else {
            try store.reading {
                try $0.forEachGoalView(now: now, includingDeleted: includingDeleted, entries: inv.json) { g, view throws(LedgerError) in
                    try show(g, view)
                }
            }
        }
        if inv.json {
            inv.print("]")
        } else if !any {
            inv.print("no goals")
        }
    }
}
