import Foundation

/// A value an event wrote, with what the field held before.
public struct AuditChange: Equatable, Sendable {
    /// What changed: a member of the goal's JSON form (`title`, `details`, `cadence`,
    /// `targetDate`, `target`, `unit`, `reminder`, `tags`, `deleted`), or `entry` for a progress
    /// entry recorded or removed.
    public var field: String
    /// The value before the event, in the JSON form; null when unset (or no entry).
    public var before: JSONValue
    /// The value after the event, in the JSON form; null when unset (or the entry removed).
    public var after: JSONValue
}

/// A value of one event that another event overwrote without its author having seen it.
public struct AuditOverwrite: Equatable, Sendable {
    /// The field written by both (as ``AuditChange/field`` names it).
    public var field: String
    /// The other event: the one overwritten (in ``AuditStep/overwrote``), or the one that
    /// overwrote (in ``AuditStep/supersededBy``).
    public var event: UUID
    /// The other event's origin device.
    public var device: String
    /// The value the other event wrote, in the JSON form.
    public var value: JSONValue
}

/// One event in a goal's history, as `audit` shows it.
public struct AuditStep: Sendable {
    /// The event's position in this store's log.
    public var position: UInt64
    /// The event.
    public var event: Event
    /// What the event wrote, each field with its value before and after.
    public var changes: [AuditChange] = []
    /// Values this event overwrote that its author had not seen (concurrent edits it won).
    public var overwrote: [AuditOverwrite] = []
    /// This event's values that a concurrent event, later in canonical order, overwrote.
    public var supersededBy: [AuditOverwrite] = []
    /// For a schema-1 history write: the entries it added relative to its base.
    public var historyAdded: [UUID] = []
    /// For a schema-1 history write: the entries of its base it left out (read as removals).
    public var historyRemoved: [UUID] = []
    /// For a schema-1 history write: those of its additions the schema-1 view had lost, which
    /// migration recovered.
    public var recovered: [UUID] = []
    /// The fingerprint of the key that signs the event's chain, or nil for an event written
    /// before its device signed.
    public var signedBy: String?
}

/// Replays one goal's events in canonical order and explains each one.
public enum GoalAudit {
    /// One step per event, in canonical order, for the events of one goal with their log
    /// positions (in any order); empty for none. The steps' `signedBy` is left nil
    /// (``LedgerSnapshot/audit(goal:)`` fills it in).
    public static func steps(_ events: [(position: UInt64, event: Event)]) -> [AuditStep] {
        let ordered = events.sorted { $0.event.key < $1.event.key }
        guard let goal = ordered.first?.event.payload.goal else { return [] }
        var state = GoalState(id: goal)
        var final = GoalState(id: goal)
        for (_, e) in ordered { final.apply(e) }
        // Entries the schema-1 view lost and record-level reading brings back; an entry removed
        // afterwards was still recovered, so removals are not counted here.
        var unremoved = final
        unremoved.removedEntries = []
        let lost = Set(unremoved.entries(under: .recordLevel).map(\.id)).subtracting(unremoved.entries(under: .lastWriteWins).map(\.id))
        var steps: [AuditStep] = []
        var stepIndex: [UUID: Int] = [:]
        for (position, e) in ordered {
            var step = AuditStep(position: position, event: e)
            let before = facts(state)
            // A progress entry reads nothing of the state before it: not copying the state then
            // keeps a long history linear (a copy would duplicate every entry at each step).
            let recordsProgress: Bool
            if case .progressRecorded = e.payload { recordsProgress = true } else { recordsProgress = false }
            let beforeState = recordsProgress ? GoalState(id: goal) : state
            state.apply(e)
            let after = facts(state)
            // The payload type says what the event writes (`EventPayload.audit`).
            let writes = e.payload.body.audit(as: e.type, &step, before: beforeState, after: state, lost: lost)
            let replaced = writes.replaced
            for fact in writes.facts {
                let name = fact.name
                if writes.omitsUnset, after[fact] == .null { continue }  // unset optional fields
                step.changes.append(AuditChange(field: name, before: before[fact] ?? .null, after: after[fact] ?? .null))
                // Whoever held the register before: if the author replaced someone else, the
                // holder's value was overwritten unseen (a concurrent edit).
                guard case .register(let register) = fact, let expected = replaced[register],
                    let holder = beforeState.stamp(of: register), expected != holder.event
                else { continue }
                let overwrite = AuditOverwrite(field: name, event: holder.event, device: holder.key.device, value: before[fact] ?? .null)
                step.overwrote.append(overwrite)
                if let i = stepIndex[holder.event] {
                    steps[i].supersededBy.append(AuditOverwrite(field: name, event: e.id, device: e.origin, value: after[fact] ?? .null))
                }
            }
            stepIndex[e.id] = steps.count
            steps.append(step)
        }
        return steps
    }

