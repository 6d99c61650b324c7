import Foundation

/// The business rules a store applies to its own device's new events, and the values it fills
/// in at append time (the replaced values, the observed tag adds, the entry's day).
///
/// Events that arrive from other devices are facts and never pass through here.
enum LocalRules {
    /// Checks `payload` against the goal's current state and returns it with every default filled in.
    static func prepare(
        _ payload: Payload, id: UUID, at: Instant, goal state: GoalState?, author: DeviceState, schema: Int = LedgerStore.currentSchema,
        seen: @autoclosure () -> [String: UInt64] = [:], enrolling: Bool = false, trust: TrustState = TrustState()
    ) throws(FieldError) -> Payload {
        try payload.type.checkInCatalog(schema: schema)
        var goal: GoalState?
        if let goalID = payload.goal {
            let state = state ?? GoalState(id: goalID)
            if case .goalCreated = payload {
                guard state.version == 0 else { throw FieldError("goal", "goal \(goalID.uuidString) already exists") }
            } else {
                guard state.exists else { throw FieldError.unknownGoal(goalID) }
                if state.isDeleted {
                    guard case .goalRestored = payload else {
                        throw FieldError("goal", "goal \(goalID.uuidString) is deleted; only goalRestored is accepted")
                    }
                }
            }
            goal = state
        }
        // The payload type's own rules (`EventPayload.prepare`).
        return try withoutActuallyEscaping(seen) { (seen) throws(FieldError) in
            var rules = Rules(context: LocalContext(at: at, author: author, enrolling: enrolling, trust: { trust }, goal: goal, seen: seen))
            var prepared = payload
            try prepared.modify(&rules)
            return prepared
        }
    }

    private struct Rules: PayloadModifier {
        let context: LocalContext
        func modify<P: EventPayload>(_ payload: inout P, as type: EventType) throws(FieldError) {
            try payload.prepare(as: type, context)
        }
    }
}
