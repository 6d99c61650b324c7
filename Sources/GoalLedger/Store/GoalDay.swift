import Foundation

/// A goal's day: the day rows a batch changes (`ViewModel`).
struct GoalDay: Hashable {
    var goal: UUID
    var day: Day
}
