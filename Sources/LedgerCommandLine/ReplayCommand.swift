import GoalLedger

enum ReplayCommand {
    static let asOf = Option.instant("--as-of", "INSTANT", "only events whose wall time is at or before INSTANT")
    static let to = Option.integer("--to", "POSITION", "only events up to local position POSITION", minimum: 0)

    static let spec = CommandSpec(
        name: "replay", summary: "fold the log from scratch and print the goal state (facts only)",
        options: [
            asOf.spec,
            to.spec,
        ],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let asOf = try inv.value(Self.asOf)
        let to = try inv.value(Self.to).map(UInt64.init)
        let store = try inv.openStore()
        if asOf == nil {
            try replayGoalByGoal(store, through: to, &inv)
            return
        }
        let projection = try store.reading { try $0.replay(through: to, asOf: asOf) }
        // The digest encodes every goal first, so an encoding error stops before any output.
        let digest = try projection.digest
        if inv.json {
            // `{"position","digest","goals":[…]}`, written goal by goal.
            inv.write(#"{"position":\#(projection.position),"digest":"\#(digest)","goals":"#)
            try projection.writeCanonicalJSON { inv.write(String(decoding: $0, as: UTF8.self)) }
            inv.write("}\n")
            return
        }
        let goals = projection.existingGoals
        inv.print("position \(projection.position) · \(goals.count) goal\(goals.count == 1 ? "" : "s") · digest \(digest)")
        for g in goals { inv.printText(GoalText.line(g)) }
    }

    /// The replay without `--as-of`, one goal in memory at a time. The digest comes first in
    /// the output and needs every goal, so the JSON form folds the log twice (first for the
    /// digest, which also finds any encoding error before output starts), and the text form
    /// keeps its one-line goals until the digest is known.
    static func replayGoalByGoal(_ store: LedgerStore, through: UInt64?, _ inv: inout Invocation) throws(LedgerError) {
        if inv.json {
            // Both passes read one snapshot: the digest printed first is the goals' that follow,
            // whatever is appended meanwhile.
            try store.reading { s in
                let (position, digest) = try s.replayGoalByGoal(through: through) { _ throws(LedgerError) in }
                inv.write(#"{"position":\#(position),"digest":"\#(digest)","goals":["#)
                var first = true
                var buffer: [UInt8] = []
                _ = try s.replayGoalByGoal(through: through) { g throws(LedgerError) in
                    buffer.removeAll(keepingCapacity: true)
                    if !first { buffer.append(UInt8(ascii: ",")) }
                    first = false
                    try g.writeCanonicalJSON(into: &buffer)
                    inv.write(String(decoding: buffer, as: UTF8.self))
                }
            }
            inv.write("]}\n")
            return
        }
        var lines: [String] = []
        let (position, digest) = try store.reading {
            try $0.replayGoalByGoal(through: through) { g throws(LedgerError) in lines.append(GoalText.line(g)) }
        }
        inv.print("position \(position) · \(lines.count) goal\(lines.count == 1 ? "" : "s") · digest \(digest)")
        for line in lines { inv.printText(line) }
    }
}
