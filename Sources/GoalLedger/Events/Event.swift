import Foundation

/// How often a goal's progress resets.
public enum Cadence: String, CaseIterable, Sendable, Codable {
    case once, daily, weekly, monthly, yearly
}

/// How progress is measured: a completion flag, or an amount against a target.
public enum ProgressKind: String, CaseIterable, Sendable { case outcome, measurable }

/// A reminder's local time of day (default 09:00).
public struct ReminderTime: Equatable, Hashable, Sendable {
    public var hour: Int
    public var minute: Int
    public static let `default` = ReminderTime(hour: 9, minute: 0)
    public init(hour: Int, minute: Int) {
        self.hour = hour
        self.minute = minute
    }
}

/// The goal fields that `goalEdited` can change; each is its own last-writer register.
public enum GoalField: String, CaseIterable, Sendable, Comparable {
    case title, details, cadence, targetDate, target, unit
    public static func < (a: GoalField, b: GoalField) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// How a device schedules goal reminders: one repeating request per goal, or dated requests
/// for the next `windowDays` days.
public enum NotificationStrategy: String, CaseIterable, Sendable { case repeating, window }

/// What a device reported of its notification permission (as the OS names it).
public enum AuthorizationStatus: String, CaseIterable, Sendable {
    case notDetermined, denied, authorized, provisional, ephemeral
}

// MARK: Payloads

/// A new goal and its first values (`goalCreated`).
public struct GoalCreated: Equatable, Sendable {
    public var goal: UUID
    public var title: String
    public var details: String?
    public var cadence: Cadence
    public var targetDate: Day?
    public var progressKind: ProgressKind
    public var target: Double?
    public var unit: String?
    public var reminder: ReminderTime?
    public var tags: [String]
    /// The devices that should notify (`reminder.devices`); nil: every device.
    public var reminderDevices: [String]?

    public init(
        goal: UUID, title: String, details: String? = nil, cadence: Cadence = .once, targetDate: Day? = nil,
        progressKind: ProgressKind = .outcome, target: Double? = nil, unit: String? = nil,
        reminder: ReminderTime? = nil, tags: [String] = [], reminderDevices: [String]? = nil
    ) {
        self.goal = goal
        self.title = title
        self.details = details
        self.cadence = cadence
        self.targetDate = targetDate
        self.progressKind = progressKind
        self.target = target
        self.unit = unit
        self.reminder = reminder
        self.tags = tags
        self.reminderDevices = reminderDevices
    }
}

/// A change of one or more fields. `nil` means "not changed"; `.some(nil)` clears an optional field.
public struct GoalEdited: Equatable, Sendable {
    public var goal: UUID
    public var title: String?
    public var details: String??
    public var cadence: Cadence?
    public var targetDate: Day??
    public var target: Double?
    public var unit: String??
    /// For each changed field, the event whose value the author replaced (filled in at append).
    public var replaces: [GoalField: UUID]

    public var changedFields: [GoalField] {
        var fields: [GoalField] = []
        if title != nil { fields.append(.title) }
        if details != nil { fields.append(.details) }
        if cadence != nil { fields.append(.cadence) }
        if targetDate != nil { fields.append(.targetDate) }
        if target != nil { fields.append(.target) }
        if unit != nil { fields.append(.unit) }
        return fields
    }

    public init(
        goal: UUID, title: String? = nil, details: String?? = nil, cadence: Cadence? = nil, targetDate: Day?? = nil,
        target: Double? = nil, unit: String?? = nil, replaces: [GoalField: UUID] = [:]
    ) {
        self.goal = goal
        self.title = title
        self.details = details
        self.cadence = cadence
        self.targetDate = targetDate
        self.target = target
        self.unit = unit
        self.replaces = replaces
    }
}

/// An event about a goal that writes one register (deletion or reminder), with the event whose
/// value its author replaced.
public struct GoalRegisterWrite: Equatable, Sendable {
    public var goal: UUID
    public var replaces: UUID?
    /// For `goalDeleted`: the last origin sequence of each device its author's store held
    /// (filled in at append), so that changes made elsewhere without seeing the deletion can be
    /// told apart from changes the author had seen.
    public var seen: [String: UInt64] = [:]

    public init(goal: UUID, replaces: UUID? = nil, seen: [String: UInt64] = [:]) {
        self.goal = goal
        self.replaces = replaces
        self.seen = seen
    }
}

/// Turns a goal's reminder on or changes its time (`reminderSet`).
public struct ReminderSet: Equatable, Sendable {
    public var goal: UUID
    /// Omitted components keep the current time, or default to 09:00 (filled in at append).
    public var hour: Int?
    public var minute: Int?
    public var replaces: UUID?
    /// The devices that should notify; nil: every device (not "keep the current list").
    public var devices: [String]?

