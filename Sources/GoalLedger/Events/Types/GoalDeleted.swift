import Foundation

/// Deletes a goal (`goalDeleted`): its events stay, and a `goalRestored` brings it back. Writes
/// the goal's deletion register, and records what its author's store held so that changes made
/// elsewhere without seeing the deletion can be told apart from changes the author had seen.
public struct GoalDeleted: Equatable, Sendable {
    /// The goal deleted.
    public var goal: UUID
    /// The write of the deletion register the author replaced (filled in at append).
    public var replaces: UUID?
    /// The last origin sequence of each device its author's store held (filled in at append).
    public var seen: [String: UInt64]

    /// The deletion of `goal`, replacing the deletion write `replaces`, its author having held
    /// `seen`.
    public init(goal: UUID, replaces: UUID? = nil, seen: [String: UInt64] = [:]) {
        self.goal = goal
        self.replaces = replaces
        self.seen = seen
    }
}

extension GoalDeleted: GoalEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) { self.init(goal: try r.goal()) }

    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = [("goal", .id(goal))]
        if let r = replaces { m.append(("replaces", .id(r))) }
        if !seen.isEmpty { m.append(("seen", .sequences(seen))) }
        return m
    }

    /// A presence bitmask (`replaces`, `seen`), the goal, the replaced write, then the sequences
    /// seen sorted by device.
    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        var f = PresenceReader(try r.varint())
        self.init(goal: try r.uuid(), replaces: f.take() ? try r.uuid() : nil)
        if f.take() {
            for _ in 0..<(try r.count()) {
                let device = try r.string()
                seen[device] = try r.varint()
            }
        }
    }

    func encode(into w: inout ByteWriter) {
        w.varint((replaces == nil ? 0 : 1) | (seen.isEmpty ? 0 : 2))
        w.uuid(goal)
        if let r = replaces { w.uuid(r) }
        if !seen.isEmpty {
            let seen = seen.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            w.varint(UInt64(seen.count))
            for (device, sequence) in seen {
                w.string(device)
                w.varint(sequence)
            }
        }
    }

    /// Nothing to check: the goal is an id, the rest is filled in at append.
    func checkWellFormed(_ stage: GateStage) throws(FieldError) {}

    /// Records the deletion write replaced and what its author's store held.
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError) {
        replaces = state.deletion?.stamp.event
        seen = c.seen()
    }

    func registerWrites(as type: EventType) -> [RegisterWrite] {
        [RegisterWrite(register: .deleted, replaces: replaces, value: .bool(true))]
    }

    /// A deletion is the deletion register itself.
    func yieldsToDeletion(as type: EventType) -> Bool { false }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        AuditWrites(facts: [.register(.deleted)], replaced: [.deleted: replaces])
    }
}
