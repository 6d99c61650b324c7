import Foundation

/// The current state of every goal and device, as a pure fold of events.
///
/// Folding is order-independent: any two projections that folded the same set of events are
/// equal and encode to the same bytes, whatever order the events came in.
public struct GoalProjection: Equatable, Sendable {
    /// Every goal an event has named, by id, those whose `goalCreated` has not arrived
    /// included (``existingGoals`` leaves them out).
    public internal(set) var goals: [UUID: GoalState] = [:]
    /// Every device that wrote a device event, by name (``device(_:)`` answers for any).
    public internal(set) var devices: [String: DeviceState] = [:]
    /// The last local position folded (0 before any).
    public var position: UInt64 = 0
    /// How schema-1 history writes count: the store's schema decides.
    public let historyRule: HistoryRule

    /// Revoked devices and the last sequence of theirs that counts: their later events (held
    /// from before the revocation was known) are ignored, so that every store folds the same
    /// events whatever it received before it learned of the revocation.
    public var revokedAfter: [String: UInt64] = [:]

    /// Whether `revokedAfter` (see ``revokedAfter``) leaves out event `sequence` of `origin`:
    /// its device was revoked before it. Every fold, and `verify`'s sums, decide by it.
    static func isRevoked(origin: String, sequence: UInt64, _ revokedAfter: [String: UInt64]) -> Bool {
        guard !revokedAfter.isEmpty, let after = revokedAfter[origin] else { return false }
        return sequence > after
    }

    /// An empty projection that reads schema-1 history writes by `historyRule`.
    public init(historyRule: HistoryRule = .recordLevel) { self.historyRule = historyRule }

    /// Folds one event into its goal's state or its origin's device state; an event of a
    /// revoked device after its last counted sequence (``revokedAfter``) is ignored, and so is
    /// an event that fails the gate (``Event/checkWellFormed()``): such an event is set aside.
    public mutating func apply(_ e: Event) {
        guard e.isFoldable else { return }
        fold(e)
    }

    /// `apply` for an event the caller has passed through the gate already. `goalEvents`: how
    /// many events of the event's goal the caller will fold, when it knows (a goal's state made
    /// for its first one makes room for that many entries at once, rather than growing its
    /// table of entries again and again).
    mutating func fold(_ e: Event, goalEvents: Int = 0) {
        if Self.isRevoked(origin: e.origin, sequence: e.sequence, revokedAfter) { return }
        if let goal = e.payload.goal {
            goals[goal, default: GoalState(id: goal, rule: historyRule, entries: goalEvents)].apply(e)
        } else {
            devices[e.origin, default: DeviceState(name: e.origin)].apply(e)
        }
    }

    /// The state of device `name`: one that has reported nothing when it wrote no device event.
    public func device(_ name: String) -> DeviceState { devices[name] ?? DeviceState(name: name) }

    /// Goals that have been created, sorted by id.
    public var existingGoals: [GoalState] {
        goals.values.filter(\.exists).sorted { UUID.precedes($0.id, $1.id) }
    }

    /// The canonical encoding of the facts: the goals array the command line's `replay` prints.
    public var canonicalJSON: JSONValue { .array(existingGoals.map { $0.json }) }

    /// The digest of the facts, in hex, computed from scratch: equal for equal facts whatever
    /// the order events came in, and different when any fact differs. Per goal, SHA-256 of its
    /// canonical JSON without the entries, combined with an order-independent sum of its live
    /// entries' hashes; the ledger's digest combines the sum of the created goals' hashes and
    /// their number. A store maintains the same value as it folds (``LedgerSnapshot/digest()``).
    /// The construction, byte by byte, is in `docs/storage-and-guarantees.md` ("The digest").
    /// It tells honest stores that diverged apart; it is no defence against forgery, which the
    /// signatures are.
    public var digest: String {
        get throws(LedgerError) { try digestTotals().hex }
    }

    /// The digest's totals over the created goals.
    func digestTotals() throws(LedgerError) -> LedgerDigest {
        var totals = LedgerDigest()
        for g in goals.values where g.exists { totals.replace(nil, with: try ProjectionDigest.parts(of: g).goalHash) }
        return totals
    }

