import Foundation

/// The goal fields that `goalEdited` can change; each is its own last-writer register.
public enum GoalField: String, CaseIterable, Sendable, Comparable {
    /// ``GoalCreated/title``.
    case title
    /// ``GoalCreated/details``.
    case details
    /// ``GoalCreated/cadence``.
    case cadence
    /// ``GoalCreated/targetDate``.
    case targetDate
    /// ``GoalCreated/target``.
    case target
    /// ``GoalCreated/unit``.
    case unit
    public static func < (a: GoalField, b: GoalField) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}
