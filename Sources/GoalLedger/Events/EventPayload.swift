import Foundation

/// The body of an event type: each payload type says, in its own file under `Events/Types/`,
/// everything the ledger does with it by type: which schemas' catalogs hold it, its JSON
/// reading and writing, its binary form, its well-formedness, the rules and filled-in values of
/// a local append, and its roles in conflicts, audits, device state and trust.
///
/// The central places dispatch through one switch in `Event.swift` (`Payload.visit`,
/// `Payload.modify`, `EventType.make`) with the payload's concrete type, so hot paths (the
/// codec, the fold) neither box a payload nor dispatch dynamically. Each event type has its own
/// payload type; members still take the event type. See `docs/extending.md`.
///
/// Conform through `GoalEventPayload` or `DeviceEventPayload`, which supply the members that
/// follow from that choice.
protocol EventPayload: Equatable, Sendable {
    /// The schemas whose catalogs hold this payload's event types, listed explicitly: a type
    /// joins a schema only by being listed here.
    static var schemas: [Int] { get }

    /// The goal the event is about, or nil for a device event.
    var aboutGoal: UUID? { get }

    /// Reads the payload's members of an event's JSON form (the envelope's members are read
    /// already), checking their shape only: types, unknown and missing members. Limits are
    /// the gate's (`checkWellFormed`).
    init(json r: inout ObjectReader) throws(FieldError)
    /// The payload's members in their JSON form, in a stable order.
    var jsonMembers: [(String, JSONValue)] { get }

    /// Reads the stored form `encode(into:)` writes.
    init(binary r: inout ByteReader) throws(RecordDecodingError)
    /// Writes the stored form: a presence bitmask (varint) of the optional fields, then the
    /// fields in a fixed order. Never change it for stored types: new optional fields take new
    /// bits; the golden-record test pins the bytes.
    func encode(into w: inout ByteWriter)

    /// The gate (see `GateStage`): every limit of every field, naming the field by its path in
    /// the JSON form; at `.stored`, also that every field the ledger fills in at append is
    /// present.
    func checkWellFormed(_ stage: GateStage) throws(FieldError)

    /// Applies the business rules to a new event of the store's own device and fills in what
    /// the ledger fills in at append (replaced values, observed adds, an entry's day).
    mutating func prepare(as type: EventType, _ c: LocalContext) throws(FieldError)

    /// The registers the event writes, as conflict detection groups them: two writes that
    /// replaced the same value are concurrent. No default: every type says.
    func registerWrites(as type: EventType) -> [RegisterWrite]
    /// Whether a concurrent deletion overwrites the event (a change of the goal's facts). No
    /// default: every type says.
    func yieldsToDeletion(as type: EventType) -> Bool

    /// What the event writes, as `audit` shows it; extra changes (entries, history) go into
    /// `step`. `before` is the goal's state before the event (empty for a `progressRecorded`,
    /// which reads none), `after` the state after it; `lost` holds the entries the schema-1
    /// view had lost.
    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites

    /// Folds a device event into its device's state.
    func fold(into device: inout DeviceState, _ stamp: Stamp)
    /// What the event says about trust (enrolled keys, revocations).
    var trustChange: TrustChange? { get }
}

/// A payload about one goal (`goal`). Such events touch neither device state nor trust.
protocol GoalEventPayload: EventPayload {
    var goal: UUID { get }
    /// The rules of a local append, given the goal's state: `LocalRules` has checked already
    /// that the goal exists (is new, for a creation) and is not deleted (but for a restore).
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError)
}

extension GoalEventPayload {
    var aboutGoal: UUID? { goal }

    mutating func prepare(as type: EventType, _ c: LocalContext) throws(FieldError) {
        // LocalRules sets the checked state of every goal event's goal.
        try prepare(as: type, goal: c.goal!, c)
    }

    func fold(into device: inout DeviceState, _ stamp: Stamp) {}
    var trustChange: TrustChange? { nil }
}

/// A payload about the device that wrote it: not part of any goal's history, so it writes no
/// goal register and has nothing to audit.
protocol DeviceEventPayload: EventPayload {}

extension DeviceEventPayload {
    var aboutGoal: UUID? { nil }
    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        AuditWrites()
    }
}

// MARK: Roles

/// What the rules of a local append read: the new event's time, its author's settings, the
/// goal's checked state and what the author's store holds.
struct LocalContext {
    var at: Instant
    var author: DeviceState
    /// Whether the store itself writes the event (init, clone, migrate): only then is a
    /// `deviceEnrolled` accepted.
    var enrolling: Bool
    /// The ledger's trust as the author's store holds it (read only for a batch that revokes).
    var trust = TrustState()
    /// For a goal event, the goal's state, checked by `LocalRules`; nil for a device event.
    var goal: GoalState?
    /// The last origin sequence of each device the author's store holds.
    var seen = SeenHeads()
}

/// The last origin sequence of each device the author's store holds: the heads the store held
/// before the batch, and the author's own sequence so far in it, merged only when a rule asks
/// (`seen()`), not for every event of a batch.
struct SeenHeads {
    var heads: [String: UInt64] = [:]
    var own: (device: String, sequence: UInt64)?