    /// Writes the canonical encoding (the bytes of `canonicalJSON`) in pieces, one goal at a
    /// time, so that the command line's `replay` never holds a large projection as one text.
    public func writeCanonicalJSON(_ sink: ([UInt8]) -> Void) throws(LedgerError) {
        var writer = CanonicalJSONWriter()
        for goal in existingGoals { try writer.goal(goal, sink) }
        writer.end(sink)
    }
}

/// Writes the canonical encoding (a JSON array of goal facts, sorted by id) one goal at a time.
struct CanonicalJSONWriter {
    private var buffer: [UInt8] = [UInt8(ascii: "[")]
    private var first = true

    /// Writes the next goal (goals must come in id order).
    mutating func goal(_ goal: GoalState, _ sink: ([UInt8]) -> Void) throws(LedgerError) {
        if !first { buffer.append(UInt8(ascii: ",")) }
        first = false
        try goal.writeJSON(into: &buffer)
        sink(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Closes the array.
    mutating func end(_ sink: ([UInt8]) -> Void) {
        buffer.append(UInt8(ascii: "]"))
        sink(buffer)
    }
}

extension GoalState {
    /// The facts of the goal in the JSON shape `replay` and `show` print (docs/command-line.md).
    public var json: JSONValue {
        .object(headerJSONMembers + [("entries", .array(entries.map { $0.json }))])
    }

    /// Writes `json` without building the entries' values: the bytes are the same.
    func writeJSON(into out: inout [UInt8]) throws(LedgerError) {
        try writeHeaderJSON(into: &out)
        out.removeLast()  // the closing brace: the entries follow
        out.append(contentsOf: #","entries":["#.utf8)
        for (i, e) in entries.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            try e.writeJSON(into: &out)
        }
        out.append(contentsOf: "]}".utf8)
    }

    /// `json` without its `entries` member: the goal's header, which the digest hashes apart
    /// from the entries (the bytes of `json` up to `,"entries":`, then `}`).
    func writeHeaderJSON(into out: inout [UInt8]) throws(LedgerError) {
        try JSONWriter.write(.object(headerJSONMembers), into: &out)
    }

    /// Every member of `json` but the entries, in order: the id, then each fact (the registers
    /// as the register table gives them, the progress kind with the progress registers, the tags).
    private var headerJSONMembers: [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [("id", .string(id.upperString))]
        var progress: [(String, JSONValue)] = [("kind", .string(kind.rawValue))]
        var progressAt: Int?
        for fact in GoalFact.all {
            switch fact {
            case .register(let register):
                let member = cell(register).json
                switch register.place {
                case .beforeTags, .afterTags:
                    if let member { members.append((register.rawValue, member)) }
                case .progress:
                    if progressAt == nil { progressAt = members.count }
                    if let member { progress.append((register.rawValue, member)) }
                }
            case .tags:
                members.append(("tags", .array(tags.map { .string($0) })))
            }
        }
        members.insert(("progress", .object(progress)), at: progressAt ?? members.count)
        return members
    }
}

extension ProgressEntry {
    /// The entry as a JSON object: `id`, `amount` or `completed` (whichever it has),
    /// `occurredAt`, `day`, `device`.
    public var json: JSONValue {
        var m: [(String, JSONValue)] = [("id", .string(id.upperString))]
        if let amount { m.append(("amount", .amount(amount))) }
        if let completed { m.append(("completed", .bool(completed))) }
        m.append(("occurredAt", .string(occurredAt.rfc3339)))
        m.append(("day", .string(day.description)))
        m.append(("device", .string(device)))
        return .object(m)
    }

    /// Writes `json` straight into `out` (the same bytes, without building the value).
    func writeJSON(into out: inout [UInt8]) throws(LedgerError) {
        out.append(contentsOf: #"{"id":""#.utf8)
        id.writeUpper(into: &out)
        out.append(UInt8(ascii: "\""))
        if let amount {
            out.append(contentsOf: #","amount":"#.utf8)
            out.append(contentsOf: amount.description.utf8)
        }
        if let completed { out.append(contentsOf: (completed ? #","completed":true"# : #","completed":false"#).utf8) }
        out.append(contentsOf: #","occurredAt":""#.utf8)
        occurredAt.writeRFC3339(into: &out)
        out.append(contentsOf: #"","day":""#.utf8)
        out.append(contentsOf: day.description.utf8)
        out.append(contentsOf: #"","device":"#.utf8)
        JSONWriter.writeString(device, into: &out)
        out.append(UInt8(ascii: "}"))
    }
}