    public init(goal: UUID, hour: Int? = nil, minute: Int? = nil, replaces: UUID? = nil, devices: [String]? = nil) {
        self.goal = goal
        self.hour = hour
        self.minute = minute
        self.replaces = replaces
        self.devices = devices
    }
}

/// One progress entry (`progressRecorded`): an amount, or whether the goal was done; its id is
/// the event's.
public struct ProgressRecorded: Equatable, Sendable {
    public var goal: UUID
    public var amount: Double?
    public var completed: Bool?
    /// Defaults to the event's `at` (filled in at append).
    public var occurredAt: Instant?
    /// Defaults to `occurredAt`'s day in the author's time zone (filled in at append).
    public var day: Day?

    public init(goal: UUID, amount: Double? = nil, completed: Bool? = nil, occurredAt: Instant? = nil, day: Day? = nil) {
        self.goal = goal
        self.amount = amount
        self.completed = completed
        self.occurredAt = occurredAt
        self.day = day
    }
}

/// Removes one entry (`progressRemoved`); a removal wins over any concurrent change of it.
public struct ProgressRemoved: Equatable, Sendable {
    public var goal: UUID
    public var entry: UUID

    public init(goal: UUID, entry: UUID) {
        self.goal = goal
        self.entry = entry
    }
}

/// Adds a tag to a goal (`tagAdded`).
public struct TagAdded: Equatable, Sendable {
    public var goal: UUID
    public var tag: String

    public init(goal: UUID, tag: String) {
        self.goal = goal
        self.tag = tag
    }
}

/// Removes a tag's adds its author had seen (`tagRemoved`); adds made elsewhere meanwhile keep it.
public struct TagRemoved: Equatable, Sendable {
    public var goal: UUID
    public var tag: String
    /// The adds of this tag the author had seen (filled in at append). Adds not listed here,
    /// made concurrently elsewhere, keep the tag: add wins.
    public var observed: [UUID]

    public init(goal: UUID, tag: String, observed: [UUID] = []) {
        self.goal = goal
        self.tag = tag
        self.observed = observed
    }
}

/// A device's own settings (`deviceConfigured`): time zone, first weekday, locale and how it
/// schedules reminders.
public struct DeviceConfigured: Equatable, Sendable {
    public var timeZone: String
    public var firstWeekday: Int
    public var locale: String
    public var strategy: NotificationStrategy
    public var windowDays: Int
    public var capacity: Int

    public static let defaults = DeviceConfigured(
        timeZone: "UTC", firstWeekday: 1, locale: "en_US", strategy: .repeating, windowDays: 7, capacity: 64)

    public init(
        timeZone: String, firstWeekday: Int = 1, locale: String = "en_US", strategy: NotificationStrategy = .repeating,
        windowDays: Int = 7, capacity: Int = 64
    ) {
        self.timeZone = timeZone
        self.firstWeekday = firstWeekday
        self.locale = locale
        self.strategy = strategy
        self.windowDays = windowDays
        self.capacity = capacity
    }
}

/// One entry of a schema-1 progress history: its own id (not an event id), and the value.
public struct HistoryEntry: Equatable, Sendable {
    public var id: UUID
    public var amount: Double?
    public var completed: Bool?
    public var occurredAt: Instant
    /// Defaults to `occurredAt`'s day in the author's time zone (filled in at append).
    public var day: Day?

    public init(id: UUID, amount: Double? = nil, completed: Bool? = nil, occurredAt: Instant, day: Day? = nil) {
        self.id = id
        self.amount = amount
        self.completed = completed
        self.occurredAt = occurredAt
        self.day = day
    }
}

/// Schema 1: the whole progress history of a goal, written at once. `base` is the history write
/// its author had read before writing, if the old app recorded it.
public struct ProgressHistoryReplaced: Equatable, Sendable {
    public var goal: UUID
    public var entries: [HistoryEntry]
    public var base: UUID?

    public init(goal: UUID, entries: [HistoryEntry], base: UUID? = nil) {
        self.goal = goal
        self.entries = entries
        self.base = base
    }
}

/// A device's public key enters the ledger: events of `device` from sequence `from` on are
/// signed with it. Written by `init` (a device enrolling itself, the ledger's first trust), by
/// `clone` (the source device enrolling the new one) and by the migration that starts signing.
public struct DeviceEnrolled: Equatable, Sendable {
    public var device: String
    /// The Ed25519 public key (32 bytes).
    public var publicKey: [UInt8]
    public var from: UInt64

