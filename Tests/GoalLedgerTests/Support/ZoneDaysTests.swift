import Foundation
import Testing

@testable import GoalLedger

/// `ZoneDays` keeps the day of the last instant it looked up, for the instants after it: it
/// must answer what `Instant.day(in:)` does for every instant, across every kind of change of
/// a zone's offset (daylight saving time either way, a half-hour one, a change of standard
/// offset that skipped a whole day, a zone whose summer offset is its standard one).
struct ZoneDaysTests {
    static let zones = [
        "America/New_York", "Europe/Berlin", "Europe/Dublin", "Australia/Lord_Howe", "Asia/Kolkata",
        "Pacific/Apia", "America/St_Johns", "Pacific/Chatham", "Asia/Kathmandu", "UTC",
    ]

    /// Instants stepped through irregularly (forward, sometimes a day back, sometimes far
    /// ahead) over years with transitions in them, each compared with the zone's own answer.
    @Test(arguments: zones)
    func everyInstantGetsTheDayTheZoneGives(_ identifier: String) throws {
        let zone = try #require(TimeZone(identifier: identifier))
        var days = ZoneDays(zone)
        var random = SeededRandom(seed: UInt64(identifier.utf8.count) &* 7_919)
        var checked = 0
        // 2011 (Apia skipped 30 December), 2026, and years far ahead.
        for startText in ["2011-03-01T00:00:00Z", "2026-01-01T00:00:00Z", "9000-02-20T00:00:00Z"] {
            var ms = instant(startText).milliseconds
            let end = ms + 400 * 86_400_000
            while ms < end {
                let at = Instant(milliseconds: ms)
                #expect(days.day(of: at) == at.day(in: zone), "\(identifier) at \(at.rfc3339)")
                checked += 1
                switch random.next() % 40 {
                case 0: ms -= Int64(random.next() % 86_400_000)
                case 1: ms += Int64(random.next() % (20 * 86_400_000))
                default: ms += Int64(random.next() % 5_400_000)
                }
            }
        }
        #expect(checked > 3_000)
    }

    /// Around each transition of one year, minute by minute on either side of it, then every
    /// ten minutes to the day after: the instants just before and after a change of offset, and
    /// those around the next midnight, where a day kept too long would be wrong.
    @Test(arguments: ["America/New_York", "Australia/Lord_Howe", "Europe/Dublin", "Pacific/Apia"])
    func theMinutesAroundEachTransitionGetTheZonesDay(_ identifier: String) throws {
        let zone = try #require(TimeZone(identifier: identifier))
        var days = ZoneDays(zone)
        var transitions: [Int64] = []
        var date = Date(timeIntervalSince1970: Double(instant("2011-01-01T00:00:00Z").milliseconds) / 1000)
        while transitions.count < 6, let next = zone.nextDaylightSavingTimeTransition(after: date) {
            transitions.append(Int64(next.timeIntervalSince1970 * 1000))
            date = next
        }
        #expect(transitions.count >= 2)
        for t in transitions {
            for minute in Array(Int64(-180)...180) + Array(stride(from: Int64(190), through: 1_800, by: 10)) {
                let at = Instant(milliseconds: t + minute * 60_000 - 1)
                #expect(days.day(of: at) == at.day(in: zone), "\(identifier) at \(at.rfc3339)")
            }
        }
    }

    /// A fixed offset has no transitions: its days are kept whole.
    @Test func aFixedOffsetHasItsDays() throws {
        let zone = try #require(TimeZone(secondsFromGMT: 5 * 3_600 + 45 * 60))
        var days = ZoneDays(zone)
        for hours in stride(from: Int64(-48), through: 96, by: 5) {
            let at = Instant(milliseconds: instant("2026-06-01T00:00:00Z").milliseconds + hours * 3_600_000)
            #expect(days.day(of: at) == at.day(in: zone))
        }
    }
}
