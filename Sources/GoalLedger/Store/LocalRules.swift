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
                guard context.goal!.exists else { throw FieldError.unknownGoal(goalID) }
                if context.goal!.isDeleted {
                    guard case .goalRestored = payload else {
                        throw FieldError("goal", "goal \(goalID.uuidString) is deleted; only goalRestored is accepted")
                    }
                }
            }
        }
        // The payload type's own rules (`EventPayload.prepare`).
        var rules = Rules(context: context)
        var prepared = payload
        try prepared.modify(&rules)
        return prepared
    }

    private struct Rules: PayloadModifier {
        let context: LocalContext
        func modify<P: EventPayload>(_ payload: inout P, as type: EventType) throws(FieldError) {
            try payload.prepare(as: type, context)
        }
    }
}
