import CLibPQ
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One connection to a PostgreSQL server, through libpq. Used by one thread at a time.
///
/// The only code that calls libpq: connecting (a `postgresql://` URL or `key=value` string,
/// completed by libpq's environment: `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSFILE`, …),
/// statements with binary parameters and results, and `COPY … FROM STDIN (FORMAT binary)`.
/// Every failure is a `PostgreSQLError` carrying the server's message and SQLSTATE.
public final class Connection {
    private let conn: OpaquePointer

    /// Connects; `connectTimeout` (seconds) applies unless the URL or `PGCONNECT_TIMEOUT` sets one.
    /// A server that is neither a Unix socket nor loopback is reached with TLS and a verified
    /// certificate unless the string sets `sslmode` (see `ConnectionString`). A malformed string
    /// is refused without repeating it, and no message repeats a password the string holds.
    public init(_ conninfo: String, connectTimeout: Int = 10) throws(PostgreSQLError) {
        let string = try ConnectionString(conninfo)
        let parameters = string.parameters(connectTimeout: connectTimeout, environment: ProcessInfo.processInfo.environment)
        let handle = Self.withCStrings(parameters.map(\.keyword)) { k in
            Self.withCStrings(parameters.map(\.value)) { v in PQconnectdbParams(k, v, 1) }
        }
        guard let handle else { throw PostgreSQLError(message: "out of memory", isConnectionFailure: true) }
        guard PQstatus(handle) == CONNECTION_OK else {
            let reason = string.withholdingSecrets(Self.trimmed(PQerrorMessage(handle)))
            PQfinish(handle)
            throw PostgreSQLError(message: reason, isConnectionFailure: true)
        }
        conn = handle
        // Notices ("… already exists, skipping") are not errors; keep them off stderr.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
    }

    deinit { PQfinish(conn) }

    /// The server's version number (e.g. 150004).
    public var serverVersion: Int { Int(PQserverVersion(conn)) }

    /// Whether an idle connection still looks usable, without a round trip: libpq reports it
    /// open and its socket has nothing to read. A server that restarted, or ended the session,
    /// closed the socket or sent its last message on it, which makes it readable; so does any
    /// message of the server to an idle session, after which a pool is better off without it.
    public var isOpenAndIdle: Bool {
        guard PQstatus(conn) == CONNECTION_OK, PQtransactionStatus(conn) == PQTRANS_IDLE else { return false }
        let socket = PQsocket(conn)
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 0
    }

    /// Runs one or more statements without parameters; returns the last one's rows (text form).
    @discardableResult
    public func execute(_ sql: String) throws(PostgreSQLError) -> QueryResult {
        try check(PQexec(conn, sql))
    }

    /// Runs one statement with binary parameters; rows come back in binary form.
    @discardableResult
    public func query(_ sql: String, _ parameters: [Parameter] = []) throws(PostgreSQLError) -> QueryResult {
        let types = parameters.map { $0.oid }
        let values = parameters.map { $0.bytes }
        let lengths = values.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        // Keep every value's storage alive while libpq reads it.
        let storage = values.map { v -> UnsafeMutablePointer<CChar>? in
            guard let v else { return nil }
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: max(v.count, 1))
            v.withUnsafeBytes { raw in
                if let base = raw.baseAddress { UnsafeMutableRawPointer(p).copyMemory(from: base, byteCount: raw.count) }
            }
            return p
        }
        defer { for p in storage { p?.deallocate() } }
        let result = storage.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
            PQexecParams(conn, sql, Int32(parameters.count), types, valuePointers.baseAddress, lengths, formats, 1)
        }
        return try check(result)
    }

    /// `COPY … FROM STDIN (FORMAT binary)`: `fill` writes the rows; they are sent in pieces as
    /// they are written. Returns the number of rows the server took. When `fill` throws, the
    /// copy is abandoned (the server discards every row) and the error is rethrown.
    @discardableResult
    public func copyIn(_ sql: String, _ fill: (inout CopyWriter) throws -> Void) throws -> Int {
        let start = try check(PQexec(conn, sql), expecting: PGRES_COPY_IN)
        _ = start
        var writer = CopyWriter()
        var sendError: PostgreSQLError?
        writer.sink = { [conn] chunk throws(PostgreSQLError) in
            let rc = chunk.withUnsafeBytes { b in
                PQputCopyData(conn, b.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(b.count))
            }
            if rc != 1 {
                throw PostgreSQLError(message: Self.trimmed(PQerrorMessage(conn)), isConnectionFailure: PQstatus(conn) != CONNECTION_OK)
            }
        }
        do {
            writer.header()
            try fill(&writer)
            try writer.finish()
        } catch {
            if let e = error as? PostgreSQLError, e.isConnectionFailure { sendError = e }
            _ = PQputCopyEnd(conn, "abandoned by the client")
            // Drain the copy's failure result so the connection can go on.
            while let r = PQgetResult(conn) { PQclear(r) }
            if let sendError { throw sendError }
            throw error
        }
        guard PQputCopyEnd(conn, nil) == 1 else {
            throw PostgreSQLError(message: Self.trimmed(PQerrorMessage(conn)), isConnectionFailure: PQstatus(conn) != CONNECTION_OK)
        }
        let end = try check(PQgetResult(conn))
        while let r = PQgetResult(conn) { PQclear(r) }
        return end.affectedRows
    }

    // MARK: Results and errors

    private func check(_ result: OpaquePointer?, expecting expected: ExecStatusType? = nil) throws(PostgreSQLError) -> QueryResult {
        guard let result else {
            throw PostgreSQLError(message: Self.trimmed(PQerrorMessage(conn)), isConnectionFailure: PQstatus(conn) != CONNECTION_OK)
        }
        let status = PQresultStatus(result)
        if let expected {
            if status == expected { return QueryResult(result) }
        } else if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
            return QueryResult(result)
        }
        let error = Self.error(result, conn)
        PQclear(result)
        throw error
    }

    private static func error(_ result: OpaquePointer, _ conn: OpaquePointer) -> PostgreSQLError {
        func field(_ code: Character) -> String? {
            guard let p = PQresultErrorField(result, Int32(code.asciiValue!)) else { return nil }
            return String(cString: p)
        }
        let sqlState = field("C")
        let primary = field("M") ?? trimmed(PQresultErrorMessage(result))
        let lost = PQstatus(conn) != CONNECTION_OK || sqlState.map { $0.hasPrefix("08") || $0.hasPrefix("57P") } ?? false
        return PostgreSQLError(
            message: primary.isEmpty ? trimmed(PQerrorMessage(conn)) : primary, sqlState: sqlState, detail: field("D"),
            constraint: field("n"), isConnectionFailure: lost)
    }

    static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "unknown libpq failure" }
        return String(cString: message).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "; ")
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { for c in copies { free(c) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
