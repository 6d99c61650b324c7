import Foundation

/// The business rules a store applies to its own device's new events, and the values it fills
/// in at append time (the replaced values, the observed tag adds, the entry's day).
///
/// Events that arrive from other devices are facts and never pass through here.
enum LocalRules {
    /// Checks `payload` against the goal's current state and returns it with every default filled in.
    static func prepare(
        _ payload: Payload, id: UUID, at: Instant, goal state: GoalState?, author: DeviceState, schema: Int = LedgerStore.currentSchema,
        seen: @autoclosure () -> [String: UInt64] = [:]
    ) throws(FieldError) -> Payload {
        guard EventType.catalog(schema: schema).contains(payload.type) else {
            if payload.type == .progressHistoryReplaced {
                throw FieldError(
                    "type",
                    "progressHistoryReplaced belongs to schema 1; this store uses schema \(schema): record each entry with progressRecorded and remove one with progressRemoved"
                )
            }
            throw FieldError(
                "type",
                "\(payload.type.name) belongs to schema 2; this store uses schema 1 (progressHistoryReplaced): run `ledger migrate` to upgrade it"
            )
        }
        guard let goalID = payload.goal else { return payload }
        let state = state ?? GoalState(id: goalID)
        if case .goalCreated = payload {
            guard state.version == 0 else { throw FieldError("goal", "goal \(goalID.uuidString) already exists") }
            return payload
        }
        guard state.exists else { throw FieldError("goal", "unknown goal \(goalID.uuidString)") }
        if state.isDeleted {
            guard case .goalRestored = payload else {
                throw FieldError("goal", "goal \(goalID.uuidString) is deleted; only goalRestored is accepted")
            }
        }
        switch payload {
        case .goalCreated, .deviceConfigured, .notificationAuthorization:
            return payload
        case .goalEdited(var p):
            if state.kind == .outcome {
                if p.target != nil { throw FieldError("target", "the goal measures an outcome; its progress kind cannot change") }
                if p.unit != nil { throw FieldError("unit", "the goal measures an outcome; its progress kind cannot change") }
            }
            p.replaces = [:]
            for field in p.changedFields {
                if let stamp = state.stamp(of: field) { p.replaces[field] = stamp.event }
            }
            return .goalEdited(p)
        case .goalDeleted(var p):
            p.replaces = state.deletion?.stamp.event
            p.seen = seen()
            return .goalDeleted(p)
        case .goalRestored(var p):
            guard state.isDeleted else { throw FieldError("goal", "goal \(goalID.uuidString) is not deleted") }
            p.replaces = state.deletion?.stamp.event
            return .goalRestored(p)
        case .reminderSet(var p):
            let current = (state.reminder?.value ?? nil) ?? .default
            p.hour = p.hour ?? current.hour
            p.minute = p.minute ?? current.minute
            p.replaces = state.reminder?.stamp.event
            return .reminderSet(p)
        case .reminderCleared(var p):
            p.replaces = state.reminder?.stamp.event
            return .reminderCleared(p)
        case .progressRecorded(var p):
            switch state.kind {
            case .measurable where p.amount == nil:
                throw FieldError("completed", "the goal is measurable: record an amount, not completed")
            case .outcome where p.completed == nil:
                throw FieldError("amount", "the goal measures an outcome: record completed, not an amount")
            default: break
            }
            let occurred = p.occurredAt ?? at
            p.occurredAt = occurred
            if p.day == nil {
                // The entry's day in the author's zone must itself be a supported day.
                p.day = try FieldRules.day(occurred.day(in: author.calendar.timeZone), field: "occurredAt")
            }
            return .progressRecorded(p)
        case .progressRemoved(let p):
            guard state.isLiveEntry(p.entry) else {
                throw FieldError("entry", "goal \(goalID.uuidString) has no entry \(p.entry.uuidString)")
            }
            return payload
        case .tagAdded:
            return payload
        case .progressHistoryReplaced(var p):
            for (i, e) in p.entries.enumerated() {
                switch state.kind {
                case .measurable where e.amount == nil:
                    throw FieldError("entries[\(i)].completed", "the goal is measurable: record an amount, not completed")
                case .outcome where e.completed == nil:
                    throw FieldError("entries[\(i)].amount", "the goal measures an outcome: record completed, not an amount")
                default: break
                }
                if e.day == nil {
                    p.entries[i].day = try FieldRules.day(e.occurredAt.day(in: author.calendar.timeZone), field: "entries[\(i)].occurredAt")
                }
            }
            if let base = p.base, state.historyWrites[base] == nil {
                throw FieldError("base", "\(base.uuidString) is not a history write of goal \(goalID.uuidString)")
            }
            return .progressHistoryReplaced(p)
        case .tagRemoved(var p):
            let adds = state.liveAdds(of: p.tag)
            guard !adds.isEmpty else { throw FieldError("tag", "goal \(goalID.uuidString) has no tag \"\(p.tag)\"") }
            p.observed = adds
            return .tagRemoved(p)
        }
    }
}
