/// A failure reported by libpq or by the server, with the server's own words.
///
/// `sqlState` is the five-character SQLSTATE the server sent (nil when the failure happened
/// before or outside a server reply: no server, a broken connection). `isConnectionFailure`
/// tells a caller that the server was unreachable or went away, as opposed to refusing a
/// statement.
public struct PostgreSQLError: Error, CustomStringConvertible, Sendable {
    /// The server's primary message, or libpq's reason.
    public var message: String
    public var sqlState: String?
    public var detail: String?
    public var constraint: String?
    /// The connection failed or was lost (no server, refused, closed, shut down).
    public var isConnectionFailure: Bool

    public init(
        message: String, sqlState: String? = nil, detail: String? = nil, constraint: String? = nil, isConnectionFailure: Bool = false
    ) {
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.constraint = constraint
        self.isConnectionFailure = isConnectionFailure
    }

    public var description: String {
        var text = message
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        if let detail { text += ": \(detail)" }
        return text
    }

    /// `unique_violation`: a row with the same key exists.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// `insufficient_privilege`, which row-level security also reports.
    public var isPermissionDenied: Bool { sqlState == "42501" }
    /// A failure the server raised on purpose in a check (`raise_exception`), or a check or
    /// foreign key constraint.
    public var isCheckViolation: Bool { sqlState == "P0001" || sqlState == "23514" }
}
