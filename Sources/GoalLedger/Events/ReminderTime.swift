import Foundation

/// A reminder's local time of day (default 09:00).
public struct ReminderTime: Equatable, Hashable, Sendable {
    /// The hour, 0 to 23, in the time zone of the device that notifies.
    public private(set) var hour: Int
    /// The minute, 0 to 59.
    public private(set) var minute: Int
    /// 09:00, the time of a reminder set without one.
    public static let `default` = ReminderTime(unchecked: 9, 0)
    /// The time `hour`:`minute`; refuses an hour outside 0…23 or a minute outside 0…59,
    /// naming the field (`hour`, `minute`).
    public init(hour: Int, minute: Int) throws(FieldError) {
        try FieldRules.time(hour: hour, minute: minute, prefix: "")
        self.init(unchecked: hour, minute)
    }
    /// A time as stored or read from the JSON form: the gate checks it, not this initializer.
    init(unchecked hour: Int, _ minute: Int) {
        self.hour = hour
        self.minute = minute
    }
}
