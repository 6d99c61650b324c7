import Foundation

/// An event as a caller submits it to `append`: the payload with optional id and wall time;
/// the ledger assigns the envelope.
public struct EventDraft: Equatable, Sendable {
    /// The event's id; nil: the ledger makes one from the event's clock reading (a version-7
    /// UUID: its milliseconds, its counter, then random bits), so the ids a store makes only grow
    /// and its id index takes them at one end. Submitting an id already stored appends nothing
    /// (the result says `duplicate`), so a retried batch is safe.
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
