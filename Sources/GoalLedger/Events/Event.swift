import Foundation

/// One stored event: its envelope (id, origin, sequence, clock, wall time, schema, chain and
/// signature) and its payload.
public struct Event: Equatable, Sendable {
    /// The event's id, unique in the ledger; a progress entry's id is its event's.
    public var id: UUID
    /// The device that wrote the event.
    public var origin: String
    /// The event's number among its origin's events: 1, 2, 3, … without gaps.
    public var sequence: UInt64

    /// The largest origin sequence a store or a hub holds (2^63 − 1, a hub's `bigint`): a
    /// record, a change set or a sync state naming a larger one is refused as it is read.
    public static let largestSequence = UInt64(Int64.max)
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
