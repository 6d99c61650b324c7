import Foundation

/// Every failure the ledger reports.
///
/// One error type for the library, in the manner of GRDB's `DatabaseError`: the `code` says what
/// kind of failure it is (and so how a caller may react), the message says what exactly was
/// wrong, and the ``reason``, when there is one, says which failure it was, for an app to branch
/// on. The reason determines the code (``Reason/code``). A code matches an error in a `catch`
/// clause:
///
///     do { try store.write { try $0.append(drafts, now: now) } }
///     catch LedgerError.Code.invalidInput { … }      // show the message to the user
///     catch LedgerError.Code.store { … }             // the store needs attention
///
/// (The `ledger` command maps each code to its exit code, and adds to the message a hint that
/// names its own commands, chosen by the reason.)
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

        /// Whether `error` is a `LedgerError` of this code: `catch LedgerError.Code.store { … }`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? LedgerError)?.code == code
        }
    }

    /// What kind of failure this is: the reason's ``Reason/code`` when there is a reason.
    public let code: Code
    /// What exactly was wrong, in a sentence for a person (no command-line flag names).
    public let message: String
    /// What exactly failed, for an app to branch on; nil for failures no more specific than
    /// their ``code``.
    public let reason: Reason?
    /// For an invalid event: the field's problem, which ``failureReason`` says for people.
    package var fieldError: FieldError?
    /// For ``Reason/notificationCenterFailed(description:)``: the center's error.
    package var underlying: UnderlyingError?

    /// An error of another library (the app's notification center), kept whole; two compare
    /// equal when their descriptions do.
    package struct UnderlyingError: Equatable, @unchecked Sendable {
        /// The error as thrown.
        package let error: any Error
        /// `String(describing:)` of it.
        package let description: String
        package init(_ error: any Error) {
            self.error = error
            description = String(describing: error)
        }
        package static func == (a: UnderlyingError, b: UnderlyingError) -> Bool { a.description == b.description }
    }

    /// What exactly failed, for an app to branch on (and for the `ledger` command to choose its
    /// hint by); each reason has its ``code``.
    public enum Reason: Equatable, Sendable {
        /// An event of a batch broke a rule or a limit: `field` (its path in the JSON form; nil
        /// for the event as a whole) of the event at `index` in the batch (1-based), read from
        /// input `line` when it came from one. Nothing was written. (Code: invalid input.)
        case invalidEvent(field: String?, index: Int, line: Int?)
        /// The event at `index` of the batch (from input `line`, when read from one) names
        /// `goal`, which the ledger does not hold (never created here, or not yet synced).
        /// Nothing was written. (Code: invalid input.)
        case unknownGoal(goal: UUID, index: Int, line: Int?)
        /// `goal` was at version `actual`, not `expected`. Nothing was written. (Code: version
        /// conflict.)
        case versionConflict(goal: UUID, expected: Int, actual: Int)
        /// `field` of `goal` no longer held the write the edit's guard named (``FieldVersion``):
        /// another write changed it since it was read. Nothing was written. (Code: version
        /// conflict.)
        case fieldVersionConflict(goal: UUID, field: GoalField)
        /// No store at `path`. (Code: store.)
        case noStore(path: String)
        /// A ledger store already exists at `path`, so none was created there; nothing was
        /// changed. Open it instead, or choose another place. (Code: store.)
        case storeExists(path: String)
        /// `device` is not enrolled in the ledger yet: no enrolled device has enrolled its
        /// `publicKey` (32 bytes), or the enrolment has not reached this store or the sync service.
        /// An enrolled device must enrol this key and sync; nothing was written. `byService`: a
        /// sync service refused the device for it (this store holds no enrolment of its own
        /// device either), rather than this store. (Code: store.)
        case deviceNotEnrolled(device: String, publicKey: [UInt8], byService: Bool = false)
        /// The sync service `peer` refused the request with HTTP `status` (401: the device's key
        /// is not one the service knows for it; 403: the service does not keep this ledger; 400
        /// or 413: the request was malformed or too large; others: see the message). Nothing was
        /// written. (Code: store, or invalid input for 400 and 413.)
        case serviceRefused(peer: String, status: Int)
        /// The store at `path` lacks the signing key of `device`, which its ledger enrolled, so
        /// the device cannot sign; nothing was written. (Code: store.)
        case signingKeyMissing(device: String, path: String)
        /// This store's device was revoked after its sequence `after`: every other device would
        /// refuse what it writes now, so it writes nothing. (Code: store.)
        case deviceRevoked(device: String, after: UInt64)
        /// The store's signing key is not the one the ledger's trust gives `device` (a key
        /// replaced by hand, or a store copied from another device), or the device is not
        /// enrolled and cannot vouch for another. Nothing was written. (Code: store.)
        case signerNotTrusted(device: String)
        /// The store was restored from a backup and may be behind `device`'s own history
        /// (events it wrote after the backup, which other devices hold): writing now would fork
        /// it. Sync with another device or the hub first; nothing was written. (Code: store.)
        case restoredFromBackup(device: String)
        /// A projection row is damaged: ``LedgerStore/rebuild(progress:)`` repairs it. (Code:
        /// store.)
        case projectionDamaged
        /// The store's log is damaged: the event at log `position` cannot be read or is missing
        /// (`position`: nil when none is known). Verify the store (``LedgerSnapshot/verify()``),
        /// and restore a backup if its log is damaged. (Code: store.)
        case storeDamaged(position: UInt64?)
        /// The store's indexes or projections do not agree with its log (an index names log
        /// `position`, when one is known, which holds no event): verify the store
        /// (``LedgerSnapshot/verify()``), then rebuild its projections
        /// (``LedgerStore/rebuild(progress:)``). (Code: store.)
        case indexDamaged(position: UInt64?)
        /// The store's file is damaged below the ledger (LMDB's pages; the message names the
        /// page, or the log `position` when one is known): ``LedgerStore/checkPages(at:limit:)``
        /// names the damage; restore a backup, or build a new store from what it still holds and
        /// what peers hold (``LedgerStore/recover(from:to:sources:ledger:device:key:)``).
        /// (Code: store.)
        case fileDamaged(position: UInt64?)
        /// Events of a newer schema arrived: ``LedgerStore/migrate(progress:now:)`` first.
        /// (Code: store.)
        case needsMigration
        /// The hub named `hub` has no schema, or an older one than this code's: its owner must
        /// create or upgrade it. Nothing was exchanged. (Code: store.)
        case hubNotInitialized(hub: String)
        /// The hub named `hub` refused this database role: its owner has not granted it the
        /// ledger. Nothing was exchanged. (Code: store.)
        case hubAccessNotGranted(hub: String)
        /// The peer, a sync service or a hub named `peer`, could not be reached (no network,
        /// refused, timed out, unavailable); nothing was exchanged. Try again later. (Code: store.)
        case peerUnreachable(peer: String)
        /// The app's notification center failed; `description` is its error's, and
        /// ``LedgerError/underlyingError`` the error itself. (Code: internal.)
        case notificationCenterFailed(description: String)

        /// The code of an error of this reason.
        public var code: Code {
            switch self {
            case .invalidEvent, .unknownGoal: .invalidInput
            case .versionConflict, .fieldVersionConflict: .versionConflict
            case .serviceRefused(_, let status): status == 400 || status == 413 ? .invalidInput : .store
            case .notificationCenterFailed: .internal
            case .noStore, .storeExists, .deviceNotEnrolled, .signingKeyMissing, .deviceRevoked, .signerNotTrusted,
                .restoredFromBackup, .projectionDamaged, .storeDamaged, .indexDamaged, .fileDamaged, .needsMigration,
                .hubNotInitialized, .hubAccessNotGranted, .peerUnreachable:
                .store
            }
        }
    }

    /// The error of another library behind this one: the app's notification center's, for
    /// ``Reason/notificationCenterFailed(description:)``; nil otherwise.
    public var underlyingError: (any Error)? { underlying?.error }

    /// An error of kind `code` with `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
        reason = nil
    }

    /// An error of `reason` (its code is the reason's) with `message`.
    package init(_ message: String, reason: Reason) {
        code = reason.code
        self.message = message
        self.reason = reason
    }

    public var description: String { message }

    /// Whether the store's file is damaged below the ledger, and the error already says so.
    package var isFileDamage: Bool {
        if case .fileDamaged? = reason { true } else { false }
    }

    /// The same error with `text` after its message (the command line's hint).
    package func appending(_ text: String) -> LedgerError {
        var result = reason.map { LedgerError(message + text, reason: $0) } ?? LedgerError(code, message + text)
        result.fieldError = fieldError
        result.underlying = underlying
        return result
    }

    /// The app's notification center failed with `error`; `message` says doing what.
    package static func notificationCenterFailed(_ message: String, _ error: any Error) -> LedgerError {
        let underlying = UnderlyingError(error)
        var result = LedgerError(message, reason: .notificationCenterFailed(description: underlying.description))
        result.underlying = underlying
        return result
    }

    /// The store's indexes are damaged or disagree with its log (`message` says how; at log
    /// `position` when one is known): verify it, then rebuild its projections.
    package static func damaged(_ message: String, position: UInt64? = nil) -> LedgerError {
        LedgerError(message, reason: .indexDamaged(position: position))
    }

    /// The store at `path` is damaged at `place` (a page of its file, a position of its log):
    /// "the store at … is damaged at …; restore a backup or recover".
    package static func storeDamaged(at path: String, _ place: String, position: UInt64? = nil) -> LedgerError {
        LedgerError("the store at \(path) is damaged at \(place); restore a backup or recover", reason: .fileDamaged(position: position))
    }

    /// No store at `path`; `hint` (the caller's, on how to make one) ends the message.
    package static func noStore(at path: String, hint: String = "") -> LedgerError {
        LedgerError("no ledger store at \(path)\(hint)", reason: .noStore(path: path))
    }

    /// The store at `path` lacks the signing key of `device`; `hint` (the caller's, on how that
    /// came about) follows the path.
    package static func signingKeyMissing(device: String, path: String, hint: String = "") -> LedgerError {
        LedgerError(
            "the signing key of \(device) is missing from \(path)\(hint): this device cannot sign; nothing was written",
            reason: .signingKeyMissing(device: device, path: path))
    }

    /// An invalid event of a batch: named by its input line when it was read from one, else by
    /// its place in the batch (1-based), and by the field.
    package static func invalidEvent(line: Int?, index: Int, _ error: FieldError) -> LedgerError {
        let reason =
            error.unknownGoal.map { Reason.unknownGoal(goal: $0, index: index, line: line) }
            ?? Reason.invalidEvent(field: error.field, index: index, line: line)
        var result: LedgerError
        if let line {
            result = LedgerError(invalidLine(line, field: error.field, error.message).message, reason: reason)
        } else if let field = error.field {
            result = LedgerError("event \(index) of the batch: field \"\(field)\": \(error.message)", reason: reason)
        } else {
            result = LedgerError("event \(index) of the batch: \(error.message)", reason: reason)
        }
        result.fieldError = error
        return result
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
    /// The goal the field names, when the problem is that the ledger does not hold it.
    package var unknownGoal: UUID?
    /// A problem with `field` (nil: the whole event), described by `message`.
    public init(_ field: String?, _ message: String) {
        self.field = field
        self.message = message
    }

    /// `field` names `goal`, which the ledger does not hold.
    package static func unknownGoal(_ goal: UUID, field: String = "goal") -> FieldError {
        var e = FieldError(field, "unknown goal \(goal.uuidString)")
        e.unknownGoal = goal
        return e
    }
}
