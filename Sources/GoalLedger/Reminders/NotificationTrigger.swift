import Foundation

/// When a notification request fires: a calendar match of local date components (which the
/// notification center re-evaluates in the device's time zone) or one absolute instant.
public struct NotificationTrigger: Equatable, Hashable, Sendable {
    /// When the request fires: calendar components, or one instant.
    public enum Kind: Equatable, Hashable, Sendable {
        /// Fires whenever the local time matches every component given (weekday 1 = Sunday).
        case calendar(year: Int?, month: Int?, day: Int?, weekday: Int?, hour: Int, minute: Int)
        /// Fires once, at this instant.
        case date(Instant)
    }

    /// Calendar components or one instant.
    public var kind: Kind
    /// Whether it fires again at every match (calendar triggers only; a date trigger never
    /// repeats).
    public var repeats: Bool

    /// A trigger of `kind`, repeating or not.
    public init(kind: Kind, repeats: Bool) {
        self.kind = kind
        self.repeats = repeats
    }

    /// `{"type":"calendar","components":{…present keys…,"hour","minute"},"repeats"}` or
    /// `{"type":"date","fireAt","repeats":false}`.
    public var json: JSONValue {
        switch kind {
        case .calendar(let year, let month, let day, let weekday, let hour, let minute):
            var components: [(String, JSONValue)] = []
            for (key, value) in [("year", year), ("month", month), ("day", day), ("weekday", weekday)] {
                if let value { components.append((key, .number(Double(value)))) }
            }
            components.append(("hour", .number(Double(hour))))
            components.append(("minute", .number(Double(minute))))
            return .object([("type", .string("calendar")), ("components", .object(components)), ("repeats", .bool(repeats))])
        case .date(let fireAt):
            return .object([("type", .string("date")), ("fireAt", .string(fireAt.rfc3339)), ("repeats", .bool(repeats))])
        }
    }

    /// Reads the form `json` writes, refusing missing, unknown, mistyped and out-of-range members
    /// (field names relative to the trigger object).
    public init(json: JSONValue) throws(FieldError) {
        try self.init(json: json, path: "")
    }

    /// As `init(json:)`, with field names prefixed by `path` (e.g. `requests[3].trigger`).
    package init(json: JSONValue, path: String) throws(FieldError) {
        var reader = try ObjectReader(json, path: path)
        let type = try reader.string("type", required: true)!
        switch type {
        case "calendar":
            guard let raw = reader.raw("components") else { throw FieldError(reader.name("components"), "is required") }
            var c = try ObjectReader(raw, path: reader.name("components"))
            let year = try c.integer("year", in: 1...9999)
            let month = try c.integer("month", in: 1...12)
            let day = try c.integer("day", in: 1...31)
            let weekday = try c.integer("weekday", in: 1...7)
            guard let hour = try c.integer("hour", in: 0...23) else { throw FieldError(c.name("hour"), "is required") }
            guard let minute = try c.integer("minute", in: 0...59) else { throw FieldError(c.name("minute"), "is required") }
            try c.finish()
            if let month, let day {
                // Without a year, February 29 is still a date that exists.
                let days = Day.daysInMonth(year: year ?? 2000, month: month)
                guard day <= days else { throw FieldError(c.name("day"), "must be at most \(days) in month \(month), got \(day)") }
            }
            guard let repeats = try reader.bool("repeats") else { throw FieldError(reader.name("repeats"), "is required") }
            kind = .calendar(year: year, month: month, day: day, weekday: weekday, hour: hour, minute: minute)
            self.repeats = repeats
        case "date":
            guard let fireAt = try reader.instant("fireAt") else { throw FieldError(reader.name("fireAt"), "is required") }
            guard let repeats = try reader.bool("repeats") else { throw FieldError(reader.name("repeats"), "is required") }
            guard !repeats else { throw FieldError(reader.name("repeats"), "must be false for a date trigger") }
            kind = .date(fireAt)
            self.repeats = false
        default:
            throw FieldError(reader.name("type"), "must be one of calendar, date, got \"\(type)\"")
        }
        try reader.finish()
    }
}
