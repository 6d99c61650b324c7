import Foundation
import GoalLedger

enum MoveCommand {
    static let after = Option.uuid("--after", "GOAL", "put the goal right after GOAL")
    static let before = Option.uuid("--before", "GOAL", "put the goal right before GOAL")
    static let first = Flag("--first", "put the goal before every other goal")
    static let last = Flag("--last", "put the goal after every other goal")

    static let spec = CommandSpec(
        name: "move", arguments: "GOAL (--after GOAL | --before GOAL | --first | --last)",
        summary: "move a goal in the person's order (what goals --ordered lists)",
        options: [after.spec, before.spec, first.spec, last.spec],
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let goal = try inv.uuidArgument(0, "GOAL")
        let now = try inv.now()
        var places: [GoalPlacement] = []
        if let a = try inv.value(Self.after) { places.append(.after(a)) }
        if let b = try inv.value(Self.before) { places.append(.before(b)) }
        if inv.isSet(Self.first) { places.append(.first) }
        if inv.isSet(Self.last) { places.append(.last) }
        guard places.count == 1, let placement = places.first else {
            throw LedgerError(.invalidArgument, "move takes exactly one of --after GOAL, --before GOAL, --first, --last")
        }
        let store = try inv.openStore()
        let result = try store.writing { writer in
            switch placement {
            case .first: try writer.moveGoal(goal, after: nil, now: now)
            case .last: try writer.moveGoal(goal, before: nil, now: now)
            case .after(let a): try writer.moveGoal(goal, after: a, now: now)
            case .before(let b): try writer.moveGoal(goal, before: b, now: now)
            }
        }
        if inv.json { try inv.printJSON(result.json) } else { inv.print("moved \(goal.uuidString) (position \(result.position))") }
    }
}
