import Foundation

/// An amount or a target: an exact decimal with at most six digits after the point, held as a
/// signed whole number of millionths (no binary floating point anywhere: `0.1 + 0.2` is
/// `0.3`, and `999999999999.999999` is that number).
///
/// An event's amount or target lies within ±1e12 (±10^18 millionths, which 64 bits hold); the
/// initializers that an app calls with what a person typed check that range, and refuse more
/// than six digits after the point rather than rounding. A sum of amounts (a period's value) is
/// an `Amount` too, beyond that range when its entries add up so: millionths are held in 128
/// bits, so no sum of the amounts a store can hold overflows or is rounded.
///
///     let amount = try Amount("2.5")                      // 2,500,000 millionths
///     let same = try Amount(2.5)                          // from a Double: its shortest form
///     let tiny = try Amount(micros: 1)                    // 0.000001
///     let bad = try Amount("0.1234567")                   // FieldError: 7 digits after the point
///
/// `Amount` takes no literals: `Amount(0.1234567)` is always the throwing initializer, never a
/// literal that would have to trap.
public struct Amount: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The value in millionths: `micros / 1,000,000` is the amount, exactly. Within ±10^18 for
    /// an event's amount or target; a sum may go beyond.
    public let micros: Int128

    /// The most millionths an event's amount or target may have in magnitude (10^18, that is 1e12).
    public static let maximumMicros: Int64 = 1_000_000_000_000_000_000

    /// `micros` millionths, refused beyond ±10^18 (±1e12).
    public init(micros: Int64) throws(FieldError) {
        guard micros.magnitude <= UInt64(Self.maximumMicros) else {
            throw FieldError("amount", "must be a number between -1e12 and 1e12, got \(Amount(unchecked: Int128(micros)))")
        }
        self.micros = Int128(micros)
    }

    /// A value the ledger computed (a sum), not checked against the range of one event's amount.
    init(unchecked micros: Int128) { self.micros = micros }

    /// Zero.
    public static let zero = Amount(unchecked: Int128(0))

    /// Whether the amount lies within the range of one event's amount or target (±1e12).
    var isWithinEventRange: Bool { micros.magnitude <= UInt128(Self.maximumMicros) }

    /// The amount written in decimal: a JSON number (`2.5`, `-3`, `0.000001`, `1.5e3`), at most
    /// six digits after the point once trailing zeros are dropped, within ±1e12. Never rounded.
    public init(_ text: String) throws(FieldError) {
        self = try Amount(decimal: Array(text.utf8), field: "amount")
    }

    /// `value`, refused unless it is finite, within ±1e12, and has at most six digits after the
    /// point in its shortest decimal form (`0.1` has one); the amount is that decimal form
    /// exactly. Never rounded.
    public init(_ value: Double) throws(FieldError) {
        self = try Amount(double: value, field: "amount")
    }

    /// A measurable goal's target: an amount greater than 0.
    public static func target(_ value: Double) throws(FieldError) -> Amount {
        try Amount(double: value, field: "target").checkedTarget(field: "target")
    }

    /// A measurable goal's target written in decimal: an amount greater than 0.
    public static func target(_ text: String) throws(FieldError) -> Amount {
        try Amount(decimal: Array(text.utf8), field: "target").checkedTarget(field: "target")
    }

    /// A whole number of units, refused beyond ±1e12.
    public init(whole: Int64) throws(FieldError) {
        let (m, overflow) = whole.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { throw FieldError("amount", "must be a number between -1e12 and 1e12, got \(whole)") }
        try self.init(micros: m)
    }

    /// The amount in plain decimal notation, as few digits as it needs: `2.5`, `-3`,
    /// `0.000001`, `1000000000000`; never an exponent. The JSON forms write it so.
    public var description: String {
        let negative = micros < 0
        let m = micros.magnitude
        let whole = m / 1_000_000
        var fraction = m % 1_000_000
        var text = negative ? "-" : ""
        text += String(whole)
        guard fraction != 0 else { return text }
        var digits = 6
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let f = String(fraction)
        text += "." + String(repeating: "0", count: digits - f.count) + f
        return text
    }

    /// The nearest `Double`, for drawing a chart or arithmetic of an app's own (not exact).
    public var doubleValue: Double { Double(micros) / 1_000_000 }

    /// The sum of two amounts, exact.
    public static func + (a: Amount, b: Amount) -> Amount { Amount(unchecked: a.micros + b.micros) }

    public static func < (a: Amount, b: Amount) -> Bool { a.micros < b.micros }

    /// The amount, refused unless greater than 0 (a target), naming `field`.
    func checkedTarget(field: String) throws(FieldError) -> Amount {
        guard micros > 0 else { throw FieldError(field, "must be greater than 0, got \(self)") }
        return self
    }

    /// `value` by the rule of ``init(_:)-(Double)``, naming `field`.
    init(double value: Double, field: String) throws(FieldError) {
        guard value.isFinite, abs(value) <= EventLimits.magnitude else {
            throw FieldError(field, "must be a number between -1e12 and 1e12, got \(value.isFinite ? JSONWriter.number(value) : "\(value)")")
        }
        if value == 0 {
            self = .zero
            return
        }
        // Most amounts lie on the grid of 10^-6: one that reads back from its grid value is that
        // grid value exactly in its shortest form too (no string is made).
        let scaled = (value * 1e6).rounded()
        if abs(scaled) < 1e15, scaled / 1e6 == value {
            self.init(unchecked: Int128(Int64(scaled)))
            return
        }
        self = try Amount(decimal: Array(value.description.utf8), field: field)
    }

    /// A decimal number's text in JSON's syntax (optional minus, digits, optional fraction,
    /// optional exponent), read exactly into millionths, naming `field` in a refusal. Text that
    /// is not a number is refused too; the work is bounded by the text's length.
    init(decimal text: [UInt8], field: String) throws(FieldError) {
        func refuseSyntax() -> FieldError { FieldError(field, "must be a decimal number, got \(Self.shown(text))") }
        var i = 0
        let negative = i < text.count && text[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        // Significant digits (leading zeros dropped), and the power of ten of the last one.
        var digits: [UInt8] = []
        var fractionLength = 0
        var sawDigit = false
        var inFraction = false
        while i < text.count {
            let c = text[i]
            if c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") {
                sawDigit = true
                if !(digits.isEmpty && c == UInt8(ascii: "0")) { digits.append(c - UInt8(ascii: "0")) }
                if inFraction { fractionLength += 1 }
            } else if c == UInt8(ascii: "."), !inFraction, sawDigit {
                inFraction = true
                guard i + 1 < text.count, text[i + 1] >= UInt8(ascii: "0") && text[i + 1] <= UInt8(ascii: "9") else { throw refuseSyntax() }
            } else {
                break
            }
            i += 1
        }
        guard sawDigit else { throw refuseSyntax() }
        var exponent = 0
        if i < text.count, text[i] == UInt8(ascii: "e") || text[i] == UInt8(ascii: "E") {
            i += 1
            var sign = 1
            if i < text.count, text[i] == UInt8(ascii: "+") || text[i] == UInt8(ascii: "-") {
                if text[i] == UInt8(ascii: "-") { sign = -1 }
                i += 1
            }
            var sawExponentDigit = false
            while i < text.count, text[i] >= UInt8(ascii: "0") && text[i] <= UInt8(ascii: "9") {
                // Clamped: an exponent this large is refused below whatever its exact value.
                exponent = min(exponent * 10 + Int(text[i] - UInt8(ascii: "0")), 1_000_000)
                sawExponentDigit = true
                i += 1
            }
            guard sawExponentDigit else { throw refuseSyntax() }
            exponent *= sign
        }
        guard i == text.count else { throw refuseSyntax() }
        // Trailing zeros do not count as digits after the point.
        var power = exponent - fractionLength
        while digits.last == 0 {
            digits.removeLast()
            power += 1
        }
        if digits.isEmpty {
            self = .zero
            return
        }
        guard power >= -EventLimits.fractionDigits else {
            throw FieldError(
                field,
                "must have at most \(EventLimits.fractionDigits) digits after the decimal point, got \(-power) (\(Self.shown(text)))")
        }
        // value = digits × 10^power; in millionths, digits × 10^(power + 6), at most 10^18.
        let shift = power + EventLimits.fractionDigits
        guard digits.count + shift <= 19 else { throw Self.outOfRange(text, field) }
        var m: UInt64 = 0
        for d in digits { m = m * 10 + UInt64(d) }
        for _ in 0..<shift {
            let (p, o) = m.multipliedReportingOverflow(by: 10)
            guard !o else { throw Self.outOfRange(text, field) }
            m = p
        }
        guard m <= UInt64(Self.maximumMicros) else { throw Self.outOfRange(text, field) }
        self.init(unchecked: negative ? -Int128(m) : Int128(m))
    }

    static func outOfRange(_ text: [UInt8], _ field: String) -> FieldError {
        FieldError(field, "must be a number between -1e12 and 1e12, got \(shown(text))")
    }

    /// A number's text for a message, shortened when long.
    static func shown(_ text: [UInt8]) -> String {
        let s = String(decoding: text.prefix(40), as: UTF8.self)
        return text.count > 40 ? s + "…" : s
    }

    /// The sum of `amounts`, exact: in 128 bits of millionths, which no sum of the amounts a
    /// store can hold (each at most 10^18 millionths) overflows.
    static func sum(_ amounts: some Sequence<Amount>) -> Amount {
        var micro: Int128 = 0
        for a in amounts { micro += a.micros }
        return Amount(unchecked: micro)
    }
}

extension ProgressRecorded {
    /// An entry of a checked amount for a measurable goal.
    public init(goal: UUID, amount: Amount, occurredAt: Instant? = nil, day: Day? = nil) {
        self.init(goal: goal, amount: amount as Amount?, occurredAt: occurredAt, day: day)
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
