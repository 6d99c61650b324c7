import Foundation

/// How progress is measured: a completion flag, or an amount against a target.
public enum ProgressKind: String, CaseIterable, Sendable {
    /// Done or not: entries record `completed`.
    case outcome
    /// Entries record an `amount`, summed per period against the goal's `target`.
    case measurable
}
