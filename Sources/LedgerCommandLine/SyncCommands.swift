import Foundation
import GoalLedger
import LedgerHub

enum CloneCommand {
    static let spec = CommandSpec(
        name: "clone", arguments: "SOURCE",
        summary: "create a store for the same ledger as SOURCE (a store, or a hub URL with --ledger), with all of its events",
        options: [
            OptionSpec(name: "--device", value: "NAME", help: "this new store's device (required, new to the ledger)"),
            OptionSpec(name: "--ledger", value: "ID", help: "the ledger to clone from a hub (required with a URL)"),
        ],
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        guard let device = inv.options["--device"] else { throw LedgerError(.usage, "clone needs --device NAME") }
        let store: LedgerStore
        if Hub.isURL(inv.positionals[0]) {
            guard let ledger = try inv.uuidOption("--ledger") else { throw LedgerError(.usage, "clone from a hub needs --ledger ID") }
            guard DeviceName.isValid(device) else { throw LedgerError(.usage, "invalid device name \"\(device)\"") }
            store = try Hub(url: inv.positionals[0]).clone(ledger: ledger, to: inv.storePath, device: device)
        } else {
            guard inv.options["--ledger"] == nil else { throw LedgerError(.usage, "--ledger is for cloning from a hub URL") }
            store = try LedgerStore.open(at: inv.positionals[0]).clone(to: inv.storePath, device: device, now: try inv.now())
        }
        let events = try store.lastPosition()
        let key = try store.publicKey()
        let enrolled = try store.enrolledDevices().contains { $0.device == device }
        if inv.json {
            try inv.printJSON(
                .object([
                    ("ledger", .string(store.ledgerID.uuidString)), ("device", .string(device)),
                    ("store", .string(store.path)), ("events", .number(Double(events))),
                    ("deviceKey", key.map { .string(Hex.string($0)) } ?? .null), ("enrolled", .bool(enrolled)),
                ]))
        } else {
            inv.print("cloned ledger \(store.ledgerID.uuidString) into \(store.path) for device \(device): \(events) events")
        }
        if let key, !enrolled {
            // A hub cannot vouch for a device: an enrolled device pairs with it.
            inv.err +=
                "ledger: \(device) is not enrolled yet; on an enrolled device run `ledger device enrol \(device) --key \(Hex.string(key))` and sync it, then sync here before appending\n"
        }
    }
}

enum SyncCommand {
    static let spec = CommandSpec(
        name: "sync", arguments: "[PEER]",
        summary: "exchange events both ways with another store of the ledger or a hub (postgresql:// URL; default $LEDGER_HUB)",
        positionals: 0...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        guard let peerName = inv.positionals.first ?? inv.environment["LEDGER_HUB"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw LedgerError(.usage, "sync needs a PEER (a store directory or a postgresql:// URL), or $LEDGER_HUB")
        }
        let store = try inv.openStore()
        let r: SyncResult
        if Hub.isURL(peerName) {
            r = try Hub(url: peerName).sync(store)
        } else {
            r = try store.sync(with: try LedgerStore.open(at: peerName))
        }
        if inv.json {
            try inv.printJSON(
                .object([
                    ("pulled", .number(Double(r.pulled.imported))), ("pushed", .number(Double(r.pushed.imported))),
                    ("events", .number(Double(try store.lastPosition()))),
                ]))
        } else {
            inv.print("received \(r.pulled.imported) event\(r.pulled.imported == 1 ? "" : "s"), sent \(r.pushed.imported)")
        }
        for left in r.pulled.revoked + r.pushed.revoked {
            inv.err += "ledger: left out \(left.count) event(s) of \(left.origin) written after its revocation (after sequence \(left.after))\n"
        }
    }
}

enum ExportCommand {
    static let spec = CommandSpec(
        name: "export", summary: "write every event to a file another store can import",
        options: [OptionSpec(name: "--out", value: "FILE", help: "the file to write (required)")],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        guard let file = inv.options["--out"] else { throw LedgerError(.usage, "export needs --out FILE") }
        let store = try inv.openStore()
        let count = try store.export(to: file)
        if inv.json {
            try inv.printJSON(.object([("events", .number(Double(count))), ("file", .string(file))]))
        } else {
            inv.print("exported \(count) events to \(file)")
        }
    }
}

enum ImportCommand {
    static let spec = CommandSpec(
        name: "import", arguments: "FILE", summary: "import the events of an export file that this store lacks (atomic)",
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let r = try store.importFile(inv.positionals[0])
        if inv.json {
            try inv.printJSON(.object([("imported", .number(Double(r.imported))), ("alreadyPresent", .number(Double(r.alreadyPresent)))]))
        } else {
            inv.print("imported \(r.imported) event\(r.imported == 1 ? "" : "s") (\(r.alreadyPresent) already here)")
        }
    }
}

enum ConflictsCommand {
    static let spec = CommandSpec(
        name: "conflicts", summary: "concurrent changes and how they resolved",
        options: [OptionSpec(name: "--goal", value: "GOAL", help: "only this goal's")],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let goal = try inv.uuidOption("--goal")
        let store = try inv.openStore()
        let conflicts = try store.conflicts(goal: goal)
        if inv.json {
            try inv.printJSON(.array(conflicts.map(\.json)))
            return
        }
        if conflicts.isEmpty { inv.print("no conflicts") }
        for c in conflicts { inv.print(ConflictText.describe(c)) }
    }
}

enum ConflictText {
    static func describe(_ c: Conflict) -> String {
        let lost = c.overwritten.map { "\($0.device) \(JSONWriter.message($0.value)) (\($0.event.uuidString))" }.joined(separator: "; ")
        if c.field == "deleted", c.winner.value == .bool(true) {
            return "\(c.goal.uuidString) deleted by \(c.winner.device) (\(c.winner.event.uuidString)) without having seen: \(lost)"
        }
        return
            "\(c.goal.uuidString) \(c.field): \(c.winner.device) wrote \(JSONWriter.message(c.winner.value)) (\(c.winner.event.uuidString)), overwriting \(lost)"
    }
}
