import Foundation
import GoalLedger
import LedgerHub

enum HubCommand {
    static let ledger = Option.uuid("--ledger", "ID", "grant: the ledger the role may reach")
    static let role = Option.text("--role", "NAME", "grant: the PostgreSQL role (created, LOGIN, when missing)")

    static let spec = CommandSpec(
        name: "hub", arguments: "init URL | grant URL --ledger ID --role NAME",
        summary: "create or upgrade a hub's schema in a PostgreSQL database; let a role reach one ledger",
        options: [
            ledger.spec,
            role.spec,
        ],
        positionals: 2...2, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let url = inv.positionals[1]
        guard Hub.isURL(url) else { throw LedgerError(.invalidArgument, "a hub is a postgresql:// or postgres:// URL, got \"\(url)\"") }
        switch inv.positionals[0] {
        case "init":
            let hub = try Hub(url: url)
            let applied = try hub.initialize()
            if inv.json {
                try inv.printJSON(.object([("hub", .string(hub.name)), ("applied", .array(applied.map { .string($0) }))]))
            } else if applied.isEmpty {
                inv.print("the hub at \(hub.name) is current")
            } else {
                inv.print("the hub at \(hub.name) applied \(applied.joined(separator: ", "))")
            }
        case "grant":
            let ledger = try inv.required(Self.ledger, by: "hub grant")
            let role = try inv.required(Self.role, by: "hub grant")
            let hub = try Hub(url: url)
            let created = try hub.grant(ledger: ledger, role: role)
            if inv.json {
                try inv.printJSON(.object([("ledger", .string(ledger.uuidString)), ("role", .string(role)), ("created", .bool(created))]))
            } else {
                inv.print("role \(role)\(created ? " (created)" : "") may reach ledger \(ledger.uuidString) on \(hub.name)")
            }
        default:
            throw LedgerError(.invalidArgument, "usage: ledger hub init URL | ledger hub grant URL --ledger ID --role NAME")
        }
    }
}
