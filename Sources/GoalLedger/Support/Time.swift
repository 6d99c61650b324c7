import Foundation

/// A moment in time, in whole milliseconds since 1970-01-01T00:00:00Z.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z (negative before it).
    public var milliseconds: Int64

    /// The instant `milliseconds` after 1970-01-01T00:00:00Z (not checked against ``supported``).
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// The current time of this machine: the default `now` of an app's calls (the command line
    /// takes `--now`).
    public static var systemNow: Instant { Instant(Date()) }

    /// `date`, to the millisecond (rounded down; a date on a whole millisecond, such as
    /// ``date`` gives, comes back as that millisecond despite binary fractions of a second).
    public init(_ date: Date) {
        let ms = date.timeIntervalSince1970 * 1000
        let nearest = ms.rounded()
        self.init(milliseconds: Int64(abs(ms - nearest) < 1e-3 ? nearest : ms.rounded(.down)))
    }

    /// This instant as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    public static func < (a: Instant, b: Instant) -> Bool { a.milliseconds < b.milliseconds }

    /// The first instant the ledger accepts or computes: 1970-01-01T00:00:00Z.
    public static let earliest = Instant(milliseconds: 0)
    /// The last instant the ledger accepts or computes: 9999-12-31T23:59:59.999Z, so that every
    /// instant prints as RFC 3339 (a four-digit year) and every clock fits its 48 bits.
    public static let latest = Instant(milliseconds: 253_402_300_799_999)
    /// Every instant the ledger stores, prints or computes lies in this range.
    public static let supported = earliest...latest
    /// The moments a view or plan may be computed at: a day in any time zone (UTC−12 to UTC+14)
    /// of an instant in it is a supported day, so every view and plan stays in range.
    public static let supportedNow = Instant(milliseconds: 86_400_000)...Instant(milliseconds: 253_402_214_399_999)

    /// Parses an RFC 3339 timestamp (`2026-11-02T07:00:00Z`, `…T08:00:00.250+01:00`).
    /// Fractions finer than a millisecond are truncated.
    public init?(rfc3339 text: String) {
        guard let parsed = text.utf8.withContiguousStorageIfAvailable(Instant.init(rfc3339:)) ?? Array(text.utf8).withUnsafeBufferPointer(Instant.init(rfc3339:))
        else { return nil }
        self = parsed
    }

    /// `init(rfc3339:)` of a text's UTF-8 bytes.
    package init?(rfc3339 b: UnsafeBufferPointer<UInt8>) {
        func num(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var v = 0
            for i in from..<from + count {
                guard (48...57).contains(b[i]) else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20,
            let year = num(0, 4), b[4] == UInt8(ascii: "-"), let month = num(5, 2), b[7] == UInt8(ascii: "-"),
            let dayOfMonth = num(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
            let hour = num(11, 2), b[13] == UInt8(ascii: ":"), let minute = num(14, 2), b[16] == UInt8(ascii: ":"),
            let second = num(17, 2),
            let day = Day(year: year, month: month, day: dayOfMonth),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var i = 19
        var millis = 0
        if b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < b.count, (48...57).contains(b[i]) {
                if i - start < 3 { millis = millis * 10 + Int(b[i] - 48) }
                i += 1
            }
            guard i > start else { return nil }
            for _ in 0..<max(0, 3 - (i - start)) { millis *= 10 }
        }
        guard i < b.count else { return nil }
        var offsetSeconds = 0
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            guard let oh = num(i + 1, 2), i + 3 < b.count, b[i + 3] == UInt8(ascii: ":"), let om = num(i + 4, 2),
                oh < 24, om < 60
            else { return nil }
            offsetSeconds = (oh * 3600 + om * 60) * (b[i] == UInt8(ascii: "-") ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let seconds = Int64(day.daysSinceEpoch) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        self.milliseconds = seconds * 1000 + Int64(millis)
    }

    /// RFC 3339 in UTC; milliseconds appear only when they are not zero.
    public var rfc3339: String {
        guard let length = rfc3339Length else { return rfc3339OutOfRange }
        return String(unsafeUninitializedCapacity: length) { out in
            writeRFC3339(out)
            return length
        }
    }

    /// Appends the bytes of `rfc3339` to `out` without making a string (JSON output writes
    /// one per entry).
    func writeRFC3339(into out: inout [UInt8]) {
        guard let length = rfc3339Length else {
            out.append(contentsOf: rfc3339OutOfRange.utf8)
            return
        }
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: length))
        out.withUnsafeMutableBufferPointer { writeRFC3339(UnsafeMutableBufferPointer(rebasing: $0[start...])) }
    }

    /// The length of the RFC 3339 form of an instant in years 0…9999 (20, or 24 with
    /// milliseconds); nil outside them.
    private var rfc3339Length: Int? {
        // 0000-01-01T00:00:00Z ..< 10000-01-01T00:00:00Z
        guard (-62_167_219_200_000..<253_402_300_800_000).contains(milliseconds) else { return nil }
        return milliseconds.floorDivided(by: 1000).remainder == 0 ? 20 : 24
    }

    /// The form of an instant outside years 0…9999 (never stored: for messages).
    private var rfc3339OutOfRange: String {
        let (secs, _) = milliseconds.floorDivided(by: 1000)
        let (days, secOfDay) = secs.floorDivided(by: 86_400)
        let (h, m, s) = (Int(secOfDay / 3600), Int(secOfDay % 3600 / 60), Int(secOfDay % 60))
        // Any Int64 of milliseconds is within ±1.1e11 days: more than a `Day` holds, never more
        // than the civil rule computes in 64 bits.
        let (y, mo, d) = Day.civil(days)
        return Day.text(y, mo, d) + "T" + pad2(h) + ":" + pad2(m) + ":" + pad2(s) + "Z"
    }

    /// Writes the form of an instant in years 0…9999 into `out`, which has its length.
    private func writeRFC3339(_ out: UnsafeMutableBufferPointer<UInt8>) {
        let (secs, ms) = milliseconds.floorDivided(by: 1000)
        let (days, secOfDay) = secs.floorDivided(by: 86_400)
        let (y, mo, d) = Day(daysSinceEpoch: Int32(days)).components
        func put(_ v: Int, _ at: Int, _ width: Int) {
            var v = v
            for i in stride(from: at + width - 1, through: at, by: -1) {
                out[i] = UInt8(48 + v % 10)
                v /= 10
            }
        }
        put(y, 0, 4)
        out[4] = 45
        put(mo, 5, 2)
        out[7] = 45
        put(d, 8, 2)
        out[10] = 84
        put(Int(secOfDay / 3600), 11, 2)
        out[13] = 58
        put(Int(secOfDay % 3600 / 60), 14, 2)
        out[16] = 58
        put(Int(secOfDay % 60), 17, 2)
        if ms != 0 {
            out[19] = 46
            put(Int(ms), 20, 3)
        }
        out[out.count - 1] = 90
    }

    public var description: String { rfc3339 }

    /// The local calendar day of this instant in `timeZone`.
    public func day(in timeZone: TimeZone) -> Day {
        let offset = Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(milliseconds) / 1000)))
        let local = milliseconds.floorDivided(by: 1000).quotient + offset
        // Clamped: an instant past the days a `Day` holds (±5.8 million years, far outside the
        // ledger's 1970–9999) has the first or last of them, rather than a trap.
        return Day(daysSinceEpoch: Int32(clamping: local.floorDivided(by: 86_400).quotient))
    }
}

