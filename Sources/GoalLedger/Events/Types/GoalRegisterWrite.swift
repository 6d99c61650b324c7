import Foundation

/// An event about a goal that writes one register (deletion or reminder), with the event whose
/// value its author replaced.
public struct GoalRegisterWrite: Equatable, Sendable {
    /// The goal written.
    public var goal: UUID
    /// The write of the register the author replaced (filled in at append).
    public var replaces: UUID?
    /// For `goalDeleted`: the last origin sequence of each device its author's store held
    /// (filled in at append), so that changes made elsewhere without seeing the deletion can be
    /// told apart from changes the author had seen.
    public var seen: [String: UInt64] = [:]

    /// A write of `goal`'s register, replacing `replaces`.
    public init(goal: UUID, replaces: UUID? = nil, seen: [String: UInt64] = [:]) {
        self.goal = goal
        self.replaces = replaces
        self.seen = seen
    }
}

/// The payload of `goalDeleted`, `goalRestored` and `reminderCleared`: one form, three meanings.
extension GoalRegisterWrite: GoalEventPayload {
    static let schemas = [1, 2]

    /// What each event type carrying this payload writes.
    private enum Meaning {
        case deletion, restore, reminderCleared

        init(_ type: EventType) {
            switch type {
            case .goalDeleted: self = .deletion
            case .goalRestored: self = .restore
            case .reminderCleared: self = .reminderCleared
            default: preconditionFailure("\(type.name) does not carry a GoalRegisterWrite")
            }
        }

        /// The register written, and its new value as a conflict shows it.
        var register: (field: String, value: JSONValue) {
            switch self {
            case .deletion: ("deleted", .bool(true))
            case .restore: ("deleted", .bool(false))
            case .reminderCleared: ("reminder", .null)
            }
        }
    }

    init(json r: inout ObjectReader) throws(FieldError) { self.init(goal: try r.goal()) }

    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = [("goal", .id(goal))]
        if let r = replaces { m.append(("replaces", .id(r))) }
        if !seen.isEmpty { m.append(("seen", .sequences(seen))) }
        return m
    }

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

    /// Records the write replaced; a deletion also what its author's store held, and a restore
    /// needs a deleted goal.
    mutating func prepare(as type: EventType, goal state: GoalState, _ c: LocalContext) throws(FieldError) {
        switch Meaning(type) {
        case .deletion:
            replaces = state.deletion?.stamp.event
            seen = c.seen()
        case .restore:
            guard state.isDeleted else { throw FieldError("goal", "goal \(goal.uuidString) is not deleted") }
            replaces = state.deletion?.stamp.event
        case .reminderCleared:
            replaces = state.reminder?.stamp.event
        }
    }

    func registerWrites(as type: EventType) -> [RegisterWrite] {
        let register = Meaning(type).register
        return [RegisterWrite(field: register.field, replaces: replaces, value: register.value)]
    }

    /// Clearing the reminder changes the goal; deleting and restoring are the deletion register.
    func yieldsToDeletion(as type: EventType) -> Bool { Meaning(type) == .reminderCleared }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        let field = Meaning(type).register.field
        return AuditWrites(fields: [field], replaced: [field: replaces])
    }
}
