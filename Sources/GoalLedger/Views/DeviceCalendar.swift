import Foundation
import Synchronization

/// Time zones by identifier, resolved once per process: planning and appending look the
/// device's zone up for every event.
enum TimeZones {
    private static let cache = Mutex<[String: TimeZone]>([:])

    static func zone(_ identifier: String) -> TimeZone {
        if let z = cache.withLock({ $0[identifier] }) { return z }
        let z = TimeZone(identifier: identifier) ?? TimeZone(identifier: "UTC")!
        cache.withLock { $0[identifier] = z }
        return z
    }
}

/// The calendar a device sees goals through: its time zone and first weekday.
public struct DeviceCalendar: Equatable, Sendable {
    /// The IANA time zone identifier (`Asia/Tokyo`).
    public var timeZoneIdentifier: String
    /// The weekday weeks start on (1 = Sunday … 7 = Saturday).
    public var firstWeekday: Int

    /// A calendar of this zone and first weekday.
    public init(timeZoneIdentifier: String, firstWeekday: Int) {
        self.timeZoneIdentifier = timeZoneIdentifier
        self.firstWeekday = firstWeekday
    }

    /// The time zone. A zone this system's time zone database does not know (another device's
    /// newer database named it) is UTC here: reminders of that device are planned in UTC and its
    /// days read in UTC until this system learns the zone or the device reports another. The
    /// device that names a zone must know it (its own `deviceConfigured` is refused otherwise).
    public var timeZone: TimeZone { TimeZones.zone(timeZoneIdentifier) }

    /// The local day of `instant` in this calendar's zone.
    public func day(of instant: Instant) -> Day { instant.day(in: timeZone) }
}

extension DeviceCalendar {
    /// The first instant of the local day after `instant`'s in this calendar's zone: its
    /// midnight, or where a time change skips midnight, the first instant of that day. Nil past
    /// the moments views are computed at (``Instant/supportedNow``).
    public func startOfNextDay(after instant: Instant) -> Instant? {
        guard Instant.supportedNow.contains(instant) else { return nil }
        let today = day(of: instant)
        let next = localInstant(day: Day(daysSinceEpoch: today.daysSinceEpoch + 1), hour: 0, minute: 0, timeZone: timeZone)
        // A zone's offset changes by hours, never by days, so `next` is after `instant`; the
        // check keeps a malformed zone database from making a sleeper spin.
        return next > instant ? next : nil
    }
}
