import Foundation
import GoalLedger
import PostgreSQL

/// A connection to a hub: a PostgreSQL database holding the union of many ledgers' events,
/// which devices sync with. Every failure is a `LedgerError`: the hub unreachable, gone away,
/// refusing the role or missing its schema is a store-or-hub problem (exit 5); a refused push or
/// pull names the event (exit 3).
public final class Hub {
    /// The URL as given, with any password left out: for messages.
    public let name: String
    let connection: Connection

    /// Whether `peer` names a hub rather than a store directory.
    public static func isURL(_ peer: String) -> Bool {
        peer.hasPrefix("postgresql://") || peer.hasPrefix("postgres://")
    }

    /// Connects to the hub at `url` (`postgresql://[user[:password]@][host][:port]/database[?…]`);
    /// what the URL leaves out comes from libpq's environment (`PGHOST`, `PGUSER`, `PGPASSFILE`, …).
    public init(url: String) throws(LedgerError) {
        name = Self.redacted(url)
        do {
            connection = try Connection(url)
        } catch {
            throw LedgerError(.store, "cannot reach the hub at \(name): \(error.message)")
        }
    }

    /// The URL without its password (in the user part or as a `password=` parameter).
    static func redacted(_ url: String) -> String {
        var text = url
        if let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@") {
            let user = text[scheme.upperBound..<at]
            if let colon = user.firstIndex(of: ":") { text.replaceSubrange(colon..<at, with: ":…") }
        }
        if let r = text.range(of: #"password=[^&]*"#, options: .regularExpression) { text.replaceSubrange(r, with: "password=…") }
        return text
    }

    /// The role this connection acts as.
    public func currentRole() throws(LedgerError) -> String {
        try run { () throws(PostgreSQLError) in try connection.query("SELECT current_user::text").string(0, 0) }
    }

    // MARK: Statements and errors

    /// Runs `body`, turning the wrapper's errors into ledger errors.
    @discardableResult
    func run<R>(_ body: () throws(PostgreSQLError) -> R) throws(LedgerError) -> R {
        do {
            return try body()
        } catch {
            throw ledgerError(error)
        }
    }

    func ledgerError(_ e: PostgreSQLError) -> LedgerError {
        if e.isConnectionFailure {
            return LedgerError(.store, "the hub at \(name) failed: \(e.message); nothing was written here")
        }
        switch e.sqlState {
        case "42501":
            return LedgerError(
                .store,
                "the hub at \(name) refused: \(e.message) (this role has not been granted the ledger: the hub's owner runs `ledger hub grant`)"
            )
        case "3F000", "42P01":
            return LedgerError(.store, "\(name) is not a hub (\(e.message)): create its schema with `ledger hub init URL`")
        case "23505", "23514":
            return LedgerError(.invalidInput, "the hub at \(name) refused the push: \(e.message)\(e.detail.map { " (\($0))" } ?? "")")
        default:
            return LedgerError(.store, "the hub at \(name) failed: \(e.description)")
        }
    }

    /// Runs `body` in one PostgreSQL transaction: committed when it returns, rolled back when it
    /// throws.
    func transaction<R>(_ body: () throws(LedgerError) -> R) throws(LedgerError) -> R {
        try run { () throws(PostgreSQLError) in try connection.execute("BEGIN") }
        let result: R
        do {
            result = try body()
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
        try run { () throws(PostgreSQLError) in try connection.execute("COMMIT") }
        return result
    }

    /// Serializes the pushes of one ledger for the rest of the transaction (readers never wait).
    func lock(ledger: UUID) throws(LedgerError) {
        try run { () throws(PostgreSQLError) in
            try connection.query("SELECT pg_advisory_xact_lock(hashtextextended($1::text, 20261102))", [.uuid(ledger)])
        }
    }
}
