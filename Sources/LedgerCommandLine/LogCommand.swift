import Foundation
import GoalLedger

enum LogCommand {
    static let goal = Option.uuid("--goal", "GOAL", "only events about GOAL")

    static let spec = CommandSpec(
        name: "log", summary: "events in canonical order (hybrid logical clock, then device)",
        options: [goal.spec],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let goal = try inv.value(Self.goal)
        let store = try inv.openStore()
        let events = try store.reading { try $0.canonicalEvents(goal: goal) }
        if inv.json {
            // One array, written event by event.
            inv.write("[")
            for (i, e) in events.enumerated() {
                try inv.write((i == 0 ? "" : ",") + JSONWriter.string(e.event.json(position: e.position)))
            }
            inv.write("]\n")
            return
        }
        for (position, e) in events {
            let fields = e.payload.jsonMembers.filter { $0.0 != "goal" }
                .map { "\($0.0)=\(JSONWriter.message($0.1))" }.joined(separator: " ")
            let about = e.payload.goal.map { " \($0.uuidString)" } ?? ""
            inv.printText("#\(position)  \(e.at.rfc3339)  \(e.origin)/\(e.sequence)  \(e.type.name)\(about)  \(fields)")
        }
    }
}
