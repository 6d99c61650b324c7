import Foundation

/// How often a goal's progress resets.
public enum Cadence: String, CaseIterable, Sendable, Codable {
    /// Never: every entry counts towards the goal as a whole, which may have a target date.
    case once
    /// Each local day of the device that views it.
    case daily
    /// Each week, starting on the device's first weekday.
    case weekly
    /// Each calendar month.
    case monthly
    /// Each calendar year.
    case yearly
}
