import Foundation

/// How often a goal's progress resets.
public enum Cadence: String, CaseIterable, Sendable, Codable {
    /// Never: every entry counts towards the goal as a whole, which may have a target date.
    case once
    /// Each local day of the device that views it.
    case daily
    /// Each week, starting on the device's first weekday.
    case weekly
    /// Each calendar month.
    case monthly
    /// Each calendar year.
    case yearly
}

/// How progress is measured: a completion flag, or an amount against a target.
public enum ProgressKind: String, CaseIterable, Sendable {
    /// Done or not: entries record `completed`.
    case outcome
    /// Entries record an `amount`, summed per period against the goal's `target`.
    case measurable
}

/// A reminder's local time of day (default 09:00).
public struct ReminderTime: Equatable, Hashable, Sendable {
    /// The hour, 0 to 23, in the time zone of the device that notifies.
    public private(set) var hour: Int
    /// The minute, 0 to 59.
    public private(set) var minute: Int
    /// 09:00, the time of a reminder set without one.
    public static let `default` = ReminderTime(unchecked: 9, 0)
    /// The time `hour`:`minute`; refuses an hour outside 0…23 or a minute outside 0…59,
    /// naming the field (`hour`, `minute`).
    public init(hour: Int, minute: Int) throws(FieldError) {
        try FieldRules.time(hour: hour, minute: minute, prefix: "")
        self.init(unchecked: hour, minute)
    }
    /// A time as stored or read from the JSON form: the gate checks it, not this initializer.
    init(unchecked hour: Int, _ minute: Int) {
        self.hour = hour
        self.minute = minute
    }
}

/// The goal fields that `goalEdited` can change; each is its own last-writer register.
public enum GoalField: String, CaseIterable, Sendable, Comparable {
    /// ``GoalCreated/title``.
    case title
    /// ``GoalCreated/details``.
    case details
    /// ``GoalCreated/cadence``.
    case cadence
    /// ``GoalCreated/targetDate``.
    case targetDate
    /// ``GoalCreated/target``.
    case target
    /// ``GoalCreated/unit``.
    case unit
    public static func < (a: GoalField, b: GoalField) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// How a device schedules goal reminders: one repeating request per goal, or dated requests
/// for the next `windowDays` days.
public enum NotificationStrategy: String, CaseIterable, Sendable {
    /// One calendar request per goal that repeats at the start of each period (a one-time goal:
    /// on its target date), at the reminder time.
    case repeating
    /// Dated one-time requests for the period starts in the next ``DeviceConfigured/windowDays``
    /// days (a one-time goal: its target date), none for a period already completed.
    case window
}

/// What a device reported of its notification permission (as the OS names it).
public enum AuthorizationStatus: String, CaseIterable, Sendable {
    /// The user has not been asked yet: the device schedules nothing.
    case notDetermined
    /// The user refused: the device schedules nothing, and its goal reminders are reported as
    /// `permissionDenied`.
    case denied
    /// The user allowed notifications.
    case authorized
    /// Allowed to deliver quietly, until the user decides: schedules as `authorized` does.
    case provisional
    /// Allowed for a limited time (an App Clip): schedules as `authorized` does.
    case ephemeral
}

// MARK: Payloads

/// What an event says, by type. Each case's payload type lives in its own file under
/// `Events/Types/` and conforms to `EventPayload`; the switches below are the only places that
/// list the cases (see `docs/extending.md`).
public enum Payload: Equatable, Sendable {
    /// A new goal (`goalCreated`).
    case goalCreated(GoalCreated)
    /// A change of goal fields (`goalEdited`).
    case goalEdited(GoalEdited)
    /// A goal deleted (`goalDeleted`): its events stay, and a restore brings it back.
    case goalDeleted(GoalRegisterWrite)
    /// A deleted goal restored (`goalRestored`).
    case goalRestored(GoalRegisterWrite)
    /// A goal's reminder set or moved (`reminderSet`).
    case reminderSet(ReminderSet)
    /// A goal's reminder turned off (`reminderCleared`).
    case reminderCleared(GoalRegisterWrite)
    /// One progress entry (`progressRecorded`, schema 2).
    case progressRecorded(ProgressRecorded)
    /// A progress entry taken back (`progressRemoved`, schema 2).
    case progressRemoved(ProgressRemoved)
    /// A tag put on a goal (`tagAdded`).
    case tagAdded(TagAdded)
    /// A tag taken off a goal (`tagRemoved`).
    case tagRemoved(TagRemoved)
    /// A device's settings (`deviceConfigured`).
    case deviceConfigured(DeviceConfigured)
    /// A device's notification permission (`notificationAuthorization`).
    case notificationAuthorization(NotificationAuthorization)
    /// A goal's whole progress history, as schema 1 wrote it (`progressHistoryReplaced`); never
    /// appended to a schema-2 store.
    case progressHistoryReplaced(ProgressHistoryReplaced)
    /// A device's signing key enrolled (`deviceEnrolled`); written by the store itself, never
    /// appended by a caller.
    case deviceEnrolled(DeviceEnrolled)
    /// A device revoked (`deviceRevoked`).
    case deviceRevoked(DeviceRevoked)

