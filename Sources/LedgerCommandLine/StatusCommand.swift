import GoalLedger

enum StatusCommand {
    static let spec = CommandSpec(
        name: "status", summary: "ledger, device, schema, counts, per-origin sequences, digest",
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let projection = try store.projection()
        let (version, checkpoint) = try store.projectionStatus()
        let events = try store.lastPosition()
        let heads = try store.originHeads().sorted { String.bytesPrecede($0.key, $1.key) }
        if inv.json {
            try inv.printJSON(
                .object([
                    ("ledger", .string(store.ledgerID.uuidString)),
                    ("device", .string(store.device)),
                    ("schema", .number(Double(store.schema))),
                    ("events", .number(Double(events))),
                    ("origins", .object(heads.map { ($0.key, .number(Double($0.value))) })),
                    (
                        "projections",
                        .object([
                            ("goals", .object([("version", .number(Double(version))), ("checkpoint", .number(Double(checkpoint)))]))
                        ])
                    ),
                    ("digest", .string(projection.digest)),
                    ("migrations", .array(try store.appliedMigrations().map { .string($0) })),
                ]))
            return
        }
        inv.print("ledger   \(store.ledgerID.uuidString)")
        inv.print("device   \(store.device)")
        inv.print("schema   \(store.schema)" + (store.schema < LedgerStore.currentSchema ? " (legacy: run `ledger migrate`)" : ""))
        inv.print("events   \(events)")
        inv.print("goals    \(projection.existingGoals.count)")
        for (device, seq) in heads { inv.print("origin   \(device) at sequence \(seq)") }
        inv.print("goals projection version \(version), checkpoint \(checkpoint)")
        inv.print("digest   \(try projection.digest)")
    }
}
