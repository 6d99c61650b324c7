import Foundation

/// Adds a tag to a goal (`tagAdded`).
public struct TagAdded: Equatable, Sendable {
    /// The goal tagged.
    public var goal: UUID
    /// The tag (1 to 64 characters, not blank; compared in NFC).
    public var tag: String

    /// The add of `tag` to `goal`.
    public init(goal: UUID, tag: String) {
        self.goal = goal
        self.tag = tag
    }
}

extension TagAdded: GoalEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) {
        let g = try r.goal()
        self.init(goal: g, tag: try r.string("tag", required: true)!)
    }

    var jsonMembers: [(String, JSONValue)] { [("goal", .id(goal)), ("tag", .string(tag))] }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        _ = try r.varint()
        self.init(goal: try r.uuid(), tag: try r.string())
    }

    func encode(into w: inout ByteWriter) {
        w.varint(0)
        w.uuid(goal)
        w.string(tag)
    }

    func checkWellFormed(_ stage: GateStage) throws(FieldError) { _ = try FieldRules.tag(tag, field: "tag") }

    /// Any live goal takes any tag.
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError) {}

    /// Tags are an add-wins set: an add writes no register.
    func registerWrites(as type: EventType) -> [RegisterWrite] { [] }
    func yieldsToDeletion(as type: EventType) -> Bool { true }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        AuditWrites(facts: [.tags])
    }
}
