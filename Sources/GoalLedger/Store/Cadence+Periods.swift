import Foundation

extension Cadence {
    /// The number of the period of this cadence that contains `day`: consecutive periods have
    /// consecutive numbers. Nil for one-time goals.
    func periodNumber(of day: Day, firstWeekday: Int) -> Int32? {
        switch self {
        case .once:
            return nil
        case .daily:
            return day.daysSinceEpoch
        case .weekly:
            // Weeks start on the days d with d ≡ firstWeekday − 5 (mod 7) (1970-01-01 was a Thursday).
            return Int32((Int64(day.daysSinceEpoch) + 5 - Int64(firstWeekday)).floorDivided(by: 7).quotient)
        case .monthly:
            let (y, m, _) = day.components
            return Int32(y * 12 + m - 1)
        case .yearly:
            return Int32(day.components.year)
        }
    }

    /// The period numbered `n` (see `periodNumber`); nil for one-time goals.
    func period(number n: Int32, firstWeekday: Int) -> Period? {
        switch self {
        case .once:
            return nil
        case .daily:
            return Period(start: Day(daysSinceEpoch: n), end: Day(daysSinceEpoch: n))
        case .weekly:
            let start = Day(daysSinceEpoch: Int32(Int64(n) * 7 - 5 + Int64(firstWeekday)))
            return Period(start: start, end: start.adding(days: 6))
        case .monthly:
            let (y, m) = Int64(n).floorDivided(by: 12)
            return period(containing: Day(year: Int(y), month: Int(m) + 1, day: 1)!, firstWeekday: firstWeekday)
        case .yearly:
            return period(containing: Day(year: Int(n), month: 1, day: 1)!, firstWeekday: firstWeekday)
        }
    }
}
