import Foundation
import Testing

@testable import GoalLedger

struct ReminderLocalTimeTests {
    let newYork = TimeZone(identifier: "America/New_York")!
    let berlin = TimeZone(identifier: "Europe/Berlin")!

    func local(_ d: String, _ hour: Int, _ minute: Int, _ zone: TimeZone) -> Instant {
        localInstant(day: day(d), hour: hour, minute: minute, timeZone: zone)
    }

    @Test func anOrdinaryDayUsesTheZonesOffset() {
        #expect(local("2026-06-10", 9, 0, newYork) == instant("2026-06-10T13:00:00Z"))
        #expect(local("2026-01-10", 9, 0, newYork) == instant("2026-01-10T14:00:00Z"))
        #expect(local("2026-06-10", 9, 0, berlin) == instant("2026-06-10T07:00:00Z"))
        #expect(local("2026-06-10", 0, 0, TimeZone(identifier: "UTC")!) == instant("2026-06-10T00:00:00Z"))
        #expect(local("2026-06-10", 23, 59, TimeZone(identifier: "Asia/Kathmandu")!) == instant("2026-06-10T18:14:00Z"))
        // West of UTC late in the evening is already the next UTC day.
        #expect(local("2026-12-31", 23, 30, TimeZone(identifier: "America/Los_Angeles")!) == instant("2027-01-01T07:30:00Z"))
    }

    @Test func aTimeInTheSpringForwardGapMovesToTheInstantTheClockJumpsTo() {
        // New York: 02:00 EST → 03:00 EDT at 07:00Z.
        #expect(local("2026-03-08", 2, 30, newYork) == instant("2026-03-08T07:00:00Z"))
        #expect(local("2026-03-08", 2, 0, newYork) == instant("2026-03-08T07:00:00Z"))
        #expect(local("2026-03-08", 2, 59, newYork) == instant("2026-03-08T07:00:00Z"))
        #expect(local("2026-03-08", 1, 59, newYork) == instant("2026-03-08T06:59:00Z"))
        #expect(local("2026-03-08", 3, 0, newYork) == instant("2026-03-08T07:00:00Z"))
        #expect(local("2026-03-08", 3, 30, newYork) == instant("2026-03-08T07:30:00Z"))
        // Berlin: 02:00 CET → 03:00 CEST at 01:00Z.
        #expect(local("2026-03-29", 2, 30, berlin) == instant("2026-03-29T01:00:00Z"))
        #expect(local("2026-03-29", 3, 30, berlin) == instant("2026-03-29T01:30:00Z"))
        // Lord Howe Island moves by half an hour: 02:00 → 02:30 (+10:30 → +11:00).
        let lordHowe = TimeZone(identifier: "Australia/Lord_Howe")!
        #expect(local("2026-10-04", 2, 15, lordHowe) == instant("2026-10-03T15:30:00Z"))
        #expect(local("2026-10-04", 2, 30, lordHowe) == instant("2026-10-03T15:30:00Z"))
    }

    @Test func aRepeatedTimeTakesItsFirstOccurrence() {
        // New York: 02:00 EDT → 01:00 EST at 06:00Z; 01:30 happens at 05:30Z and 06:30Z.
        #expect(local("2026-11-01", 1, 30, newYork) == instant("2026-11-01T05:30:00Z"))
        #expect(local("2026-11-01", 1, 0, newYork) == instant("2026-11-01T05:00:00Z"))
        #expect(local("2026-11-01", 0, 59, newYork) == instant("2026-11-01T04:59:00Z"))
        #expect(local("2026-11-01", 2, 0, newYork) == instant("2026-11-01T07:00:00Z"))
        // Berlin: 03:00 CEST → 02:00 CET at 01:00Z; 02:30 happens at 00:30Z and 01:30Z.
        #expect(local("2026-10-25", 2, 30, berlin) == instant("2026-10-25T00:30:00Z"))
        #expect(local("2026-10-25", 2, 0, berlin) == instant("2026-10-25T00:00:00Z"))
        #expect(local("2026-10-25", 3, 0, berlin) == instant("2026-10-25T02:00:00Z"))
    }

    @Test func theResultLiesOnTheRequestedLocalDay() {
        // Every minute of both New York transition days maps into that local day, in order.
        for d in ["2026-03-08", "2026-11-01"] {
            var previous: Instant?
            for minute in stride(from: 0, to: 24 * 60, by: 15) {
                let t = local(d, minute / 60, minute % 60, newYork)
                #expect(t.day(in: newYork) == day(d))
                if let previous { #expect(previous <= t) }
                previous = t
            }
        }
    }

    @Test func periodStartsOnOrAfterADay() {
        // 2026-06-10 is a Wednesday.
        #expect(Cadence.once.periodStart(onOrAfter: day("2026-06-10"), firstWeekday: 1) == nil)
        #expect(Cadence.daily.periodStart(onOrAfter: day("2026-06-10"), firstWeekday: 1) == day("2026-06-10"))
        #expect(Cadence.weekly.periodStart(onOrAfter: day("2026-06-10"), firstWeekday: 1) == day("2026-06-14"))
        #expect(Cadence.weekly.periodStart(onOrAfter: day("2026-06-10"), firstWeekday: 2) == day("2026-06-15"))
        #expect(Cadence.weekly.periodStart(onOrAfter: day("2026-06-10"), firstWeekday: 4) == day("2026-06-10"))
        #expect(Cadence.monthly.periodStart(onOrAfter: day("2026-06-10"), firstWeekday: 1) == day("2026-07-01"))
        #expect(Cadence.monthly.periodStart(onOrAfter: day("2026-06-01"), firstWeekday: 1) == day("2026-06-01"))
        #expect(Cadence.yearly.periodStart(onOrAfter: day("2026-06-10"), firstWeekday: 1) == day("2027-01-01"))
        #expect(day("2026-03-08").compactDescription == "20260308")
    }
}
