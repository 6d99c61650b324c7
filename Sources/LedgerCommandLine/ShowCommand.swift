import Foundation
import GoalLedger

enum ShowCommand {
    static let asOf = Option.instant("--as-of", "INSTANT", "the goal as it was (events with wall time ≤ INSTANT)")

    static let spec = CommandSpec(
        name: "show", arguments: "GOAL", summary: "one goal with its entries and its view for this device",
        options: [asOf.spec],
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let goal = try inv.uuidArgument(0, "GOAL")
        let now = try inv.now()
        let asOf = try inv.value(Self.asOf)
        let store = try inv.openStore()
        let found: (GoalState, GoalView)?
        if let asOf {
            let projection = try store.reading { try $0.replay(asOf: asOf) }
            found = projection.goals[goal].map { ($0, GoalView(goal: $0, calendar: projection.device(store.device).calendar, now: asOf)) }
        } else {
            found = try store.reading { try $0.goalWithView(goal, now: now) }
        }
        guard let (state, view) = found, state.exists else { throw LedgerError(.invalidInput, "unknown goal \(goal.uuidString)") }
        if inv.json {
            try inv.printJSON(goalWithView(state, view))
        } else {
            for line in GoalText.detail(state, view) { inv.printText(line) }
        }
    }
}
