import Foundation

/// A reminder's local time of day (default 09:00) and, for a weekly goal, the weekday it fires
/// on (default: the device's first weekday).
public struct ReminderTime: Equatable, Hashable, Sendable {
    /// The weekday a weekly goal's reminder fires on, 1…7 with 1 = Sunday (the numbering of
    /// ``DeviceConfigured/firstWeekday``); nil: the first weekday of the device that notifies.
    /// Kept whatever the goal's cadence, it applies only while the cadence is weekly, so it
    /// survives an edit of the cadence and back.
    public private(set) var weekday: Int?
    /// The hour, 0 to 23, in the time zone of the device that notifies.
    public private(set) var hour: Int
    /// The minute, 0 to 59.
    public private(set) var minute: Int
    /// 09:00, the time of a reminder set without one.
    public static let `default` = ReminderTime(unchecked: 9, 0)
    /// The time `hour`:`minute`, on `weekday` for a weekly goal (nil: the device's first
    /// weekday); refuses an hour outside 0…23, a minute outside 0…59 or a weekday outside 1…7,
    /// naming the field (`hour`, `minute`, `weekday`).
    public init(weekday: Int? = nil, hour: Int, minute: Int) throws(FieldError) {
        try FieldRules.time(hour: hour, minute: minute, weekday: weekday, prefix: "")
        self.init(unchecked: hour, minute, weekday: weekday)
    }
    /// A time as stored or read from the JSON form: the gate checks it, not this initializer.
    init(unchecked hour: Int, _ minute: Int, weekday: Int? = nil) {
        self.hour = hour
        self.minute = minute
        self.weekday = weekday
    }
}

extension ReminderTime {
    /// The members of the time's JSON form, `hour`, `minute`, then `weekday` only when one is
    /// chosen, so a reminder without one prints (and hashes) as it always did.
    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = [("hour", .number(Double(hour))), ("minute", .number(Double(minute)))]
        if let weekday { m.append(("weekday", .number(Double(weekday)))) }
        return m
    }

    /// `{"hour","minute","weekday"?}`.
    var json: JSONValue { .object(jsonMembers) }
}
