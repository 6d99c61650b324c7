import Foundation

/// Turns a goal's reminder off (`reminderCleared`): writes no time (and no devices) to its
/// reminder register.
public struct ReminderCleared: Equatable, Sendable {
    /// The goal whose reminder is cleared.
    public var goal: UUID
    /// The reminder write the author replaced (filled in at append).
    public var replaces: UUID?

    /// The clearing of `goal`'s reminder, replacing the reminder write `replaces`.
    public init(goal: UUID, replaces: UUID? = nil) {
        self.goal = goal
        self.replaces = replaces
    }
}

extension ReminderCleared: GoalEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) { self.init(goal: try r.goal()) }

    var jsonMembers: [(String, JSONValue)] { GoalWriteForm(goal: goal, replaces: replaces).jsonMembers }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        let form = try GoalWriteForm(binary: &r, of: "reminderCleared")
        self.init(goal: form.goal, replaces: form.replaces)
    }

    func encode(into w: inout ByteWriter) { GoalWriteForm(goal: goal, replaces: replaces).encode(into: &w) }

    /// Nothing to check: the goal is an id, the rest is filled in at append.
    func checkWellFormed(_ stage: GateStage) throws(FieldError) {}

    /// Records the reminder write replaced.
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError) {
        replaces = state.reminder?.stamp.event
    }

    func registerWrites(as type: EventType) -> [RegisterWrite] {
        [RegisterWrite(register: .reminder, replaces: replaces, value: .null)]
    }

    /// Clearing the reminder changes the goal.
    func yieldsToDeletion(as type: EventType) -> Bool { true }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        AuditWrites(facts: [.register(.reminder)], replaced: [.reminder: replaces])
    }
}
