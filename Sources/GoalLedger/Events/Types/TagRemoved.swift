import Foundation

/// Removes a tag's adds its author had seen (`tagRemoved`); adds made elsewhere meanwhile keep it.
public struct TagRemoved: Equatable, Sendable {
    /// The goal untagged.
    public var goal: UUID
    /// The tag (compared in NFC).
    public var tag: String
    /// The adds of this tag the author had seen (filled in at append). Adds not listed here,
    /// made concurrently elsewhere, keep the tag: add wins.
    public var observed: [UUID]

    /// The removal of `tag` from `goal`, cancelling the adds `observed`.
    public init(goal: UUID, tag: String, observed: [UUID] = []) {
        self.goal = goal
        self.tag = tag
        self.observed = observed
    }
}

extension TagRemoved: GoalEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) {
        let g = try r.goal()
        self.init(goal: g, tag: try r.string("tag", required: true)!, observed: [])
    }

    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = [("goal", .id(goal)), ("tag", .string(tag))]
        if !observed.isEmpty { m.append(("observed", .array(observed.map { .id($0) }))) }
        return m
    }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        _ = try r.varint()
        self.init(goal: try r.uuid(), tag: try r.string())
        for _ in 0..<(try r.count()) { observed.append(try r.uuid()) }
    }

    func encode(into w: inout ByteWriter) {
        w.varint(0)
        w.uuid(goal)
        w.string(tag)
        w.varint(UInt64(observed.count))
        for id in observed { w.uuid(id) }
    }

    func checkWellFormed(_ stage: GateStage) throws(FieldError) { _ = try FieldRules.tag(tag, field: "tag") }

    /// The goal must have the tag; records the adds it cancels.
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError) {
        let adds = state.liveAdds(of: tag)
        guard !adds.isEmpty else { throw FieldError("tag", "goal \(goal.uuidString) has no tag \"\(tag)\"") }
        observed = adds
    }

    /// Tags are an add-wins set: a removal writes no register.
    func registerWrites(as type: EventType) -> [RegisterWrite] { [] }
    func yieldsToDeletion(as type: EventType) -> Bool { true }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        AuditWrites(facts: [.tags])
    }
}
