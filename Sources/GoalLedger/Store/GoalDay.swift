import Foundation

/// A goal's day: a key of `touchedDays`.
struct GoalDay: Hashable {
    var goal: UUID
    var day: Day
}
