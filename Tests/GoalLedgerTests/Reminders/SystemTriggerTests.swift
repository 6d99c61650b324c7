import Foundation
import Testing

@testable import GoalLedger

/// The pure half of the system center's adapter: triggers to the date components a system center
/// matches, and back.
struct SystemTriggerTests {
    @Test func calendarTriggersAreTheirComponentsWithoutATimeZone() throws {
        let weekly = NotificationTrigger(kind: .calendar(year: nil, month: nil, day: nil, weekday: 2, hour: 7, minute: 30), repeats: true)
        let (c, repeats) = weekly.dateMatching
        #expect(repeats && c.timeZone == nil && c.weekday == 2 && c.hour == 7 && c.minute == 30 && c.day == nil && c.second == nil)
        #expect(NotificationTrigger(dateMatching: c, repeats: repeats) == weekly)
        let once = NotificationTrigger(kind: .calendar(year: 2027, month: 5, day: 31, weekday: nil, hour: 18, minute: 0), repeats: false)
        #expect(NotificationTrigger(dateMatching: once.dateMatching.components, repeats: false) == once)
    }

    @Test func dateTriggersAreUTCComponentsThatFireAtTheirInstant() throws {
        for text in ["2026-11-05T07:30:00Z", "2026-03-29T01:59:59.250Z", "2028-02-29T23:59:00Z", "1970-01-02T00:00:00Z"] {
            let trigger = NotificationTrigger(kind: .date(instant(text)), repeats: false)
            let (c, repeats) = trigger.dateMatching
            #expect(!repeats && c.timeZone == TimeZone(identifier: "UTC"))
            // Foundation reads the same instant from the components.
            let date = try #require(c.calendar?.date(from: c))
            #expect(Instant(date) == instant(text), "\(text)")
            #expect(NotificationTrigger(dateMatching: c, repeats: false) == trigger, "\(text)")
        }
        // Components in another zone name the instant they mean there.
        var berlin = DateComponents(year: 2026, month: 11, day: 5, hour: 8, minute: 30)
        berlin.timeZone = TimeZone(identifier: "Europe/Berlin")
        #expect(NotificationTrigger(dateMatching: berlin, repeats: false)?.kind == .date(instant("2026-11-05T07:30:00Z")))
        // The hour after Berlin's clocks went forward on 2026-03-29 (02:00 became 03:00).
        var spring = DateComponents(year: 2026, month: 3, day: 29, hour: 3, minute: 30)
        spring.timeZone = TimeZone(identifier: "Europe/Berlin")
        #expect(NotificationTrigger(dateMatching: spring, repeats: false)?.kind == .date(instant("2026-03-29T01:30:00Z")))
    }

    @Test func componentsNoLedgerRequestHasAreNotTriggers() {
        #expect(NotificationTrigger(dateMatching: DateComponents(hour: 7), repeats: true) == nil)
        #expect(NotificationTrigger(dateMatching: DateComponents(hour: 7, minute: 0, second: 30), repeats: true) == nil)
        var repeatingDate = DateComponents(year: 2026, month: 1, day: 1, hour: 0, minute: 0)
        repeatingDate.timeZone = TimeZone(identifier: "UTC")
        #expect(NotificationTrigger(dateMatching: repeatingDate, repeats: true) == nil)
    }
}
