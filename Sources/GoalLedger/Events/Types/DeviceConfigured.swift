import Foundation

/// A device's own settings (`deviceConfigured`): time zone, first weekday, locale and how it
/// schedules reminders.
public struct DeviceConfigured: Equatable, Sendable {
    /// An IANA time zone: the device's days and reminder times are in it.
    public var timeZone: String
    /// The first day of the week, 1 (Sunday) to 7.
    public var firstWeekday: Int
    /// A locale such as `en_US`, for the reminders' texts.
    public var locale: String
    /// How the device schedules goal reminders.
    public var strategy: NotificationStrategy
    /// With the window strategy, how many days ahead it schedules (1 to 30).
    public var windowDays: Int
    /// How many notification requests the device holds at most (1 to 512).
    public var capacity: Int

    /// The settings of a device that has reported none.
    public static let defaults = DeviceConfigured(
        timeZone: "UTC", firstWeekday: 1, locale: "en_US", strategy: .repeating, windowDays: 7, capacity: 64)

    /// Settings in `timeZone`, with the defaults of the JSON form for the rest.
    public init(
        timeZone: String, firstWeekday: Int = 1, locale: String = "en_US", strategy: NotificationStrategy = .repeating,
        windowDays: Int = 7, capacity: Int = 64
    ) {
        self.timeZone = timeZone
        self.firstWeekday = firstWeekday
        self.locale = locale
        self.strategy = strategy
        self.windowDays = windowDays
        self.capacity = capacity
    }
}

extension DeviceConfigured: DeviceEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) {
        let d = DeviceConfigured.defaults
        self.init(
            timeZone: try r.string("timeZone", required: true)!,
            firstWeekday: try r.integer("firstWeekday") ?? d.firstWeekday,
            locale: try r.string("locale") ?? d.locale,
            strategy: try r.enumeration("strategy", NotificationStrategy.self) ?? d.strategy,
            windowDays: try r.integer("windowDays") ?? d.windowDays,
            capacity: try r.integer("capacity") ?? d.capacity)
    }

    var jsonMembers: [(String, JSONValue)] {
        [
            ("timeZone", .string(timeZone)), ("firstWeekday", .number(Double(firstWeekday))), ("locale", .string(locale)),
            ("strategy", .string(strategy.rawValue)), ("windowDays", .number(Double(windowDays))),
            ("capacity", .number(Double(capacity))),
        ]
    }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        _ = try r.varint()
        try self.init(fields: &r)
    }

    func encode(into w: inout ByteWriter) {
        w.varint(0)
        encodeFields(into: &w)
    }

    /// The settings' fields in their stored order, shared by the event record and the device's
    /// projection row.
    init(fields r: inout ByteReader) throws(RecordDecodingError) {
        let tz = try r.string()
        let fw = Int(try r.u8())
        // A weekday, as the gate has always required: any other value (a damaged row) would make
        // weeks that never start, or index past a week's names.
        guard (1...7).contains(fw) else { throw RecordDecodingError(reason: "a first weekday out of range (\(fw))") }
        let locale = try r.string()
        let strategy = try NotificationStrategy.decode(try r.u8(), "strategy")
        let window = Int(try r.u8())
        let capacity = Int(clamping: try r.varint())
        self.init(timeZone: tz, firstWeekday: fw, locale: locale, strategy: strategy, windowDays: window, capacity: capacity)
    }

    func encodeFields(into w: inout ByteWriter) {
        w.string(timeZone)
        w.u8(UInt8(firstWeekday))
        w.string(locale)
        w.u8(strategy.storedCode)
        w.u8(UInt8(windowDays))
        w.varint(UInt64(capacity))
    }

    func checkWellFormed(_ stage: GateStage) throws(FieldError) {
        _ = try FieldRules.timeZone(timeZone, field: "timeZone")
        try FieldRules.integer(firstWeekday, in: 1...7, field: "firstWeekday")
        _ = try FieldRules.locale(locale, field: "locale")
        try FieldRules.integer(windowDays, in: 1...30, field: "windowDays")
        try FieldRules.integer(capacity, in: 1...512, field: "capacity")
    }

    /// A device may always report its settings, in a time zone its own system knows: the gate
    /// checks only the zone's spelling (the same on every platform), the device that names the
    /// zone must be able to plan in it.
    mutating func prepare(as type: EventType, _ c: LocalContext) throws(FieldError) {
        guard FieldRules.isKnownTimeZone(timeZone) else {
            throw FieldError("timeZone", "\"\(timeZone)\" is not a time zone this system knows")
        }
    }

    /// Not about a goal: no conflicts.
    func registerWrites(as type: EventType) -> [RegisterWrite] { [] }
    func yieldsToDeletion(as type: EventType) -> Bool { false }

    /// The latest settings the device reported win.
    func fold(into device: inout DeviceState, _ stamp: Stamp) { device.configuration.offer(self, stamp) }
    var trustChange: TrustChange? { nil }
}
