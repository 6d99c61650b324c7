import Foundation
import GoalLedger

/// A goal and its view for the local device, as `goals` and `show` print them.
func goalWithView(_ g: GoalState, _ view: GoalView) -> JSONValue {
    guard case .object(var members) = g.json else { return g.json }
    members.append(("view", view.json))
    return .object(members)
}

enum GoalsCommand {
    static let spec = CommandSpec(
        name: "goals", summary: "list current goals with period value, completion and streak for this device",
        options: [OptionSpec(name: "--all", value: nil, help: "include deleted goals")],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let now = try inv.now()
        let store = try inv.openStore()
        let projection = try store.projection()
        let calendar = projection.device(store.device).calendar
        let goals = projection.existingGoals.filter { inv.flags.contains("--all") || !$0.isDeleted }
        let views = goals.map { GoalView(goal: $0, calendar: calendar, now: now) }
        if inv.json {
            try inv.printJSON(.array(zip(goals, views).map { goalWithView($0, $1) }))
            return
        }
        if goals.isEmpty { inv.print("no goals") }
        for (g, v) in zip(goals, views) { inv.print(GoalText.line(g, view: v)) }
    }
}

enum ShowCommand {
    static let spec = CommandSpec(
        name: "show", arguments: "GOAL", summary: "one goal with its entries and its view for this device",
        options: [OptionSpec(name: "--as-of", value: "INSTANT", help: "the goal as it was (events with wall time ≤ INSTANT)")],
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let goal = try inv.uuidArgument(0, "GOAL")
        let now = try inv.now()
        let asOf = try inv.instantOption("--as-of")
        let store = try inv.openStore()
        let state: GoalState
        let device: DeviceState
        if let asOf {
            let projection = try store.replay(asOf: asOf)
            state = projection.goals[goal] ?? GoalState(id: goal)
            device = projection.device(store.device)
        } else {
            state = try store.goalState(goal)
            device = try store.deviceState(store.device)
        }
        guard state.exists else { throw LedgerError(.invalidInput, "unknown goal \(goal.uuidString)") }
        let view = GoalView(goal: state, calendar: device.calendar, now: asOf ?? now)
        if inv.json {
            try inv.printJSON(goalWithView(state, view))
        } else {
            for line in GoalText.detail(state, view) { inv.print(line) }
        }
    }
}
