import Foundation

/// What an app shows people: short sentences without ids, paths or keys.
///
/// - `localizedDescription` (``errorDescription``): what went wrong, in a few words
///   ("This change could not be saved.").
/// - ``failureReason``: why, when there is more to say than the code ("The title must be 1 to
///   200 characters.").
/// - ``recoverySuggestion``: what the person can do.
///
/// The full detail (ids, paths, keys, positions) stays in ``LedgerError/message`` (its
/// `description`), for logs and support; the `ledger` command prints that.
extension LedgerError: LocalizedError {
    /// What went wrong, for people, in a few words.
    public var errorDescription: String? { people.what }
    /// Why it went wrong, for people, when there is more to say than ``errorDescription``.
    public var failureReason: String? { people.why }
    /// What the person can do about it.
    public var recoverySuggestion: String? { people.todo }

    /// The three texts, chosen by the reason, else by the code.
    var people: (what: String, why: String?, todo: String?) {
        switch reason {
        case .invalidEvent?, .unknownGoal?:
            let why = fieldError?.peopleText
            let field = fieldError?.field.map(FieldError.noun(of:))
            return ("This change could not be saved.", why, field.map { "Check the \($0) and try again." } ?? "Check what was entered and try again.")
        case .versionConflict?:
            return (
                "This goal was changed meanwhile.", "The goal changed since it was shown (on another screen or another device).",
                "Look at the goal as it is now, then make the change again."
            )
        case .fieldVersionConflict(_, let field)?:
            let noun = FieldError.noun(of: field.rawValue)
            return (
                "The \(noun) was changed meanwhile.", "The \(noun) changed since it was shown (on another screen or another device).",
                "Look at the \(noun) as it is now, then make the change again."
            )
        case .noStore?:
            return ("The goals could not be found.", "There is no goals data in the expected place.", "Set up this device, or restore a backup.")
        case .storeExists?:
            return ("Goals data is already there.", "A new ledger cannot be created where one already is.", "Open the existing data, or choose another place.")
        case .deviceNotEnrolled?:
            return (
                "This device is not part of the ledger yet.", "No device of this ledger has added this device yet.",
                "On a device that already syncs, add this device, let that device sync, then sync here again."
            )
        case .signingKeyMissing?, .signerNotTrusted?:
            return (
                "This device cannot save changes.", "Its signing key is missing or is not the one the ledger trusts for it.",
                "Restore a backup of this device that includes its key, or set it up again as a new device."
            )
        case .deviceRevoked?:
            return ("This device was removed from the ledger.", "Its new changes would be refused by every other device.", "Set this device up again as a new device.")
        case .restoredFromBackup?:
            return (
                "This device must sync before it saves changes.", "It was restored from a backup and may be missing its own latest changes.",
                "Sync with another device or the sync service, then try again."
            )
        case .projectionDamaged?:
            return ("The goals shown could not be read.", "Stored goal data is damaged; the history itself is intact.", "Repair the data by rebuilding it from the history.")
        case .storeDamaged?, .indexDamaged?, .fileDamaged?:
            return ("The goals data is damaged.", nil, "Restore a backup, or set this device up again from another device.")
        case .needsMigration?:
            return ("The goals data needs an update.", "Changes of a newer version of the app arrived.", "Update the data to the current version, then try again.")
        case .peerUnreachable?:
            return ("The sync service could not be reached.", nil, "Check the network connection and try again later.")
        case .serviceRefused(_, let status)?:
            switch status {
            case 401:
                return ("The sync service refused this device.", "It does not know this device's key.", "Make sure this device is still part of the ledger, then sync again.")
            case 400, 413:
                return ("The sync service refused the changes.", nil, "Sync again later; if it keeps failing, contact support.")
            default:
                return ("The sync service refused the request.", nil, "Check the sync service's address, or contact support.")
            }
        case .notificationCenterFailed?:
            return ("Reminders could not be updated.", nil, "Check the notification settings, then try again.")
        case .hubNotInitialized?, .hubAccessNotGranted?, nil:
            // A hub is the command line's and a server's, not an app's: said by the code.
            switch code {
            case .invalidInput: return ("This change could not be saved.", nil, "Check what was entered and try again.")
            case .invalidArgument: return ("This could not be done.", nil, nil)
            case .versionConflict: return ("This was changed meanwhile.", nil, "Look at it as it is now, then try again.")
            case .store: return ("The goals data could not be used.", nil, "Try again; if it keeps failing, restore a backup.")
            default: return ("Something went wrong.", nil, "Try again; if it keeps failing, contact support.")
            }
        }
    }
}

extension FieldError: LocalizedError, CustomStringConvertible {
    /// The problem for people, without ids: "The title must be 1 to 200 characters."
    public var errorDescription: String? { peopleText }
    /// The full detail, for logs: `field "title": must be 1 to 200 characters, got 250`.
    public var description: String { field.map { "field \"\($0)\": \(message)" } ?? message }

    /// The rule a value broke, said of the field in words; values and ids that the message
    /// quotes after ", got" are left out.
    var peopleText: String {
        if unknownGoal != nil { return "This goal is not on this device (yet)." }
        let noun = field.map(Self.noun(of:)) ?? "change"
        for start in ["must ", "is required", "give either"] where message.hasPrefix(start) {
            var rule = message
            if let got = rule.range(of: ", got ") { rule = String(rule[..<got.lowerBound]) }
            if start == "give either" { return "Give either an amount or whether it was done." }
            return "The \(noun) \(rule)."
        }
        return "The \(noun) is not valid."
    }

    /// A field's path in the JSON form (`reminder.hour`, `tags[2]`) in words.
    static func noun(of field: String) -> String {
        let last = field.split(separator: ".").last.map(String.init) ?? field
        let name = last.split(separator: "[").first.map(String.init) ?? last
        if name != last, let element = elementNouns[name] { return element }
        return nouns[name] ?? "value"
    }

    static let nouns: [String: String] = [
        "title": "title", "details": "notes", "cadence": "repeat schedule", "targetDate": "target date", "target": "target",
        "unit": "unit", "progress": "kind of progress", "kind": "kind of progress", "amount": "amount", "completed": "completion",
        "occurredAt": "time", "day": "day", "at": "time", "reminder": "reminder", "hour": "reminder hour", "minute": "reminder minute",
        "weekday": "reminder day", "devices": "list of devices", "tag": "tag", "tags": "tags", "timeZone": "time zone",
        "locale": "language and region", "firstWeekday": "first day of the week", "strategy": "reminder strategy",
        "windowDays": "reminder window", "capacity": "reminder limit", "status": "permission", "goal": "goal", "entry": "entry",
        "after": "position", "before": "position", "position": "position",
    ]
    /// One element of a list field (`tags[2]`) in words.
    static let elementNouns: [String: String] = ["tags": "tag", "devices": "device", "entries": "entry"]
}
