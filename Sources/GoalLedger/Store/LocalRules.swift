import Foundation

/// The business rules a store applies to its own device's new events, and the values it fills
/// in at append time (the replaced values, the observed tag adds, the entry's day).
///
/// Events that arrive from other devices are facts and never pass through here.
enum LocalRules {
    /// Checks `payload` against the goal's current state and returns it with every default filled in.
    static func prepare(
        _ payload: Payload, id: UUID, at: Instant, goal state: consuming GoalState?, author: DeviceState,
        schema: Int = LedgerStore.currentSchema, seen: SeenHeads = SeenHeads(), enrolling: Bool = false, trust: TrustState = TrustState()
    ) throws(FieldError) -> Payload {
        try payload.type.checkInCatalog(schema: schema)
        var context = LocalContext(at: at, author: author, enrolling: enrolling, trust: trust, seen: seen)
        if let goalID = payload.goal {
            // The state moves into the context: a goal's state is large, and is not copied.
            context.goal = state ?? GoalState(id: goalID)
            if case .goalCreated = payload {
                guard context.goal!.version == 0 else { throw FieldError("goal", "goal \(goalID.uuidString) already exists") }
            } else {
                try checkTarget(goalID, exists: context.goal!.exists, deleted: context.goal!.isDeleted, restores: payload.type == .goalRestored)
            }
        }
        // The payload type's own rules (`EventPayload.prepare`).
        var rules = Rules(context: context)
        var prepared = payload
        try prepared.modify(&rules)
        return prepared
    }

    /// `prepare` for a `progressRecorded`, from the few facts of the goal its rules read
    /// (`StoredProjection.Batch.progressFacts`) instead of a `GoalState`: the same checks in
    /// the same order, so the same event gets the same result or the same error.
    static func prepareProgress(
        _ p: inout ProgressRecorded, goal: ProgressGoalFacts, at: Instant, authorDays: inout ZoneDays, schema: Int
    ) throws(FieldError) {
        try EventType.progressRecorded.checkInCatalog(schema: schema)
        try checkTarget(p.goal, exists: goal.exists, deleted: goal.deleted, restores: false)
        try p.prepare(kind: goal.kind, at: at) { authorDays.day(of: $0) }
    }

    /// An event about an existing goal (any but its creation): the goal must exist, and be
    /// live unless the event restores it.
    private static func checkTarget(_ goalID: UUID, exists: Bool, deleted: Bool, restores: Bool) throws(FieldError) {
        guard exists else { throw FieldError.unknownGoal(goalID) }
        guard !deleted || restores else {
            throw FieldError("goal", "goal \(goalID.uuidString) is deleted; only goalRestored is accepted")
        }
    }

    private struct Rules: PayloadModifier {
        let context: LocalContext
        func modify<P: EventPayload>(_ payload: inout P, as type: EventType) throws(FieldError) {
            try payload.prepare(as: type, context)
        }
    }
}

/// What the rules for recording progress read of the goal: whether it exists, whether it is
/// deleted, and its kind.
struct ProgressGoalFacts {
    var exists: Bool
    var deleted: Bool
    var kind: ProgressKind
}
