import Foundation
import Synchronization

/// A span of whole local days, both ends included.
public struct Period: Equatable, Hashable, Sendable {
    /// The first day.
    public var start: Day
    /// The last day (equal to `start` for a single day).
    public var end: Day
}

extension Cadence {
    /// The period of this cadence that contains `day`; nil for one-time goals (all time).
    public func period(containing day: Day, firstWeekday: Int) -> Period? {
        switch self {
        case .once:
            return nil
        case .daily:
            return Period(start: day, end: day)
        case .weekly:
            let back = (day.weekday - firstWeekday + 7) % 7
            let start = day.adding(days: -back)
            return Period(start: start, end: start.adding(days: 6))
        case .monthly:
            let (y, m, _) = day.components
            let start = Day(year: y, month: m, day: 1)!
            return Period(start: start, end: start.adding(days: Day.daysInMonth(year: y, month: m) - 1))
        case .yearly:
            let (y, _, _) = day.components
            return Period(start: Day(year: y, month: 1, day: 1)!, end: Day(year: y, month: 12, day: 31)!)
        }
    }
}
