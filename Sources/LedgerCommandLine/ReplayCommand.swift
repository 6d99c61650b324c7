import GoalLedger

enum ReplayCommand {
    static let spec = CommandSpec(
        name: "replay", summary: "fold the log from scratch and print the goal state (facts only)",
        options: [
            OptionSpec(name: "--as-of", value: "INSTANT", help: "only events whose wall time is at or before INSTANT"),
            OptionSpec(name: "--to", value: "POSITION", help: "only events up to local position POSITION"),
        ],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let asOf = try inv.instantOption("--as-of")
        let to = try inv.integerOption("--to", minimum: 0).map(UInt64.init)
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
        for g in goals { inv.print(GoalText.line(g)) }
    }
}
