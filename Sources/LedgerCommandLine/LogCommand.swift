import Foundation
import GoalLedger

enum LogCommand {
    static let spec = CommandSpec(
        name: "log", summary: "events in canonical order (hybrid logical clock, then device)",
        options: [OptionSpec(name: "--goal", value: "GOAL", help: "only events about GOAL")],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let goal = try inv.uuidOption("--goal")
        let store = try inv.openStore()
        let events = try store.canonicalEvents(goal: goal)
        if inv.json {
            inv.printJSON(.array(events.map { $0.event.json(position: $0.position) }))
            return
        }
        for (position, e) in events {
            let fields = e.payload.jsonMembers.filter { $0.0 != "goal" }
                .map { "\($0.0)=\(JSONWriter.string($0.1))" }.joined(separator: " ")
            let about = e.payload.goal.map { " \($0.uuidString)" } ?? ""
            inv.print("#\(position)  \(e.at.rfc3339)  \(e.origin)/\(e.sequence)  \(e.type.name)\(about)  \(fields)")
        }
    }
}