    public init(device: String, publicKey: [UInt8], from: UInt64) {
        self.device = device
        self.publicKey = publicKey
        self.from = from
    }
}

/// A device leaves the ledger: its events after sequence `after` (the last its revoker's store
/// held, filled in at append) are refused by every store that learns of the revocation.
public struct DeviceRevoked: Equatable, Sendable {
    public var device: String
    public var after: UInt64

    public init(device: String, after: UInt64 = 0) {
        self.device = device
        self.after = after
    }
}

/// A device's notification permission, as it reported it (`notificationAuthorization`).
public struct NotificationAuthorization: Equatable, Sendable {
    public var status: AuthorizationStatus

    public init(status: AuthorizationStatus) { self.status = status }
}

/// What an event says, by type.
public enum Payload: Equatable, Sendable {
    case goalCreated(GoalCreated)
    case goalEdited(GoalEdited)
    case goalDeleted(GoalRegisterWrite)
    case goalRestored(GoalRegisterWrite)
    case reminderSet(ReminderSet)
    case reminderCleared(GoalRegisterWrite)
    case progressRecorded(ProgressRecorded)
    case progressRemoved(ProgressRemoved)
    case tagAdded(TagAdded)
    case tagRemoved(TagRemoved)
    case deviceConfigured(DeviceConfigured)
    case notificationAuthorization(NotificationAuthorization)
    case progressHistoryReplaced(ProgressHistoryReplaced)
    case deviceEnrolled(DeviceEnrolled)
    case deviceRevoked(DeviceRevoked)

    public var type: EventType {
        switch self {
        case .goalCreated: return .goalCreated
        case .goalEdited: return .goalEdited
        case .goalDeleted: return .goalDeleted
        case .goalRestored: return .goalRestored
        case .reminderSet: return .reminderSet
        case .reminderCleared: return .reminderCleared
        case .progressRecorded: return .progressRecorded
        case .progressRemoved: return .progressRemoved
        case .tagAdded: return .tagAdded
        case .tagRemoved: return .tagRemoved
        case .deviceConfigured: return .deviceConfigured
        case .notificationAuthorization: return .notificationAuthorization
        case .progressHistoryReplaced: return .progressHistoryReplaced
        case .deviceEnrolled: return .deviceEnrolled
        case .deviceRevoked: return .deviceRevoked
        }
    }

    /// The goal the event is about, or nil for device events.
    public var goal: UUID? {
        switch self {
        case .goalCreated(let p): return p.goal
        case .goalEdited(let p): return p.goal
        case .goalDeleted(let p), .goalRestored(let p), .reminderCleared(let p): return p.goal
        case .reminderSet(let p): return p.goal
        case .progressRecorded(let p): return p.goal
        case .progressRemoved(let p): return p.goal
        case .tagAdded(let p): return p.goal
        case .tagRemoved(let p): return p.goal
        case .progressHistoryReplaced(let p): return p.goal
        case .deviceConfigured, .notificationAuthorization, .deviceEnrolled, .deviceRevoked: return nil
        }
    }
}

/// The event types, with their stable one-byte codes in the binary encoding.
public enum EventType: UInt8, CaseIterable, Sendable {
    case goalCreated = 1
    case goalEdited = 2
    case goalDeleted = 3
    case goalRestored = 4
    case reminderSet = 5
    case reminderCleared = 6
    case progressRecorded = 7
    case progressRemoved = 8
    case tagAdded = 9
    case tagRemoved = 10
    case deviceConfigured = 11
    case notificationAuthorization = 12
    /// Schema 1 only.
    case progressHistoryReplaced = 13
    case deviceEnrolled = 14
    case deviceRevoked = 15

    public var name: String {
        switch self {
        case .goalCreated: return "goalCreated"
        case .goalEdited: return "goalEdited"
        case .goalDeleted: return "goalDeleted"
        case .goalRestored: return "goalRestored"
        case .reminderSet: return "reminderSet"
        case .reminderCleared: return "reminderCleared"
        case .progressRecorded: return "progressRecorded"
        case .progressRemoved: return "progressRemoved"
        case .tagAdded: return "tagAdded"
        case .tagRemoved: return "tagRemoved"
        case .deviceConfigured: return "deviceConfigured"
        case .notificationAuthorization: return "notificationAuthorization"
        case .progressHistoryReplaced: return "progressHistoryReplaced"
        case .deviceEnrolled: return "deviceEnrolled"
        case .deviceRevoked: return "deviceRevoked"
        }
    }

    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })

    /// The event types of each schema's catalog. The device events belong to every schema.
    /// Listed explicitly, so that a new type joins a schema only by being written here.
    public static func catalog(schema: Int) -> [EventType] {
        let common: [EventType] = [
            .goalCreated, .goalEdited, .goalDeleted, .goalRestored, .reminderSet, .reminderCleared, .tagAdded, .tagRemoved,
            .deviceConfigured, .notificationAuthorization, .deviceEnrolled, .deviceRevoked,
        ]
        switch schema {
        case 1: return common + [.progressHistoryReplaced]
        default: return common + [.progressRecorded, .progressRemoved]
        }
    }

    public init?(name: String) {
        guard let t = Self.byName[name] else { return nil }
        self = t
    }
}

