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
    package let connection: Connection
    /// How long a sync waits for another session's hold on its ledger's lock, and the hub's
    /// transactions for any lock (`lock_timeout`), in seconds: `$LEDGER_HUB_LOCK_TIMEOUT`, else 30.
    package var lockTimeout: Double
    /// How long any one statement of the hub's transactions may run (`statement_timeout`), in
    /// seconds: `$LEDGER_HUB_STATEMENT_TIMEOUT`, else 600.
    package var statementTimeout: Double
    /// How many events a pull or a clone reads from the hub and imports at a time (`PageWalk`):
    /// `$LEDGER_HUB_PAGE_EVENTS`, else 100,000. Memory follows it; so does speed, since each
    /// page is an import of its own.
    package var pageEvents: Int

    /// Whether `peer` names a hub rather than a store directory.
    public static func isURL(_ peer: String) -> Bool {
        peer.hasPrefix("postgresql://") || peer.hasPrefix("postgres://")
    }

    /// Connects to the hub at `url` (`postgresql://[user[:password]@][host][:port]/database[?…]`);
    /// what the URL leaves out comes from libpq's environment (`PGHOST`, `PGUSER`, `PGPASSFILE`, …).
    /// A hub that is neither on a Unix socket nor on loopback is reached with TLS and a verified
    /// certificate, unless the URL sets `sslmode`.
    public init(url: String) throws(LedgerError) {
        name = Self.redacted(url)
        let environment = ProcessInfo.processInfo.environment
        lockTimeout = Self.seconds(environment["LEDGER_HUB_LOCK_TIMEOUT"]) ?? 30
        statementTimeout = Self.seconds(environment["LEDGER_HUB_STATEMENT_TIMEOUT"]) ?? 600
        pageEvents = environment["LEDGER_HUB_PAGE_EVENTS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? LedgerStore.cloneChunkEvents
        do {
            connection = try Connection(url)
        } catch {
            throw LedgerError("cannot reach the hub at \(name): \(error.message)", reason: .peerUnreachable(peer: name))
        }
    }

    /// A positive number of seconds, or nil.
    static func seconds(_ text: String?) -> Double? {
        guard let text, let v = Double(text), v > 0, v.isFinite else { return nil }
        return v
    }

    /// The URL without its password, in every spelling (see `ConnectionString.redacted`).
    public static func redacted(_ url: String) -> String { ConnectionString.redacted(url) }

    /// The role this connection acts as.
    public func currentRole() throws(LedgerError) -> String {
        try run { () throws(PostgreSQLError) in try connection.query("SELECT current_user::text").string(0, 0) }
    }

    // MARK: Statements and errors

    /// Runs `body`, turning the wrapper's errors into ledger errors.
    @discardableResult
    package func run<R>(_ body: () throws(PostgreSQLError) -> R) throws(LedgerError) -> R {
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
                "the hub at \(name) refused: \(e.message) (this role has not been granted the ledger: the hub's owner grants it)",
                reason: .hubAccessNotGranted(hub: name))
        case "3F000", "42P01":
            return LedgerError(
                "\(name) is not a hub (\(e.message)): its schema must be created first", reason: .hubNotInitialized(hub: name))
        case "23505", "23514":
            return LedgerError(.invalidInput, "the hub at \(name) refused the push: \(e.message)\(e.detail.map { " (\($0))" } ?? "")")
        case "55P03":
            return LedgerError(
                .store,
                "the hub at \(name) is locked by another session for more than \(Self.format(lockTimeout)) s (\(e.message)); nothing was written; try again later"
            )
        case "57014":
            return LedgerError(
                .store,
                "the hub at \(name) did not finish a statement within \(Self.format(statementTimeout)) s (\(e.message)); nothing was written; try again later"
            )
        default:
            return LedgerError(.store, "the hub at \(name) failed: \(e.description)")
        }
    }

    /// `30`, `1.5`: seconds for messages.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    /// Begins a transaction whose lock waits and statements are bounded (`lock_timeout`,
    /// `statement_timeout`), so that no other session can stall it for ever, and whose commit
    /// returns only once it is in the server's write-ahead log (`synchronous_commit`), whatever
    /// the server's default: a push the hub has acknowledged survives a crash of the server, so
    /// no device pulls from a hub that later forgets what it was told.
    package func begin() throws(LedgerError) {
        let lockMilliseconds = max(1, Int((lockTimeout * 1000).rounded()))
        let statementMilliseconds = max(1, Int((statementTimeout * 1000).rounded()))
        try run { () throws(PostgreSQLError) in
            try connection.execute(
                "BEGIN; SET LOCAL lock_timeout = \(lockMilliseconds); SET LOCAL statement_timeout = \(statementMilliseconds); SET LOCAL synchronous_commit = on"
            )
        }
    }

    /// Runs `body` in one PostgreSQL transaction (`begin`): committed when it returns, rolled
    /// back when it throws.
    package func transaction<R>(_ body: () throws(LedgerError) -> R) throws(LedgerError) -> R {
        try begin()
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
    /// Another session holding the lock (a sync of the same ledger, or any session holding the
    /// same advisory lock) is waited for up to `lockTimeout`, retrying, then refused: it can
    /// delay a sync, never stall it.
    package func lock(ledger: UUID) throws(LedgerError) {
        let deadline = Date().addingTimeInterval(lockTimeout)
        var pause = 0.01
        while true {
            let taken = try run { () throws(PostgreSQLError) in
                try connection.query("SELECT pg_try_advisory_xact_lock(hashtextextended($1::text, 20261102))", [.uuid(ledger)]).bool(0, 0)
            }
            if taken { return }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else {
                throw LedgerError(
                    .store,
                    "ledger \(ledger.uuidString) is locked on the hub at \(name) by another session (another sync of this ledger, or a session holding its lock) for more than \(Self.format(lockTimeout)) s; nothing was written; try again later"
                )
            }
            Thread.sleep(forTimeInterval: min(pause, left))
            pause = min(pause * 2, 0.2)
        }
    }
}
