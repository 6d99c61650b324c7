import Foundation
import GoalLedger

enum InitCommand {
    static let device = Option.text("--device", "NAME", "the local device: [a-z0-9][a-z0-9._-]{0,63} (required)")
    static let schema = Option.integer("--schema", "N", "event schema: 2 (default), or 1 to behave like the old app", minimum: 1)

    static let spec = CommandSpec(
        name: "init", summary: "create a store for a new ledger, with this store's device",
        options: [
            device.spec,
            schema.spec,
        ],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let device = try inv.required(Self.device, by: "init")
        let schema = try inv.value(Self.schema) ?? LedgerStore.currentSchema
        // A new directory is created owner-only; an existing one must already be.
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: inv.storePath, isDirectory: &isDirectory), isDirectory.boolValue {
            try LedgerStore.checkOwnerOnly(
                directory: inv.storePath, holding: "a store (a person's whole history and the device's secret key)")
        }
        let store = try LedgerStore.create(at: inv.storePath, device: device, schema: schema)
        if inv.json {
            try inv.printJSON(
                .object([
                    ("ledger", .string(store.ledgerID.uuidString)), ("device", .string(store.device)),
                    ("schema", .number(Double(try store.reading { $0.schema }))), ("store", .string(store.path)),
                ]))
        } else {
            inv.print(
                "created ledger \(store.ledgerID.uuidString) at \(store.path) for device \(store.device) (schema \(try store.reading { $0.schema }))"
            )
        }
    }
}