    /// Each live entry under `rule`, the event it came from (its `progressRecorded`, or the
    /// schema-1 history write that added it), and whether the schema-1 view had lost it.
    public static func entrySources(_ events: [Event], rule: HistoryRule) -> [(entry: ProgressEntry, event: UUID, recovered: Bool)] {
        guard let goal = events.first?.payload.goal else { return [] }
        var state = GoalState(id: goal, rule: rule)
        var byKey: [CanonicalKey: UUID] = [:]
        for e in events {
            state.apply(e)
            byKey[e.key] = e.id
        }
        let schema1 = Set(state.entries(under: .lastWriteWins).map(\.id))
        return state.entries.map { entry in
            let recovered = !state.historyWrites.isEmpty && !state.recordedEntries.contains(entry.id) && !schema1.contains(entry.id)
            return (entry, byKey[entry.key] ?? entry.id, recovered)
        }
    }

    /// The audited facts of `g`: each register's value as the register table gives it, and the
    /// tags (the goal's JSON form without the entries, which a long history would otherwise
    /// rebuild at every step); empty before the goal exists.
    static func facts(_ g: GoalState) -> [GoalFact: JSONValue] {
        guard g.exists else { return [:] }
        var facts: [GoalFact: JSONValue] = [.tags: .array(g.tags.map { .string($0) })]
        for register in GoalRegister.allCases { facts[.register(register)] = g.cell(register).value }
        return facts
    }
}

extension AuditStep {
    /// The step as a JSON object: `position`, `event` (its id), `type`, `device`, `sequence`,
    /// `at`, `hlc`, `changes`, `overwrote`, `supersededBy`, `historyAdded`, `historyRemoved`,
    /// `recovered` and `signedBy` (null when unsigned).
    public var json: JSONValue {
        func overwrite(_ o: AuditOverwrite) -> JSONValue {
            .object([
                ("field", .string(o.field)), ("event", .string(o.event.uuidString)), ("device", .string(o.device)), ("value", o.value),
            ])
        }
        return .object([
            ("position", .number(Double(position))),
            ("event", .string(event.id.uuidString)),
            ("type", .string(event.type.name)),
            ("device", .string(event.origin)),
            ("sequence", .number(Double(event.sequence))),
            ("at", .string(event.at.rfc3339)),
            ("hlc", .string(event.hlc.description)),
            ("changes", .array(changes.map { .object([("field", .string($0.field)), ("before", $0.before), ("after", $0.after)]) })),
            ("overwrote", .array(overwrote.map(overwrite))),
            ("supersededBy", .array(supersededBy.map(overwrite))),
            ("historyAdded", .array(historyAdded.map { .string($0.upperString) })),
            ("historyRemoved", .array(historyRemoved.map { .string($0.upperString) })),
            ("recovered", .array(recovered.map { .string($0.upperString) })),
            ("signedBy", signedBy.map { .string($0) } ?? .null),
        ])
    }
}

extension LedgerSnapshot {
    /// Every change to `goal`, in canonical order.
    public func audit(goal: UUID) throws(LedgerError) -> [AuditStep] {
        let trust = try trustState()
        return GoalAudit.steps(try events(ofGoal: goal)).map { step in
            var step = step
            if step.event.previousHash != nil {
                // The key the ledger's trust gives the origin at that sequence (rotations included).
                step.signedBy = trust.key(step.event.origin, at: step.event.sequence).map(EventChain.fingerprint)
            }
            return step
        }
    }
}
