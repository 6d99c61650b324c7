import Foundation
import GoalLedger
import PostgreSQL

extension Hub {
    /// Lets `role` read and write the rows of `ledger`, and nothing else (row-level security on
    /// every hub table; no right to change the schema). Creates the role (`LOGIN`, no password)
    /// when it does not exist. Run by the hub's owner. Returns whether the role was created.
    @discardableResult
    public func grant(ledger: UUID, role: String) throws(LedgerError) -> Bool {
        try Self.checkRoleName(role)
        try checkSchema()
        let quoted = Self.quoted(role)
        return try transaction { () throws(LedgerError) in
            try run { () throws(PostgreSQLError) in
                let created = try createLoginRole(role)
                try connection.execute(
                    """
                    GRANT USAGE ON SCHEMA hub TO \(quoted);
                    GRANT SELECT ON hub.migrations, hub.access, hub.heads TO \(quoted);
                    GRANT SELECT, INSERT ON hub.events TO \(quoted);
                    """)
                try connection.query(
                    "INSERT INTO hub.access (ledger, role) VALUES ($1, $2) ON CONFLICT DO NOTHING", [.uuid(ledger), .text(role)])
                return created
            }
        }
    }

    /// Takes back what `grant` gave `role` for `ledger`: its grant is deleted, so row-level
    /// security hides the ledger's rows from the role and refuses its inserts there, while the
    /// other ledgers granted to it stay as they were. A role left with no ledger also loses its
    /// rights on the hub's schema and tables (the role itself is kept). Run by the hub's owner.
    /// Returns whether the role had been granted the ledger.
    @discardableResult
    public func revoke(ledger: UUID, role: String) throws(LedgerError) -> Bool {
        try Self.checkRoleName(role)
        try checkSchema()
        let quoted = Self.quoted(role)
        return try transaction { () throws(LedgerError) in
            try run { () throws(PostgreSQLError) in
                let removed = try connection.query(
                    "DELETE FROM hub.access WHERE ledger = $1 AND role = $2", [.uuid(ledger), .text(role)]
                ).affectedRows > 0
                let exists = try connection.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [.text(role)]).rowCount > 0
                let remaining = try connection.query("SELECT 1 FROM hub.access WHERE role = $1 LIMIT 1", [.text(role)]).rowCount
                if exists && remaining == 0 {
                    try connection.execute(
                        """
                        REVOKE ALL ON ALL TABLES IN SCHEMA hub FROM \(quoted);
                        REVOKE USAGE ON SCHEMA hub FROM \(quoted);
                        """)
                }
                return removed
            }
        }
    }

    /// Lets `role` run the sync service: it becomes a member of the service's group role
    /// (``HubSchema/serviceRole``), whose policies give each transaction only the rows of the
    /// ledger its request names. Creates the role (`LOGIN`, no password) when it does not exist.
    /// Run by the hub's owner. Returns whether the role was created.
    @discardableResult
    public func grantService(role: String) throws(LedgerError) -> Bool {
        try Self.checkRoleName(role)
        try checkSchema()
        let quoted = Self.quoted(role)
        return try transaction { () throws(LedgerError) in
            try run { () throws(PostgreSQLError) in
                let created = try createLoginRole(role)
                try connection.execute("GRANT \(HubSchema.serviceRole) TO \(quoted)")
                return created
            }
        }
    }

    /// Creates `role` (`LOGIN`, no password) unless it exists; whether it was created.
    /// Roles belong to the whole server, so another database's grant may create the same role
    /// at the same moment: that is "it exists", not a failure (a savepoint keeps the
    /// transaction usable).
    private func createLoginRole(_ role: String) throws(PostgreSQLError) -> Bool {
        guard try connection.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [.text(role)]).rowCount == 0 else { return false }
        try connection.execute("SAVEPOINT create_role")
        do throws(PostgreSQLError) {
            try connection.execute("CREATE ROLE \(Self.quoted(role)) LOGIN")
        } catch where error.sqlState == "42710" || error.sqlState == "23505" {
            try connection.execute("ROLLBACK TO SAVEPOINT create_role")
            return false
        }
        try connection.execute("RELEASE SAVEPOINT create_role")
        return true
    }

    /// Refuses a name PostgreSQL would not take as a role, or one it reserves.
    static func checkRoleName(_ role: String) throws(LedgerError) {
        guard !role.isEmpty, role.utf8.count <= 63, !role.contains("\0") else {
            throw LedgerError(.invalidArgument, "a role must be a PostgreSQL role name of 1 to 63 bytes, got \"\(role)\"")
        }
        guard !role.hasPrefix("pg_") else { throw LedgerError(.invalidArgument, "role \(role): names starting with pg_ are reserved") }
    }

    /// `role` as a quoted SQL identifier.
    static func quoted(_ role: String) -> String { "\"" + role.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}