/// The local days of many instants in one time zone, most of them near the one before (the
/// events of an append, a second apart or a day): an instant between the last one looked up
/// and the end of its day, with no change of the zone's offset between them, costs two
/// comparisons instead of the zone's lookup. What it answers is what `Instant.day(in:)` does.
struct ZoneDays {
    let zone: TimeZone
    /// The instants from `from` (included) to `until` (excluded), in milliseconds since 1970,
    /// are on `day`: one offset holds for them all, and they lie within that day at it.
    private var from = Int64.max
    private var until = Int64.min
    private var day = Day(daysSinceEpoch: 0)

    init(_ zone: TimeZone) { self.zone = zone }

    mutating func day(of instant: Instant) -> Day {
        let ms = instant.milliseconds
        if ms >= from && ms < until { return day }
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        let offset = Int64(zone.secondsFromGMT(for: date))
        let days = (ms.floorDivided(by: 1000).quotient + offset).floorDivided(by: 86_400).quotient
        let found = Day(daysSinceEpoch: Int32(clamping: days))
        // A day past those a `Day` holds (clamped, as `day(in:)` does) is not kept.
        guard Int32(exactly: days) != nil else { return found }
        // The day's bounds at this offset; the offset holds up to the zone's next transition,
        // and over the whole day if it held at its start with no transition before its end.
        let start = (days * 86_400 - offset) * 1000
        let end = start + 86_400_000
        let startDate = Date(timeIntervalSince1970: Double(start) / 1000)
        if Int64(zone.secondsFromGMT(for: startDate)) == offset, transition(after: startDate) >= end {
            (from, until) = (start, end)
        } else {
            (from, until) = (ms, min(end, transition(after: date)))
        }
        day = found
        return found
    }

    /// The zone's next change of offset after `date`, in milliseconds (`Int64.max`: none).
    private func transition(after date: Date) -> Int64 {
        guard let next = zone.nextDaylightSavingTimeTransition(after: date) else { return .max }
        let ms = (next.timeIntervalSince1970 * 1000).rounded(.down)
        // Past what an Int64 holds either way: no transition within the instants there are.
        guard ms > -9.0e18, ms < 9.0e18 else { return .max }
        return Int64(ms)
    }
}

