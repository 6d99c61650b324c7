/// Every failure the ledger reports, with the exit code the command line uses for it.
///
/// One error type for the library, in the manner of GRDB's `DatabaseError`: the `code` says what
/// kind of failure it is (and so how a caller may react), the message says what exactly was wrong.
public struct LedgerError: Error, CustomStringConvertible, Equatable, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let exitCode: Int32
        public let name: String
        /// A bug or an unexpected failure of the system.
        public static let `internal` = Code(exitCode: 1, name: "internal")
        /// The command line was used wrongly.
        public static let usage = Code(exitCode: 2, name: "usage")
        /// An event, file or argument value is invalid; nothing was written.
        public static let invalidInput = Code(exitCode: 3, name: "invalid input")
        /// `--expect-version` did not match; nothing was written.
        public static let versionConflict = Code(exitCode: 4, name: "version conflict")
        /// The store is missing, locked, damaged, of another ledger or of another schema.
        public static let store = Code(exitCode: 5, name: "store")
        public var description: String { name }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// An invalid input line, naming the line (1-based) and the field.
    public static func invalidLine(_ line: Int, field: String?, _ message: String) -> LedgerError {
        if let field {
            return LedgerError(.invalidInput, "line \(line): field \"\(field)\": \(message)")
        }
        return LedgerError(.invalidInput, "line \(line): \(message)")
    }
}

/// A problem with one field of an event, before the line number is known.
public struct FieldError: Error, Equatable, Sendable {
    public var field: String?
    public var message: String
    public init(_ field: String?, _ message: String) {
        self.field = field
        self.message = message
    }
}