    /// The event type the payload is the body of.
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

    /// Calls `v` with the payload in its concrete type: the one switch every operation on a
    /// payload goes through.
    @inline(__always)
    func visit<V: PayloadVisitor>(_ v: inout V) throws(V.Failure) -> V.Result {
        switch self {
        case .goalCreated(let p): return try v.visit(p, as: .goalCreated)
        case .goalEdited(let p): return try v.visit(p, as: .goalEdited)
        case .goalDeleted(let p): return try v.visit(p, as: .goalDeleted)
        case .goalRestored(let p): return try v.visit(p, as: .goalRestored)
        case .reminderSet(let p): return try v.visit(p, as: .reminderSet)
        case .reminderCleared(let p): return try v.visit(p, as: .reminderCleared)
        case .progressRecorded(let p): return try v.visit(p, as: .progressRecorded)
        case .progressRemoved(let p): return try v.visit(p, as: .progressRemoved)
        case .tagAdded(let p): return try v.visit(p, as: .tagAdded)
        case .tagRemoved(let p): return try v.visit(p, as: .tagRemoved)
        case .deviceConfigured(let p): return try v.visit(p, as: .deviceConfigured)
        case .notificationAuthorization(let p): return try v.visit(p, as: .notificationAuthorization)
        case .progressHistoryReplaced(let p): return try v.visit(p, as: .progressHistoryReplaced)
        case .deviceEnrolled(let p): return try v.visit(p, as: .deviceEnrolled)
        case .deviceRevoked(let p): return try v.visit(p, as: .deviceRevoked)
        }
    }

    /// Lets `m` change the payload in its concrete type; on a throw the payload is unchanged.
    mutating func modify<M: PayloadModifier>(_ m: inout M) throws(M.Failure) {
        switch self {
        case .goalCreated(let p): self = .goalCreated(try m.modified(p, as: .goalCreated))
        case .goalEdited(let p): self = .goalEdited(try m.modified(p, as: .goalEdited))
        case .goalDeleted(let p): self = .goalDeleted(try m.modified(p, as: .goalDeleted))
        case .goalRestored(let p): self = .goalRestored(try m.modified(p, as: .goalRestored))
        case .reminderSet(let p): self = .reminderSet(try m.modified(p, as: .reminderSet))
        case .reminderCleared(let p): self = .reminderCleared(try m.modified(p, as: .reminderCleared))
        case .progressRecorded(let p): self = .progressRecorded(try m.modified(p, as: .progressRecorded))
        case .progressRemoved(let p): self = .progressRemoved(try m.modified(p, as: .progressRemoved))
        case .tagAdded(let p): self = .tagAdded(try m.modified(p, as: .tagAdded))
        case .tagRemoved(let p): self = .tagRemoved(try m.modified(p, as: .tagRemoved))
        case .deviceConfigured(let p): self = .deviceConfigured(try m.modified(p, as: .deviceConfigured))
        case .notificationAuthorization(let p): self = .notificationAuthorization(try m.modified(p, as: .notificationAuthorization))
        case .progressHistoryReplaced(let p): self = .progressHistoryReplaced(try m.modified(p, as: .progressHistoryReplaced))
        case .deviceEnrolled(let p): self = .deviceEnrolled(try m.modified(p, as: .deviceEnrolled))
        case .deviceRevoked(let p): self = .deviceRevoked(try m.modified(p, as: .deviceRevoked))
        }
    }

