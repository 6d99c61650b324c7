import GoalLedger

/// Readable one-line and multi-line forms of goals.
enum GoalText {
    static func number(_ v: Amount) -> String { v.description }

    static func line(_ g: GoalState, view: GoalView? = nil) -> String {
        var s = "\(g.id.uuidString)  \(g.title?.value ?? "")  [\((g.cadence?.value ?? .once).rawValue)"
        if g.kind == .measurable {
            s += ", target \(number((g.target?.value ?? nil) ?? .zero))"
            if let unit = g.unit?.value ?? nil { s += " \(unit)" }
        }
        s += "]"
        if g.isDeleted { s += "  (deleted)" }
        if let view {
            s += "  " + progress(g, view)
        } else {
            s += "  \(g.entries.count) entr\(g.entries.count == 1 ? "y" : "ies")"
        }
        return s
    }

    static func progress(_ g: GoalState, _ v: GoalView) -> String {
        var s = g.kind == .measurable ? "\(number(v.value ?? .zero))/\(number((g.target?.value ?? nil) ?? .zero))" : ""
        s += v.completed ? (s.isEmpty ? "done" : " done") : (s.isEmpty ? "not done" : "")
        if let p = v.period { s += p.start == p.end ? " (\(p.start))" : " (\(p.start)…\(p.end))" }
        if let streak = v.streak { s += ", streak \(streak.current) (best \(streak.best))" }
        return s
    }

    /// The English name of weekday `n` (1 = Sunday); the number itself outside 1…7.
    static func weekdayName(_ n: Int) -> String {
        let names = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        return (1...7).contains(n) ? names[n - 1] : "weekday \(n)"
    }

    static func detail(_ g: GoalState, _ v: GoalView) -> [String] {
        var lines = ["\(g.title?.value ?? "")", "  id        \(g.id.uuidString)"]
        if let d = g.details?.value ?? nil { lines.append("  details   \(d)") }
        lines.append("  cadence   \((g.cadence?.value ?? .once).rawValue)")
        if let t = g.targetDate?.value ?? nil { lines.append("  target    \(t)") }
        if g.kind == .measurable {
            let unit = (g.unit?.value ?? nil).map { " " + $0 } ?? ""
            lines.append("  measure   \(number((g.target?.value ?? nil) ?? .zero))\(unit)")
        } else {
            lines.append("  measure   outcome")
        }
        if let r = g.reminder?.value ?? nil {
            // A chosen weekday is named after the time; a reminder without one prints as before.
            let weekday = r.weekday.map { " " + weekdayName($0) } ?? ""
            lines.append("  reminder  \(r.hour < 10 ? "0" : "")\(r.hour):\(r.minute < 10 ? "0" : "")\(r.minute)\(weekday)")
        } else {
            lines.append("  reminder  off")
        }
        if !g.tags.isEmpty { lines.append("  tags      \(g.tags.joined(separator: ", "))") }
        if g.isDeleted { lines.append("  deleted") }
        lines.append("  progress  \(progress(g, v))")
        for e in g.entries {
            let what = e.amount.map(number) ?? ((e.completed ?? false) ? "completed" : "not completed")
            lines.append("    \(e.day)  \(what)  (\(e.occurredAt.rfc3339) on \(e.device), \(e.id.uuidString))")
        }
        return lines
    }
}