/// A calendar date without a time zone (`YYYY-MM-DD`), stored as days since 1970-01-01.
public struct Day: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01 (0 is that day; negative before it).
    public var daysSinceEpoch: Int32

    /// The day `daysSinceEpoch` days after 1970-01-01 (not checked against ``supported``).
    public init(daysSinceEpoch: Int32) { self.daysSinceEpoch = daysSinceEpoch }

    /// A valid Gregorian date in years 1…9999, or nil.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1,
            day <= Day.daysInMonth(year: year, month: month)
        else { return nil }
        // Days from civil (proleptic Gregorian), after H. Hinnant's algorithm.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        self.daysSinceEpoch = Int32(era * 146_097 + doe - 719_468)
    }

    /// The day of `components`' year, month and day (as a calendar picker gives them); nil when
    /// one is missing or they name no date.
    public init?(_ components: DateComponents) {
        guard let y = components.year, let m = components.month, let d = components.day else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The day's year, month and day in the Gregorian calendar, for a date picker or
    /// `Calendar.date(from:)` in the time zone of the app's choice.
    public var dateComponents: DateComponents {
        let (y, m, d) = components
        return DateComponents(calendar: Calendar(identifier: .gregorian), year: y, month: m, day: d)
    }

    /// Parses exactly `YYYY-MM-DD`.
    public init?(iso text: String) {
        let b = Array(text.utf8)
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-") else { return nil }
        var parts: [Int] = []
        for (from, count) in [(0, 4), (5, 2), (8, 2)] {
            var v = 0
            for i in from..<from + count {
                guard (48...57).contains(b[i]) else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            parts.append(v)
        }
        self.init(year: parts[0], month: parts[1], day: parts[2])
    }

    /// The number of days of `month` (1…12) in `year`, in the Gregorian calendar (28…31).
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public static func < (a: Day, b: Day) -> Bool { a.daysSinceEpoch < b.daysSinceEpoch }

    /// 1970-01-01 … 9999-12-31: the days the ledger accepts or computes (see `Instant.supported`).
    public static let supported = Day(daysSinceEpoch: 0)...Day(daysSinceEpoch: 2_932_896)
    /// The target dates a goal may have: one day inside `supported` at each end, so that a
    /// reminder at any time of the day in any time zone (UTC−12 to UTC+14) fires at a supported
    /// instant, whichever device computes it.
    public static let supportedTargets = Day(daysSinceEpoch: 1)...Day(daysSinceEpoch: 2_932_895)

    /// The Gregorian year, month (1…12) and day of the month (1…31).
    public var components: (year: Int, month: Int, day: Int) { Self.civil(Int64(daysSinceEpoch)) }

    /// The year, month and day of the day `days` after 1970-01-01, for any number of days an
    /// instant's milliseconds give (|days| < 2^37, beyond what a `Day` holds).
    static func civil(_ days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// 1 = Sunday … 7 = Saturday, as Foundation's `Calendar` numbers weekdays.
    public var weekday: Int { Int((Int64(daysSinceEpoch) + 4).floorDivided(by: 7).remainder) + 1 }

    /// The day `days` later (earlier when negative); not checked against ``supported``.
    public func adding(days: Int) -> Day { Day(daysSinceEpoch: daysSinceEpoch + Int32(days)) }

    public var description: String {
        let (y, m, d) = components
        // Years 0…9999 (every day the ledger stores): ten digits and dashes written in place.
        if (0...9999).contains(y) {
            return String(unsafeUninitializedCapacity: 10) { out in
                func digit(_ v: Int) -> UInt8 { UInt8(ascii: "0") + UInt8(v) }
                out[0] = digit(y / 1000)
                out[1] = digit(y / 100 % 10)
                out[2] = digit(y / 10 % 10)
                out[3] = digit(y % 10)
                out[4] = UInt8(ascii: "-")
                out[5] = digit(m / 10)
                out[6] = digit(m % 10)
                out[7] = UInt8(ascii: "-")
                out[8] = digit(d / 10)
                out[9] = digit(d % 10)
                return 10
            }
        }
        return Self.text(y, m, d)
    }

    /// `YYYY-MM-DD`, the year of at least four digits.
    static func text(_ y: Int, _ m: Int, _ d: Int) -> String {
        let ys = String(y)
        return String(repeating: "0", count: max(0, 4 - ys.count)) + ys + "-" + pad2(m) + "-" + pad2(d)
    }
}

/// A number of two digits or more, with a leading zero below 10.
@inline(__always)
package func pad2(_ v: Int) -> String { v < 10 ? "0" + String(v) : String(v) }

extension Int64 {
    /// Division rounding toward negative infinity, with a non-negative remainder.
    package func floorDivided(by d: Int64) -> (quotient: Int64, remainder: Int64) {
        var q = self / d
        var r = self % d
        if r < 0 {
            q -= 1
            r += d
        }
        return (q, r)
    }
}
