import Foundation
import GoalLedger

enum CloneCommand {
    static let spec = CommandSpec(
        name: "clone", arguments: "SOURCE", summary: "create a store for the same ledger as SOURCE, with all of its events",
        options: [OptionSpec(name: "--device", value: "NAME", help: "this new store's device (required, new to the ledger)")],
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        guard let device = inv.options["--device"] else { throw LedgerError(.usage, "clone needs --device NAME") }
        let source = try LedgerStore.open(at: inv.positionals[0])
        let store = try source.clone(to: inv.storePath, device: device)
        let events = try store.lastPosition()
        if inv.json {
            try inv.printJSON(
                .object([
                    ("ledger", .string(store.ledgerID.uuidString)), ("device", .string(device)),
                    ("store", .string(store.path)), ("events", .number(Double(events))),
                ]))
        } else {
            inv.print("cloned ledger \(store.ledgerID.uuidString) into \(store.path) for device \(device): \(events) events")
        }
    }
}

enum SyncCommand {
    static let spec = CommandSpec(
        name: "sync", arguments: "PEER_STORE", summary: "exchange events with another store of the ledger, both ways",
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let peer = try LedgerStore.open(at: inv.positionals[0])
        let r = try store.sync(with: peer)
        if inv.json {
            try inv.printJSON(
                .object([
                    ("pulled", .number(Double(r.pulled.imported))), ("pushed", .number(Double(r.pushed.imported))),
                    ("events", .number(Double(try store.lastPosition()))),
                ]))
        } else {
            inv.print("received \(r.pulled.imported) event\(r.pulled.imported == 1 ? "" : "s"), sent \(r.pushed.imported)")
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