/// The position of an event in canonical order: hybrid logical clock, then origin device.
public struct CanonicalKey: Comparable, Hashable, Sendable {
    public var hlc: HLC
    public var device: String
    public static func < (a: CanonicalKey, b: CanonicalKey) -> Bool {
        a.hlc != b.hlc ? a.hlc < b.hlc : a.device.utf8.lexicographicallyPrecedes(b.device.utf8)
    }
}

/// A hybrid logical clock reading: 48 bits of milliseconds and a 16-bit counter.
public struct HLC: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(milliseconds: Int64, counter: UInt16) {
        rawValue = UInt64(clamping: max(0, milliseconds)) << 16 | UInt64(counter)
    }
    public var milliseconds: Int64 { Int64(rawValue >> 16) }
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }
    public static func < (a: HLC, b: HLC) -> Bool { a.rawValue < b.rawValue }

    /// The next reading after `self` for a local event at wall time `now`: never earlier than
    /// `now`, always later than `self`.
    public func advanced(to now: Instant) -> HLC {
        let wall = HLC(milliseconds: now.milliseconds, counter: 0)
        return wall > self ? wall : HLC(rawValue: rawValue + 1)
    }

    /// Sixteen hex digits: sorts as the clock does, and survives JSON readers that lose
    /// precision past 2^53.
    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    public init?(hex: String) {
        guard hex.count == 16, let v = UInt64(hex, radix: 16) else { return nil }
        rawValue = v
    }
}

/// One stored event: the envelope of SPEC section 2 and its payload.
public struct Event: Equatable, Sendable {
    public var id: UUID
    public var origin: String
    public var sequence: UInt64
    public var hlc: HLC
    public var at: Instant
    public var schema: UInt8
    public var payload: Payload
    /// For an event about a goal: the deletions and restores of that goal its author's store
    /// held when it was appended, as the last origin sequence of each device that wrote one
    /// (filled in at append; empty when the goal had none). A change is concurrent with a
    /// deletion exactly when this does not cover the deletion and the deletion's `seen` does
    /// not cover the change. Nil for events stored before the ledger recorded it (codec 1).
    public var deletionsSeen: [String: UInt64]?
    /// The signed hash chain of the event's origin: the BLAKE2b hash of the origin's previous
    /// event (32 zero bytes before the first), and on the last event of each appended batch the
    /// author's Ed25519 signature of that event's hash with the public key that made it (see
    /// `EventChain`). Nil on events written before the origin signed.
    public var previousHash: [UInt8]?
    public var signature: [UInt8]?
    public var signer: [UInt8]?

    public init(
        id: UUID, origin: String, sequence: UInt64, hlc: HLC, at: Instant, schema: UInt8, payload: Payload,
        deletionsSeen: [String: UInt64]? = nil, previousHash: [UInt8]? = nil, signature: [UInt8]? = nil, signer: [UInt8]? = nil
    ) {
        self.id = id
        self.origin = origin
        self.sequence = sequence
        self.hlc = hlc
        self.at = at
        self.schema = schema
        self.payload = payload
        self.deletionsSeen = deletionsSeen
        self.previousHash = previousHash
        self.signature = signature
        self.signer = signer
    }

    /// Whether the author of this event had seen `deletion` (an event of another device); nil
    /// when the event was stored without that record.
    public func hadSeen(_ deletion: Event) -> Bool? {
        deletionsSeen.map { ($0[deletion.origin] ?? 0) >= deletion.sequence }
    }

    public var type: EventType { payload.type }
    public var key: CanonicalKey { CanonicalKey(hlc: hlc, device: origin) }
}

/// An event as a caller submits it to `append`: the payload with optional id and wall time;
/// the ledger assigns the envelope.
public struct EventDraft: Equatable, Sendable {
    public var id: UUID?
    public var at: Instant?
    public var payload: Payload
    public init(id: UUID? = nil, at: Instant? = nil, payload: Payload) {
        self.id = id
        self.at = at
        self.payload = payload
    }
}
