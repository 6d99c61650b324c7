import Foundation

/// How a goal's progress is counted: done or not per period, or amounts against a target.
public enum GoalProgress: Hashable, Sendable {
    /// Each period is done or not (`recordCompletion`).
    case outcome
    /// Amounts add up against `target` per period (`recordProgress`), in `unit`.
    case measurable(target: Amount, unit: String? = nil)
}
