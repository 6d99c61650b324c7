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
        let projection = try store.replay(through: to, asOf: asOf)
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
}
