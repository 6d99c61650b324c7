import Foundation
import GoalLedger
import LedgerHub

enum HubCommand {
    static let ledger = Option.uuid("--ledger", "ID", "grant, revoke: the ledger the role may (no longer) reach")
    static let role = Option.text("--role", "NAME", "grant, revoke: the PostgreSQL role (grant creates it, LOGIN, when missing)")

    static let usage = "init URL | grant URL --ledger ID --role NAME | revoke URL --ledger ID --role NAME | grant-service URL --role NAME"

    static let spec = CommandSpec(
        name: "hub", arguments: usage,
        summary:
            "create or upgrade a hub's schema in a PostgreSQL database; let a role reach one ledger (grant), or no longer reach it (revoke: the role keeps its other ledgers); let a role run the sync service (grant-service: every request scoped to its own ledger)",
        options: [
            ledger.spec,
            role.spec,
        ],
        positionals: 2...2, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let url = inv.positionals[1]
        guard Hub.isURL(url) else {
            // Not repeated whole: a mistyped URL may still hold a password.
            let got = url.range(of: "://").map { "a \(url[..<$0.lowerBound]):// URL" } ?? "something else"
            throw LedgerError(.invalidArgument, "a hub is a postgresql:// or postgres:// URL, got \(got)")
        }
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
            if created {
                inv.err +=
                    "ledger: warning: role \(role) was created with LOGIN and no password: set one (ALTER ROLE … PASSWORD …) unless the server authenticates it otherwise (pg_hba.conf)\n"
            }
            if inv.json {
                try inv.printJSON(.object([("ledger", .string(ledger.uuidString)), ("role", .string(role)), ("created", .bool(created))]))
            } else {
                inv.print("role \(role)\(created ? " (created)" : "") may reach ledger \(ledger.uuidString) on \(hub.name)")
            }
        case "grant-service":
            let role = try inv.required(Self.role, by: "hub grant-service")
            let hub = try Hub(url: url)
            let created = try hub.grantService(role: role)
            if created {
                inv.err +=
                    "ledger: warning: role \(role) was created with LOGIN and no password: set one (ALTER ROLE … PASSWORD …) unless the server authenticates it otherwise (pg_hba.conf)\n"
            }
            if inv.json {
                try inv.printJSON(.object([("role", .string(role)), ("created", .bool(created))]))
            } else {
                inv.print("role \(role)\(created ? " (created)" : "") may run the sync service on \(hub.name)")
            }
        case "revoke":
            let ledger = try inv.required(Self.ledger, by: "hub revoke")
            let role = try inv.required(Self.role, by: "hub revoke")
            let hub = try Hub(url: url)
            let revoked = try hub.revoke(ledger: ledger, role: role)
            if inv.json {
                try inv.printJSON(.object([("ledger", .string(ledger.uuidString)), ("role", .string(role)), ("revoked", .bool(revoked))]))
            } else if revoked {
                inv.print("role \(role) may no longer reach ledger \(ledger.uuidString) on \(hub.name)")
            } else {
                inv.print("role \(role) had not been granted ledger \(ledger.uuidString) on \(hub.name); nothing to revoke")
            }
        default:
            throw LedgerError(.invalidArgument, "usage: ledger hub \(usage)")
        }
    }
}
