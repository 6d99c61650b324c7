import Foundation

extension NotificationTrigger {
    /// The date components a system notification center matches (the form of
    /// `UNCalendarNotificationTrigger(dateMatching:repeats:)`), and whether it repeats:
    /// - a calendar trigger gives its components as they are (weekday 1 = Sunday, as Foundation
    ///   numbers it), with no time zone: the system re-evaluates them in the device's zone;
    /// - a date trigger gives its instant as year … nanosecond in UTC, with that time zone set,
    ///   so that it fires at that instant wherever the device is.
    public var dateMatching: (components: DateComponents, repeats: Bool) {
        switch kind {
        case .calendar(let year, let month, let day, let weekday, let hour, let minute):
            var c = DateComponents()
            c.year = year
            c.month = month
            c.day = day
            c.weekday = weekday
            c.hour = hour
            c.minute = minute
            return (c, repeats)
        case .date(let instant):
            let (year, month, day) = Day(daysSinceEpoch: Int32(instant.milliseconds.floorDivided(by: 86_400_000).quotient)).components
            let inDay = instant.milliseconds.floorDivided(by: 86_400_000).remainder
            var c = DateComponents()
            c.calendar = Calendar(identifier: .gregorian)
            c.timeZone = TimeZone(identifier: "UTC")
            c.year = year
            c.month = month
            c.day = day
            c.hour = Int(inDay / 3_600_000)
            c.minute = Int(inDay / 60_000 % 60)
            c.second = Int(inDay / 1000 % 60)
            c.nanosecond = Int(inDay % 1000) * 1_000_000
            return (c, false)
        }
    }

    /// The trigger a system center's date components are (the form ``dateMatching`` gives):
    /// with a time zone and a whole date and time, a date trigger at that instant; else a
    /// calendar trigger of the components present. Nil for components no ledger request has
    /// (no hour or minute, seconds in a calendar match, a repeating date).
    public init?(dateMatching components: DateComponents, repeats: Bool) {
        if let zone = components.timeZone {
            guard !repeats, let year = components.year, let month = components.month, let day = components.day,
                components.hour != nil, components.minute != nil, Day(year: year, month: month, day: day) != nil
            else { return nil }
            // Foundation's calendar reads the components in their zone (daylight saving included).
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            var c = components
            c.calendar = nil
            c.timeZone = nil
            guard let date = calendar.date(from: c) else { return nil }
            self.init(kind: .date(Instant(date)), repeats: false)
            return
        }
        guard let hour = components.hour, let minute = components.minute, (components.second ?? 0) == 0,
            (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        self.init(
            kind: .calendar(
                year: components.year, month: components.month, day: components.day, weekday: components.weekday, hour: hour,
                minute: minute),
            repeats: repeats)
    }
}
