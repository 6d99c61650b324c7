import GoalLedger

enum InitCommand {
    static let spec = CommandSpec(
        name: "init", summary: "create a store for a new ledger, with this store's device",
        options: [
            OptionSpec(name: "--device", value: "NAME", help: "the local device: [a-z0-9][a-z0-9._-]{0,63} (required)"),
            OptionSpec(name: "--schema", value: "N", help: "event schema: 2 (default), or 1 to behave like the old app"),
        ],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        guard let device = inv.options["--device"] else { throw LedgerError(.invalidArgument, "init needs --device NAME") }
        let schema = try inv.integerOption("--schema", minimum: 1) ?? LedgerStore.currentSchema
        let store = try LedgerStore.create(at: inv.storePath, device: device, schema: schema)
        if inv.json {
            try inv.printJSON(
                .object([
                    ("ledger", .string(store.ledgerID.uuidString)), ("device", .string(store.device)),
                    ("schema", .number(Double(store.schema))), ("store", .string(store.path)),
                ]))
        } else {
            inv.print("created ledger \(store.ledgerID.uuidString) at \(store.path) for device \(store.device) (schema \(store.schema))")
        }
    }
}
