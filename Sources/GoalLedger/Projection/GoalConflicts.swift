import Foundation

/// One side of a conflict: an event and the value it wrote.
public struct ConflictSide: Equatable, Sendable {
    /// The event's id.
    public var event: UUID
    /// The event's origin device.
    public var device: String
    /// The value it wrote, in the JSON form. In a `deleted` conflict: `true` for the deletion,
    /// and for each change it overwrote, an object of the change's `type` and payload members.
    public var value: JSONValue

    /// `{"event","device","value"}`.
    public var json: JSONValue {
        .object([("event", .string(event.uuidString)), ("device", .string(device)), ("value", value)])
    }
}

/// Concurrent changes and how they resolved (<doc:ProjectionsAndTheChangeFeed>).
public struct Conflict: Equatable, Sendable {
    /// The goal.
    public var goal: UUID
    /// The register written concurrently, or ``GoalRegister/deleted`` for a deletion against
    /// concurrent changes. Printed (and in `json`) as its raw value.
    public var field: GoalRegister
    /// The write that holds: the last in canonical order, or the deletion.
    public var winner: ConflictSide
    /// The concurrent writes it overwrote, in canonical order.
    public var overwritten: [ConflictSide]

    /// `{"goal","field","winner","overwritten"}`.
    public var json: JSONValue {
        .object([
            ("goal", .string(goal.uuidString)), ("field", .string(field.rawValue)), ("winner", winner.json),
            ("overwritten", .array(overwritten.map(\.json))),
        ])
    }
}

/// Finds the conflicts in one goal's events.
///
/// - Two writes of one register (a field, the reminder, deletion) are concurrent when both
///   replaced the same value: neither author had seen the other's write. The later in canonical
///   order won; the others were overwritten.
/// - A change is concurrent with a deletion when the deleting store had not seen it (the
///   deletion records the origin sequences it had seen) and its author had not seen the
///   deletion (every change records the deletions and restores of its goal its author held,
///   `deletionsSeen`), whatever restores followed and wherever the clocks put it. The deletion
///   wins; the changes stay in the history and come back with a later restore. Changes stored
///   before the ledger recorded `deletionsSeen` fall back to canonical order: before the
///   deletion, or after it with no restore in between.
public enum GoalConflicts {
    /// The conflicts among the events of one goal (in any order; empty for none): those of
    /// each register, in ``GoalRegister`` order; then the deletions against unseen changes, in
    /// canonical order.
    public static func find(_ events: [Event]) -> [Conflict] {
        let ordered = events.sorted { $0.key < $1.key }
        guard let goal = ordered.first?.payload.goal else { return [] }
        var conflicts: [Conflict] = []

        // Register writes grouped by the value they replaced.
        struct Write {
            var event: Event
            var value: JSONValue
        }
        var groups: [GoalRegister: [UUID: [Write]]] = [:]
        // Each payload type says which registers it writes (`EventPayload.registerWrites`).
        for e in ordered {
            for w in e.payload.registerWrites {
                guard let replaces = w.replaces else { continue }
                groups[w.register, default: [:]][replaces, default: []].append(Write(event: e, value: w.value))
            }
        }
        for field in GoalRegister.allCases where groups[field] != nil {
            for (_, writes) in groups[field]!.sorted(by: { $0.value[0].event.key < $1.value[0].event.key }) where writes.count > 1 {
                let sorted = writes.sorted { $0.event.key < $1.event.key }
                let w = sorted.last!
                conflicts.append(
                    Conflict(
                        goal: goal, field: field, winner: ConflictSide(event: w.event.id, device: w.event.origin, value: w.value),
                        overwritten: sorted.dropLast().map { ConflictSide(event: $0.event.id, device: $0.event.origin, value: $0.value) }))
            }
        }

        // Deletions against changes their author had not seen. Each payload type says whether
        // a deletion overwrites it (`EventPayload.yieldsToDeletion`).
        for (i, d) in ordered.enumerated() {
            guard case .goalDeleted(let deletion) = d.payload else { continue }
            var overwritten: [ConflictSide] = []
            for (j, e) in ordered.enumerated() where e.origin != d.origin {
                guard e.payload.yieldsToDeletion else { continue }
                guard e.sequence > deletion.seen[e.origin] ?? 0 else { continue }  // the deleting store had seen it
                if let seen = e.hadSeen(d) {
                    if seen { continue }
                } else if j > i {
                    let restoredBetween = ordered[(i + 1)..<j].contains {
                        if case .goalRestored = $0.payload { return true } else { return false }
                    }
                    if restoredBetween { continue }
                }
                var change = e.payload.jsonMembers.filter { $0.0 != "goal" && $0.0 != "replaces" && $0.0 != "observed" }
                change.insert(("type", .string(e.type.name)), at: 0)
                overwritten.append(ConflictSide(event: e.id, device: e.origin, value: .object(change)))
            }
            if !overwritten.isEmpty {
                conflicts.append(
                    Conflict(
                        goal: goal, field: .deleted, winner: ConflictSide(event: d.id, device: d.origin, value: .bool(true)),
                        overwritten: overwritten))
            }
        }
        return conflicts
    }
}

extension LedgerSnapshot {
    /// The conflicts of one goal, or of every goal (sorted by goal id).
    public func conflicts(goal: UUID? = nil) throws(LedgerError) -> [Conflict] {
        let goals: [UUID]
        if let goal { goals = [goal] } else { goals = try projection().existingGoals.map(\.id) }
        var out: [Conflict] = []
        for g in goals { out += GoalConflicts.find(try events(ofGoal: g).map(\.event)) }
        return out
    }
}
