import Foundation

/// Removes one entry (`progressRemoved`); a removal wins over any concurrent change of it.
public struct ProgressRemoved: Equatable, Sendable {
    /// The goal the entry counts for.
    public var goal: UUID
    /// The entry removed: a `progressRecorded` event's id, or a schema-1 history entry's.
    public var entry: UUID

    /// The removal of `entry` of `goal`.
    public init(goal: UUID, entry: UUID) {
        self.goal = goal
        self.entry = entry
    }
}

extension ProgressRemoved: GoalEventPayload {
    static let schemas = [2]

    init(json r: inout ObjectReader) throws(FieldError) {
        let g = try r.goal()
        self.init(goal: g, entry: try r.uuid("entry", required: true)!)
    }

    var jsonMembers: [(String, JSONValue)] { [("goal", .id(goal)), ("entry", .id(entry))] }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        _ = try r.varint()
        self.init(goal: try r.uuid(), entry: try r.uuid())
    }

    func encode(into w: inout ByteWriter) {
        w.varint(0)
        w.uuid(goal)
        w.uuid(entry)
    }

    /// Nothing to check: both are ids.
    func checkWellFormed(_ stage: GateStage) throws(FieldError) {}

    /// The entry must be live.
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError) {
        guard state.isLiveEntry(entry) else {
            throw FieldError("entry", "goal \(goal.uuidString) has no entry \(entry.uuidString)")
        }
    }

    /// A removal wins over any concurrent change of the entry: it writes no register.
    func registerWrites(as type: EventType) -> [RegisterWrite] { [] }
    func yieldsToDeletion(as type: EventType) -> Bool { true }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        let removed = before.isLiveEntry(entry) ? before.recordedEntries[entry]?.json ?? .null : .null
        step.changes.append(AuditChange(field: "entry", before: removed, after: .null))
        return AuditWrites()
    }
}
