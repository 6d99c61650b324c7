import Foundation
import GoalLedger
import PostgreSQL

extension Hub {
    /// Creates or upgrades the hub schema: each missing migration runs in its own transaction
    /// with the row recording it. Returns the identifiers applied now (empty: already current).
    /// A hub recording a migration this code does not know is refused (exit 5).
    @discardableResult
    public func initialize() throws(LedgerError) -> [String] {
        var applied: [String] = []
        try transaction { () throws(LedgerError) in
            // One initializer at a time.
            try run { () throws(PostgreSQLError) in
                try connection.execute("SELECT pg_advisory_xact_lock(20261102)")
                try connection.execute(HubSchema.bootstrap)
            }
            let done = try appliedMigrations()
            for m in HubSchema.migrations where !done.contains(m.identifier) {
                try run { () throws(PostgreSQLError) in
                    try connection.execute(m.sql)
                    try connection.query("INSERT INTO hub.migrations (identifier) VALUES ($1)", [.text(m.identifier)])
                }
                applied.append(m.identifier)
            }
        }
        return applied
    }

    /// The migrations the hub records; refused when one is unknown to this code.
    func appliedMigrations() throws(LedgerError) -> Set<String> {
        let rows = try run { () throws(PostgreSQLError) in try connection.query("SELECT identifier FROM hub.migrations") }
        let done = Set((0..<rows.rowCount).map { rows.string($0, 0) })
        let known = Set(HubSchema.migrations.map(\.identifier))
        if let unknown = done.subtracting(known).sorted().first {
            throw LedgerError(
                .store,
                "the hub at \(name) records migration \"\(unknown)\", which this ledger does not know: the hub is newer; upgrade the ledger"
            )
        }
        return done
    }

    /// Refuses a hub whose schema is missing, older or newer than this code's.
    package func checkSchema() throws(LedgerError) {
        let done = try appliedMigrations()
        if let missing = HubSchema.migrations.first(where: { !done.contains($0.identifier) }) {
            throw LedgerError(
                "the hub at \(name) lacks migration \"\(missing.identifier)\": its owner must upgrade its schema",
                reason: .hubNotInitialized(hub: name))
        }
    }
}