    func callAsFunction() -> [String: UInt64] {
        guard let own else { return heads }
        var merged = heads
        merged[own.device] = own.sequence
        return merged
    }
}

/// One register write as conflict detection sees it.
struct RegisterWrite {
    /// The register written.
    var register: GoalRegister
    /// The write whose value the author replaced; nil when it replaced none (no conflict).
    var replaces: UUID?
    /// The value written, as the conflict shows it.
    var value: JSONValue
}

/// The facts an event writes as `audit` shows them (registers and tags), and for each register
/// the write its author replaced (an unseen holder was overwritten concurrently).
struct AuditWrites {
    var facts: [GoalFact] = []
    /// For each register written, the write its author replaced (nil: none); a register not
    /// listed is not checked for an overwrite.
    var replaced: [GoalRegister: UUID?] = [:]
    /// Leave out facts the event leaves unset (a creation's optional fields).
    var omitsUnset = false
}

/// What an event written to the log says about trust.
package enum TrustChange: Equatable, Sendable {
    /// `device`'s events from sequence `from` on are signed with `publicKey`.
    case enrolled(device: String, from: UInt64, publicKey: [UInt8])
    /// `device`'s events after `after` are refused, and those of each device below it after
    /// the sequence `descendants` gives (0 for one it does not list).
    case revoked(device: String, after: UInt64, descendants: [String: UInt64])
}

// MARK: Dispatch

/// An operation on a payload of any type, called with its concrete type (see `Payload.visit`).
protocol PayloadVisitor {
    associatedtype Result
    associatedtype Failure: Error = Never
    mutating func visit<P: EventPayload>(_ payload: P, as type: EventType) throws(Failure) -> Result
}

/// A change of a payload of any type in place (see `Payload.modify`).
protocol PayloadModifier {
    associatedtype Failure: Error
    mutating func modify<P: EventPayload>(_ payload: inout P, as type: EventType) throws(Failure)
}

extension PayloadModifier {
    /// `payload` as `modify` changes it.
    mutating func modified<P: EventPayload>(_ payload: P, as type: EventType) throws(Failure) -> P {
        var payload = payload
        try modify(&payload, as: type)
        return payload
    }
}

/// A source of payloads of any type: a decoder (see `EventType.make`).
protocol PayloadMaker {
    associatedtype Failure: Error
    mutating func make<P: EventPayload>(_: P.Type) throws(Failure) -> P
}

extension Payload {
    /// The payload as its type's conformance, for the places that are not hot (audit,
    /// conflicts): it boxes the payload.
    var body: any EventPayload {
        struct Box: PayloadVisitor {
            func visit<P: EventPayload>(_ payload: P, as type: EventType) -> any EventPayload { payload }
        }
        var v = Box()
        return visit(&v)
    }

    /// The registers the event writes (see `EventPayload.registerWrites`).
    var registerWrites: [RegisterWrite] {
        struct Writes: PayloadVisitor {
            func visit<P: EventPayload>(_ payload: P, as type: EventType) -> [RegisterWrite] { payload.registerWrites(as: type) }
        }
        var v = Writes()
        return visit(&v)
    }

    /// Whether a concurrent deletion overwrites the event (see `EventPayload.yieldsToDeletion`).
    var yieldsToDeletion: Bool {
        struct Yields: PayloadVisitor {
            func visit<P: EventPayload>(_ payload: P, as type: EventType) -> Bool { payload.yieldsToDeletion(as: type) }
        }
        var v = Yields()
        return visit(&v)
    }

    /// Folds a device event into its device's state (see `EventPayload.fold`).
    func fold(into device: inout DeviceState, _ stamp: Stamp) {
        // The visitor reaches the state through a pointer: a copy would cost a copy per event.
        struct Fold: PayloadVisitor {
            let device: UnsafeMutablePointer<DeviceState>
            let stamp: Stamp
            func visit<P: EventPayload>(_ payload: P, as type: EventType) { payload.fold(into: &device.pointee, stamp) }
        }
        withUnsafeMutablePointer(to: &device) { device in
            var v = Fold(device: device, stamp: stamp)
            visit(&v)
        }
    }

    /// What the event says about trust.
    package var trustChange: TrustChange? {
        struct Trust: PayloadVisitor {
            func visit<P: EventPayload>(_ payload: P, as type: EventType) -> TrustChange? { payload.trustChange }
        }
        var v = Trust()
        return visit(&v)
    }
}

extension EventType {
    /// The schemas whose catalogs hold this type, as its payload type lists them.
    var schemas: [Int] { payloadType.schemas }

    /// Refuses a type outside the catalog of `schema`, naming what the store takes instead.
    func checkInCatalog(schema: Int) throws(FieldError) {
        guard !schemas.contains(schema) else { return }
        if self == .progressHistoryReplaced {
            throw FieldError(
                "type",
                "progressHistoryReplaced belongs to schema 1; this store uses schema \(schema): record each entry with progressRecorded and remove one with progressRemoved"
            )
        }
        throw FieldError(
            "type", "\(name) belongs to schema 2; this store uses schema 1 (progressHistoryReplaced): migrate the store to upgrade it")
    }
}
