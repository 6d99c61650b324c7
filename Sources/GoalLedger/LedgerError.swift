import Foundation

/// Every failure the ledger reports.
///
/// One error type for the library, in the manner of GRDB's `DatabaseError`: the `code` says what
/// kind of failure it is (and so how a caller may react), the message says what exactly was
/// wrong. A code matches an error in a `catch` clause:
///
///     do { try store.append(drafts, now: now) }
///     catch LedgerError.Code.invalidInput { … }      // show the message to the user
///     catch LedgerError.Code.store { … }             // the store needs attention
///
/// (The `ledger` command maps each code to its exit code.)
public struct LedgerError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The kind of a failure: what a caller may react to.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name as messages print it ("invalid input").
        public let name: String
        /// A bug or an unexpected failure of the system.
        public static let `internal` = Code(name: "internal")
        /// An argument the caller passed cannot be used (a device name, a schema, a combination of
        /// options); nothing was done.
        public static let invalidArgument = Code(name: "invalid argument")
        /// An event, file or value is invalid; nothing was written.
        public static let invalidInput = Code(name: "invalid input")
        /// The expected version of a goal did not match; nothing was written.
        public static let versionConflict = Code(name: "version conflict")
        /// The store (or hub) is missing, damaged, of another ledger or schema, or unreachable.
        public static let store = Code(name: "store")
        public var description: String { name }

        /// The exit code of this kind of failure, in the conventions of the `ledger` command and
        /// of the scenario format's `expectError`: 1 internal, 2 invalid argument (usage),
        /// 3 invalid input, 4 version conflict, 5 store.
        package var exitCode: Int32 {
            switch self {
            case .invalidArgument: 2
            case .invalidInput: 3
            case .versionConflict: 4
            case .store: 5
            default: 1
            }
        }

        /// Whether `error` is a `LedgerError` of this code: `catch LedgerError.Code.store { … }`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? LedgerError)?.code == code
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What exactly was wrong, in a sentence for a person (no command-line flag names).
    public let message: String
    /// For a failure the command line explains with its own commands and options: which one
    /// (nil for most).
    package let situation: Situation?

    /// The failures the command line adds a hint to, since library messages name none of its
    /// commands or options.
    package enum Situation: Equatable, Sendable {
        /// No store at `path`.
        case noStore(path: String)
        /// The store at `path` lacks the signing key of `device`, which its ledger enrolled.
        case signingKeyMissing(device: String, path: String)
        /// What repairs or upgrades the store: the command line names its command.
        case remedy(Remedy)
        /// An event of a batch broke a rule or a limit.
        case invalidEvent(field: String?, index: Int, line: Int?)
        /// A goal was not at the expected version.
        case versionConflict(goal: UUID, expected: Int, actual: Int)
        /// The app's notification center failed.
        case centerFailed(String)
    }

    /// What exactly failed, for an app to branch on; nil for failures no more specific than
    /// their ``code``.
    public enum Reason: Equatable, Sendable {
        /// An event of a batch broke a rule or a limit: `field` (its path in the JSON form; nil
        /// for the event as a whole) of the event at `index` in the batch (1-based), read from
        /// input `line` when it came from one. Nothing was written.
        case invalidEvent(field: String?, index: Int, line: Int?)
        /// `goal` was at version `actual`, not `expected`. Nothing was written.
        case versionConflict(goal: UUID, expected: Int, actual: Int)
        /// No store at `path`.
        case noStore(path: String)
        /// The store lacks the signing key of `device`, which its ledger enrolled.
        case signingKeyMissing(device: String)
        /// A projection row is damaged: ``LedgerStore/rebuild(progress:)`` repairs it.
        case projectionDamaged
        /// The store's log or indexes are damaged or inconsistent: verify it
        /// (``LedgerStore/verify()``) and rebuild its projections, or restore a backup.
        case storeDamaged
        /// Events of a newer schema arrived: ``LedgerStore/migrate(progress:now:)`` first.
        case needsMigration
        /// The app's notification center failed; `description` is its error's.
        case notificationCenterFailed(description: String)
    }

    /// What exactly failed (see ``Reason``).
    public var reason: Reason? {
        switch situation {
        case .noStore(let path)?: .noStore(path: path)
        case .signingKeyMissing(let device, _)?: .signingKeyMissing(device: device)
        case .remedy(.rebuild)?: .projectionDamaged
        case .remedy(.verifyThenRebuild)?, .remedy(.verifyThenRestore)?: .storeDamaged
        case .remedy(.migrate)?: .needsMigration
        case .invalidEvent(let field, let index, let line)?: .invalidEvent(field: field, index: index, line: line)
        case .versionConflict(let goal, let expected, let actual)?: .versionConflict(goal: goal, expected: expected, actual: actual)
        case .centerFailed(let description)?: .notificationCenterFailed(description: description)
        case nil: nil
        }
    }

    /// What an app (or the command line) does about a store failure.
    package enum Remedy: Equatable, Sendable {
        /// Rebuild the projections from the log (`LedgerStore.rebuild()`).
        case rebuild
        /// Verify the store, then rebuild its projections.
        case verifyThenRebuild
        /// Verify the store; restore a backup if its log is damaged.
        case verifyThenRestore
        /// Migrate the store to the current schema (`LedgerStore.migrate()`).
        case migrate
    }

    /// An error of kind `code` with `message`, which `remedy` repairs.
    package init(_ code: Code, _ message: String, remedy: Remedy) {
        self.init(code, message, situation: .remedy(remedy))
    }

    /// An error of kind `code` with `message`.
    public init(_ code: Code, _ message: String) {
        self.init(code, message, situation: nil)
    }

    /// An error of kind `code` with `message`, in `situation`.
    package init(_ code: Code, _ message: String, situation: Situation?) {
        self.code = code
        self.message = message
        self.situation = situation
    }

    public var description: String { message }

    /// No store at `path`; `hint` (the caller's, on how to make one) ends the message.
    package static func noStore(at path: String, hint: String = "") -> LedgerError {
        LedgerError(.store, "no ledger store at \(path)\(hint)", situation: .noStore(path: path))
    }

    /// The store at `path` lacks the signing key of `device`; `hint` (the caller's, on how that
    /// came about) follows the path.
    package static func signingKeyMissing(device: String, path: String, hint: String = "") -> LedgerError {
        LedgerError(
            .store, "the signing key of \(device) is missing from \(path)\(hint): this device cannot sign; nothing was written",
            situation: .signingKeyMissing(device: device, path: path))
    }

    /// An invalid event of a batch: named by its input line when it was read from one, else by
    /// its place in the batch (1-based), and by the field.
    package static func invalidEvent(line: Int?, index: Int, _ error: FieldError) -> LedgerError {
        let situation = Situation.invalidEvent(field: error.field, index: index, line: line)
        if let line { return LedgerError(.invalidInput, invalidLine(line, field: error.field, error.message).message, situation: situation) }
        let place = "event \(index) of the batch"
        if let field = error.field {
            return LedgerError(.invalidInput, "\(place): field \"\(field)\": \(error.message)", situation: situation)
        }
        return LedgerError(.invalidInput, "\(place): \(error.message)", situation: situation)
    }

    /// An invalid input line, naming the line (1-based) and the field.
    package static func invalidLine(_ line: Int, field: String?, _ message: String) -> LedgerError {
        if let field {
            return LedgerError(.invalidInput, "line \(line): field \"\(field)\": \(message)")
        }
        return LedgerError(.invalidInput, "line \(line): \(message)")
    }
}

/// A problem with one field of an event, before the line number is known.
public struct FieldError: Error, Equatable, Sendable {
    /// The field's path in the event's JSON form (`goal`, `reminder.devices`); nil when the
    /// problem is with the event as a whole.
    public var field: String?
    /// What is wrong with the field ("is required", "must be a UUID, got …").
    public var message: String
    /// A problem with `field` (nil: the whole event), described by `message`.
    public init(_ field: String?, _ message: String) {
        self.field = field
        self.message = message
    }
}

/// An app shows a `LedgerError` as it is: `localizedDescription` is its message.
extension LedgerError: LocalizedError {
    public var errorDescription: String? { message }
}
