import Foundation
import GoalLedger

enum AuditCommand {
    static let spec = CommandSpec(
        name: "audit", arguments: "GOAL",
        summary: "every change to a goal in canonical order: who, when, before and after, overwritten values",
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let goal = try inv.uuidArgument(0, "GOAL")
        let store = try inv.openStore()
        // The steps, conflicts and entry sources of one state of the store.
        let (steps, conflicts, events, rule) = try store.reading { s in
            (try s.audit(goal: goal), try s.conflicts(goal: goal), try s.events(ofGoal: goal), s.historyRule)
        }
        guard !steps.isEmpty else { throw LedgerError(.invalidInput, "unknown goal \(goal.uuidString)") }
        let sources = GoalAudit.entrySources(events.map(\.event), rule: rule)
        if inv.json {
            // Each step lists the conflicts it took part in, as winner or as overwritten.
            try inv.printJSON(
                .object([
                    ("goal", .string(goal.uuidString)),
                    (
                        "steps",
                        .array(
                            steps.map { step in
                                guard case .object(var m) = step.json else { return step.json }
                                let mine = conflicts.filter { c in
                                    c.winner.event == step.event.id || c.overwritten.contains { $0.event == step.event.id }
                                }
                                m.append(("conflicts", .array(mine.map(\.json))))
                                return .object(m)
                            })
                    ),
                    (
                        "entries",
                        .array(
                            sources.map { s in
                                .object([
                                    ("entry", .string(s.entry.id.uuidString)), ("event", .string(s.event.uuidString)),
                                    ("recovered", .bool(s.recovered)),
                                ])
                            })
                    ),
                    ("conflicts", .array(conflicts.map(\.json))),
                ]))
            return
        }
        for s in steps {
            inv.printText(
                "#\(s.position)  \(s.event.at.rfc3339)  \(s.event.origin)/\(s.event.sequence)  \(s.event.type.name)  \(s.event.id.uuidString)  "
                    + (s.signedBy.map { "signed \($0)" } ?? "unsigned")
            )
            for c in s.changes {
                inv.printText("    \(c.field): \(JSONWriter.message(c.before)) → \(JSONWriter.message(c.after))")
            }
            if !s.historyAdded.isEmpty { inv.printText("    history added \(s.historyAdded.map(\.uuidString).joined(separator: ", "))") }
            if !s.historyRemoved.isEmpty {
                inv.printText("    history removed \(s.historyRemoved.map(\.uuidString).joined(separator: ", "))")
            }
            for id in s.recovered { inv.printText("    + \(id.uuidString) recovered by migration (the schema-1 view had lost it)") }
            for o in s.overwrote {
                inv.printText(
                    "    ! overwrote \(o.field) = \(JSONWriter.message(o.value)) by \(o.device) (\(o.event.uuidString)), which its author had not seen"
                )
            }
            for o in s.supersededBy {
                inv.printText("    ! \(o.field) superseded by \(o.device) (\(o.event.uuidString)): \(JSONWriter.message(o.value))")
            }
        }
        if !sources.isEmpty {
            inv.printText("entries:")
            for s in sources {
                let value = s.entry.amount.map(GoalText.number) ?? ((s.entry.completed ?? false) ? "completed" : "not completed")
                inv.printText(
                    "  \(s.entry.id.uuidString) \(s.entry.day) \(value) from event \(s.event.uuidString)"
                        + (s.recovered ? " (recovered by migration)" : ""))
            }
        }
        if !conflicts.isEmpty {
            inv.printText("conflicts:")
            for c in conflicts { inv.printText("  " + ConflictText.describe(c)) }
        }
    }
}
