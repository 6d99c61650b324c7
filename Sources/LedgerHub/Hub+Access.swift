import Foundation
import GoalLedger
import PostgreSQL

extension Hub {
    /// Lets `role` read and write the rows of `ledger`, and nothing else (row-level security on
    /// every hub table; no right to change the schema). Creates the role (`LOGIN`, no password)
    /// when it does not exist. Run by the hub's owner. Returns whether the role was created.
    @discardableResult
    public func grant(ledger: UUID, role: String) throws(LedgerError) -> Bool {
        guard !role.isEmpty, role.utf8.count <= 63, !role.contains("\0") else {
            throw LedgerError(.invalidArgument, "a role must be a PostgreSQL role name of 1 to 63 bytes, got \"\(role)\"")
        }
        guard !role.hasPrefix("pg_") else { throw LedgerError(.invalidArgument, "role \(role): names starting with pg_ are reserved") }
        try checkSchema()
        let quoted = "\"" + role.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        return try transaction { () throws(LedgerError) in
            try run { () throws(PostgreSQLError) in
                let exists = try connection.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [.text(role)]).rowCount > 0
                if !exists { try connection.execute("CREATE ROLE \(quoted) LOGIN") }
                try connection.execute(
                    """
                    GRANT USAGE ON SCHEMA hub TO \(quoted);
                    GRANT SELECT ON hub.migrations, hub.access, hub.heads TO \(quoted);
                    GRANT SELECT, INSERT ON hub.events TO \(quoted);
                    """)
                try connection.query(
                    "INSERT INTO hub.access (ledger, role) VALUES ($1, $2) ON CONFLICT DO NOTHING", [.uuid(ledger), .text(role)])
                return !exists
            }
        }
    }
}
