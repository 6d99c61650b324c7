import GoalLedger

enum StatusCommand {
    static let spec = CommandSpec(
        name: "status", summary: "ledger, device, schema, counts, per-origin sequences, digest",
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let projection = try store.replay()
        let heads = try store.originHeads().sorted { $0.key < $1.key }
        if inv.json {
            inv.printJSON(.object([
                ("ledger", .string(store.ledgerID.uuidString)),
                ("device", .string(store.device)),
                ("schema", .number(Double(store.schema))),
                ("events", .number(Double(projection.position))),
                ("origins", .object(heads.map { ($0.key, .number(Double($0.value))) })),
                ("projections", .object([])),
                ("digest", .string(projection.digest)),
            ]))
            return
        }
        inv.print("ledger   \(store.ledgerID.uuidString)")
        inv.print("device   \(store.device)")
        inv.print("schema   \(store.schema)")
        inv.print("events   \(projection.position)")
        inv.print("goals    \(projection.existingGoals.count)")
        for (device, seq) in heads { inv.print("origin   \(device) at sequence \(seq)") }
        inv.print("digest   \(projection.digest)")
    }
}
