import Foundation
import GoalLedger

enum RebuildCommand {
    static let spec = CommandSpec(
        name: "rebuild", summary: "rebuild every projection from the log (beside the live one, then switch)",
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let started = Date()
        let terminal = isatty(STDERR_FILENO) == 1
        var shown = false
        try store.rebuild { folded, total in
            // Progress only on a terminal, and only once it takes more than a moment.
            guard terminal, Date().timeIntervalSince(started) > 0.5 else { return }
            shown = true
            FileHandle.standardError.write(Data("\rrebuilding: \(folded)/\(total) events".utf8))
        }
        if shown { FileHandle.standardError.write(Data("\n".utf8)) }
        let (version, checkpoint) = try store.projectionStatus()
        if inv.json {
            try inv.printJSON(
                .object([
                    (
                        "projections",
                        .object([
                            ("goals", .object([("version", .number(Double(version))), ("checkpoint", .number(Double(checkpoint)))]))
                        ])
                    )
                ]))
        } else {
            inv.print("rebuilt the goal projection (version \(version)) from \(checkpoint) events")
        }
    }
}

enum MigrateCommand {
    static let spec = CommandSpec(
        name: "migrate", summary: "upgrade the store to the current event schema, then rebuild its projections",
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let before = store.schema
        let report = try store.migrate(now: try inv.now())
        if inv.json {
            try inv.printJSON(
                .object([
                    ("from", .number(Double(before))), ("schema", .number(Double(report.schema))),
                    ("applied", .array(report.applied.map { .string($0) })), ("rebuilt", .bool(report.rebuilt)),
                ]))
        } else if report.applied.isEmpty && !report.rebuilt {
            inv.print("already on schema \(report.schema); nothing to do")
        } else {
            inv.print(
                "migrated from schema \(before) to \(report.schema)"
                    + (report.applied.isEmpty ? "" : " (\(report.applied.joined(separator: ", ")))") + "; projections rebuilt")
        }
    }
}

enum BackupCommand {
    static let spec = CommandSpec(
        name: "backup", arguments: "DEST",
        summary: "write a consistent, compacted copy of the store to a new directory (appends may go on)",
        options: [OptionSpec(name: "--with-key", value: nil, help: "also copy the device's secret signing key (left out by default)")],
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let destination = inv.positionals[0]
        try store.backup(to: destination, withKey: inv.flags.contains("--with-key"))
        let copy = try LedgerStore.open(at: destination)
        let events = try copy.lastPosition()
        if inv.json {
            try inv.printJSON(.object([("backup", .string(destination)), ("events", .number(Double(events)))]))
        } else {
            inv.print("backed up \(events) events to \(destination)")
        }
    }
}

enum VerifyCommand {
    static let spec = CommandSpec(
        name: "verify", summary: "check checksums, indexes, origin sequences and projections against a fresh replay",
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let report = try store.verify()
        if inv.json {
            try inv.printJSON(
                .object([
                    ("ok", .bool(report.isClean)), ("events", .number(Double(report.events))), ("goals", .number(Double(report.goals))),
                    ("problems", .array(report.problems.map { .string($0) })),
                ]))
        } else if report.isClean {
            inv.print("ok: \(report.events) events, \(report.goals) goals; indexes, sequences and projections agree with the log")
        } else {
            for p in report.problems { inv.print(p) }
        }
        if !report.isClean {
            throw LedgerError(
                .store, "verify found \(report.problems.count) problem\(report.problems.count == 1 ? "" : "s") in \(store.path)")
        }
    }
}

enum AuditCommand {
    static let spec = CommandSpec(
        name: "audit", arguments: "GOAL",
        summary: "every change to a goal in canonical order: who, when, before and after, overwritten values",
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let goal = try inv.uuidArgument(0, "GOAL")
        let store = try inv.openStore()
        let steps = try store.audit(goal: goal)
        guard !steps.isEmpty else { throw LedgerError(.invalidInput, "unknown goal \(goal.uuidString)") }
        let conflicts = try store.conflicts(goal: goal)
        let sources = GoalAudit.entrySources(try store.events(ofGoal: goal).map(\.event), rule: store.historyRule)
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
            inv.print(
                "#\(s.position)  \(s.event.at.rfc3339)  \(s.event.origin)/\(s.event.sequence)  \(s.event.type.name)  \(s.event.id.uuidString)  "
                    + (s.signedBy.map { "signed \($0)" } ?? "unsigned")
            )
            for c in s.changes {
                inv.print("    \(c.field): \(JSONWriter.message(c.before)) → \(JSONWriter.message(c.after))")
            }
            if !s.historyAdded.isEmpty { inv.print("    history added \(s.historyAdded.map(\.uuidString).joined(separator: ", "))") }
            if !s.historyRemoved.isEmpty { inv.print("    history removed \(s.historyRemoved.map(\.uuidString).joined(separator: ", "))") }
            for id in s.recovered { inv.print("    + \(id.uuidString) recovered by migration (the schema-1 view had lost it)") }
            for o in s.overwrote {
                inv.print(
                    "    ! overwrote \(o.field) = \(JSONWriter.message(o.value)) by \(o.device) (\(o.event.uuidString)), which its author had not seen"
                )
            }
            for o in s.supersededBy {
                inv.print("    ! \(o.field) superseded by \(o.device) (\(o.event.uuidString)): \(JSONWriter.message(o.value))")
            }
        }
        if !sources.isEmpty {
            inv.print("entries:")
            for s in sources {
                let value = s.entry.amount.map(GoalText.number) ?? ((s.entry.completed ?? false) ? "completed" : "not completed")
                inv.print(
                    "  \(s.entry.id.uuidString) \(s.entry.day) \(value) from event \(s.event.uuidString)"
                        + (s.recovered ? " (recovered by migration)" : ""))
            }
        }
        if !conflicts.isEmpty {
            inv.print("conflicts:")
            for c in conflicts { inv.print("  " + ConflictText.describe(c)) }
        }
    }
}
