import Foundation

/// Restores a deleted goal (`goalRestored`): writes `false` to its deletion register.
public struct GoalRestored: Equatable, Sendable {
    /// The goal restored.
    public var goal: UUID
    /// The write of the deletion register the author replaced (filled in at append).
    public var replaces: UUID?

    /// The restore of `goal`, replacing the deletion write `replaces`.
    public init(goal: UUID, replaces: UUID? = nil) {
        self.goal = goal
        self.replaces = replaces
    }
}

extension GoalRestored: GoalEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) { self.init(goal: try r.goal()) }

    var jsonMembers: [(String, JSONValue)] { GoalWriteForm(goal: goal, replaces: replaces).jsonMembers }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        let form = try GoalWriteForm(binary: &r, of: "goalRestored")
        self.init(goal: form.goal, replaces: form.replaces)
    }

    func encode(into w: inout ByteWriter) { GoalWriteForm(goal: goal, replaces: replaces).encode(into: &w) }

    /// Nothing to check: the goal is an id, the rest is filled in at append.
    func checkWellFormed(_ stage: GateStage) throws(FieldError) {}

    /// Needs a deleted goal; records the deletion write replaced.
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError) {
        guard state.isDeleted else { throw FieldError("goal", "goal \(goal.uuidString) is not deleted") }
        replaces = state.deletion?.stamp.event
    }

    func registerWrites(as type: EventType) -> [RegisterWrite] {
        [RegisterWrite(register: .deleted, replaces: replaces, value: .bool(false))]
    }

    /// A restore is the deletion register itself.
    func yieldsToDeletion(as type: EventType) -> Bool { false }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        AuditWrites(facts: [.register(.deleted)], replaced: [.deleted: replaces])
    }
}