    /// The goal the event is about, or nil for device events.
    public var goal: UUID? {
        struct GoalOf: PayloadVisitor {
            @inline(__always)
            func visit<P: EventPayload>(_ payload: P, as type: EventType) -> UUID? { payload.aboutGoal }
        }
        var v = GoalOf()
        return visit(&v)
    }
}

/// The event types, with their stable one-byte codes in the binary encoding.
public enum EventType: UInt8, CaseIterable, Sendable {
    /// ``GoalCreated``: a new goal.
    case goalCreated = 1
    /// ``GoalEdited``: goal fields changed.
    case goalEdited = 2
    /// ``GoalRegisterWrite``: a goal deleted.
    case goalDeleted = 3
    /// ``GoalRegisterWrite``: a deleted goal restored.
    case goalRestored = 4
    /// ``ReminderSet``: a goal's reminder set.
    case reminderSet = 5
    /// ``GoalRegisterWrite``: a goal's reminder cleared.
    case reminderCleared = 6
    /// ``ProgressRecorded``: one progress entry (schema 2).
    case progressRecorded = 7
    /// ``ProgressRemoved``: a progress entry removed (schema 2).
    case progressRemoved = 8
    /// ``TagAdded``: a tag added to a goal.
    case tagAdded = 9
    /// ``TagRemoved``: a tag removed from a goal.
    case tagRemoved = 10
    /// ``DeviceConfigured``: a device's settings.
    case deviceConfigured = 11
    /// ``NotificationAuthorization``: a device's notification permission.
    case notificationAuthorization = 12
    /// ``ProgressHistoryReplaced``: a goal's whole progress history (schema 1 only).
    case progressHistoryReplaced = 13
    /// ``DeviceEnrolled``: a device's signing key enrolled (written by the store only).
    case deviceEnrolled = 14
    /// ``DeviceRevoked``: a device revoked.
    case deviceRevoked = 15

    /// The type's name in the JSON form.
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

    /// The payload type of events of this type.
    var payloadType: any EventPayload.Type {
        switch self {
        case .goalCreated: return GoalCreated.self
        case .goalEdited: return GoalEdited.self
        case .goalDeleted, .goalRestored, .reminderCleared: return GoalRegisterWrite.self
        case .reminderSet: return ReminderSet.self
        case .progressRecorded: return ProgressRecorded.self
        case .progressRemoved: return ProgressRemoved.self
        case .tagAdded: return TagAdded.self
        case .tagRemoved: return TagRemoved.self
        case .deviceConfigured: return DeviceConfigured.self
        case .notificationAuthorization: return NotificationAuthorization.self
        case .progressHistoryReplaced: return ProgressHistoryReplaced.self
        case .deviceEnrolled: return DeviceEnrolled.self
        case .deviceRevoked: return DeviceRevoked.self
        }
    }

    /// A payload of this type, read by `m` (a decoder of the binary or the JSON form).
    func make<M: PayloadMaker>(_ m: inout M) throws(M.Failure) -> Payload {
        switch self {
        case .goalCreated: return .goalCreated(try m.make(GoalCreated.self))
        case .goalEdited: return .goalEdited(try m.make(GoalEdited.self))
        case .goalDeleted: return .goalDeleted(try m.make(GoalRegisterWrite.self))
        case .goalRestored: return .goalRestored(try m.make(GoalRegisterWrite.self))
        case .reminderSet: return .reminderSet(try m.make(ReminderSet.self))
        case .reminderCleared: return .reminderCleared(try m.make(GoalRegisterWrite.self))
        case .progressRecorded: return .progressRecorded(try m.make(ProgressRecorded.self))
        case .progressRemoved: return .progressRemoved(try m.make(ProgressRemoved.self))
        case .tagAdded: return .tagAdded(try m.make(TagAdded.self))
        case .tagRemoved: return .tagRemoved(try m.make(TagRemoved.self))
        case .deviceConfigured: return .deviceConfigured(try m.make(DeviceConfigured.self))
        case .notificationAuthorization: return .notificationAuthorization(try m.make(NotificationAuthorization.self))
        case .progressHistoryReplaced: return .progressHistoryReplaced(try m.make(ProgressHistoryReplaced.self))
        case .deviceEnrolled: return .deviceEnrolled(try m.make(DeviceEnrolled.self))
        case .deviceRevoked: return .deviceRevoked(try m.make(DeviceRevoked.self))
        }
    }

    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })

    /// The event types of each schema's catalog, in code order. Each payload type lists its
    /// schemas explicitly (`EventPayload.schemas`), so that a new type joins a schema only by
    /// saying so.
    public static func catalog(schema: Int) -> [EventType] {
        allCases.filter { $0.schemas.contains(schema) }
    }

    /// The type named `name` in the JSON form, if any.
    public init?(name: String) {
        guard let t = Self.byName[name] else { return nil }
        self = t
    }
}

