import Foundation

/// An amount or a target as an app builds it: a finite decimal within ±1e12 with at most six
/// digits after the point, checked when it is made. The ledger's gate applies the same rule to
/// every event however it was made, so a plain `Double` in a payload is checked at append too;
/// this type lets an app refuse a bad value where the user typed it.
///
///     let amount = try Amount(2.5)                        // fine
///     let bad = try Amount(0.1234567)                     // FieldError: 7 digits after the point
public struct Amount: Hashable, Sendable, CustomStringConvertible {
    /// The value, checked.
    public let value: Double

    /// `value`, refused unless it is finite, within ±1e12, and has at most six digits after the
    /// point in its shortest decimal form (`0.1` has one). Never rounded.
    public init(_ value: Double) throws(FieldError) {
        self.value = try FieldRules.amount(value, field: "amount")
    }

    /// A measurable goal's target: an amount greater than 0.
    public static func target(_ value: Double) throws(FieldError) -> Amount {
        _ = try FieldRules.target(value, field: "target")
        return try Amount(value)
    }

    /// The shortest decimal form, as the JSON form writes it.
    public var description: String { JSONWriter.number(value) }

    /// `value` in millionths: exact for every amount the gate lets in (at most six digits after
    /// the point), so sums of them do not depend on their order.
    static func micro(_ value: Double) -> Int64 { Int64((value * 1e6).rounded()) }

    /// The sum of `values`, exact: added in millionths (in 128 bits, so no sum of stored
    /// amounts overflows), then read back as the nearest `Double`, whose shortest decimal form
    /// is the exact sum (0.1 + 0.2 is 0.3) for every sum within ±9,007,199,254 units.
    static func sum(_ values: some Sequence<Double>) -> Double { Double(microSum(values)) / 1e6 }

    /// The sum of `values` in millionths.
    static func microSum(_ values: some Sequence<Double>) -> Int128 {
        var micro: Int128 = 0
        for v in values { micro += Int128(Self.micro(v)) }
        return micro
    }
}

extension ProgressRecorded {
    /// An entry of a checked amount for a measurable goal.
    public init(goal: UUID, amount: Amount, occurredAt: Instant? = nil, day: Day? = nil) {
        self.init(goal: goal, amount: amount.value, occurredAt: occurredAt, day: day)
    }
}

extension Day {
    /// Parses `YYYY-MM-DD` and checks that the day is one the ledger holds (1970-01-01 to
    /// 9999-12-31); the error names `field`.
    public init(validating text: String, field: String = "day") throws(FieldError) {
        self = try FieldRules.day(try ObjectReader.parseDay(text, field: field), field: field)
    }
}

extension DeviceConfigured {
    /// Settings in a Foundation `TimeZone`, which holds only zones the system knows, with the
    /// defaults of the JSON form for the rest; refuses a value out of its range (the first
    /// weekday 1…7, the window 1…30 days, the capacity 1…512, a locale such as `en_US`),
    /// naming the field.
    public init(
        timeZone: TimeZone, firstWeekday: Int = 1, locale: String = "en_US", strategy: NotificationStrategy = .repeating,
        windowDays: Int = 7, capacity: Int = 64
    ) throws(FieldError) {
        self.init(
            timeZone: timeZone.identifier, firstWeekday: firstWeekday, locale: locale, strategy: strategy, windowDays: windowDays,
            capacity: capacity)
        try checkWellFormed(.draft)
    }
}