/// The position of an event in canonical order: hybrid logical clock, then origin device.
public struct CanonicalKey: Comparable, Hashable, Sendable {
    /// The event's clock reading.
    public var hlc: HLC
    /// The event's origin device, which breaks ties between equal readings (by UTF-8 bytes).
    public var device: String
    /// Whether `a` comes before `b`: the earlier clock reading, then the device name by UTF-8 bytes.
    public static func < (a: CanonicalKey, b: CanonicalKey) -> Bool {
        a.hlc != b.hlc ? a.hlc < b.hlc : a.device.utf8.lexicographicallyPrecedes(b.device.utf8)
    }
}

/// A hybrid logical clock reading: 48 bits of milliseconds and a 16-bit counter.
public struct HLC: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The reading as stored: milliseconds in the high 48 bits, the counter in the low 16.
    public var rawValue: UInt64
    /// The reading stored as `rawValue`.
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// The reading at `milliseconds` since 1970 (a negative value counts as 0) with `counter`.
    public init(milliseconds: Int64, counter: UInt16) {
        rawValue = UInt64(clamping: max(0, milliseconds)) << 16 | UInt64(counter)
    }
    /// The wall-clock part, in milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64 { Int64(rawValue >> 16) }
    /// Orders readings within one millisecond.
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }
    /// Whether `a` is the earlier reading.
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

    /// The reading printed as `description`; nil unless `hex` is exactly 16 hex digits.
    public init?(hex: String) {
        guard hex.count == 16, let v = UInt64(hex, radix: 16) else { return nil }
        rawValue = v
    }
}

/// One stored event: the envelope of SPEC section 2 and its payload.
public struct Event: Equatable, Sendable {
    /// The event's id, unique in the ledger; a progress entry's id is its event's.
    public var id: UUID
    /// The device that wrote the event.
    public var origin: String
    /// The event's number among its origin's events: 1, 2, 3, … without gaps.
    public var sequence: UInt64
    /// The origin's clock when it appended the event: with `origin`, its place in canonical
    /// order (``key``), which decides every last-writer-wins value.
    public var hlc: HLC
    /// The author's wall time of the event: the draft's `at`, else the `now` of its append.
    public var at: Instant
    /// The event schema it was written under: 1 (the old app's) or 2.
    public var schema: UInt8
    /// What the event says.
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
    /// The Ed25519 signature (64 bytes) of ``EventChain/message(ledger:origin:sequence:hash:)``
    /// for this event; nil except on the last event of a signed batch.
    public var signature: [UInt8]?
    /// The Ed25519 public key (32 bytes) that made `signature`; nil when it is.
    public var signer: [UInt8]?

    /// An event with every envelope field given, as a codec or a test builds it (``LedgerStore``
    /// fills them in at append).
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

    /// The event's type, as its payload says.
    public var type: EventType { payload.type }
    /// The event's place in canonical order: its clock reading, then its origin.
    public var key: CanonicalKey { CanonicalKey(hlc: hlc, device: origin) }
}

/// An event as a caller submits it to `append`: the payload with optional id and wall time;
/// the ledger assigns the envelope.
public struct EventDraft: Equatable, Sendable {
    /// The event's id; nil: the ledger makes one. Submitting an id already stored appends
    /// nothing (the result says `duplicate`), so a retried batch is safe.
    public var id: UUID?
    /// The event's wall time; nil: the `now` given to `append`.
    public var at: Instant? { didSet { passedGate = false } }
    /// What the event says (fields marked "filled in at append" may be left out).
    public var payload: Payload { didSet { passedGate = false } }
    /// Whether the draft passed the gate as it is now (read from JSON, unchanged since), so that
    /// `append` does not check it twice.
    var passedGate = false
    /// The input line the draft was read from (`init(line:number:)`), so that errors name it;
    /// nil for a draft built as a value, which errors name by its place in the batch.
    public var line: Int?
    /// A draft of `payload`, with an id and a wall time when the caller has them.
    public init(id: UUID? = nil, at: Instant? = nil, payload: Payload) {
        self.id = id
        self.at = at
        self.payload = payload
    }

    /// Drafts are equal when they say the same: where they were read from does not count.
    public static func == (a: EventDraft, b: EventDraft) -> Bool { a.id == b.id && a.at == b.at && a.payload == b.payload }
}
