import Foundation

/// Turns a goal's reminder on or changes its time (`reminderSet`).
public struct ReminderSet: Equatable, Sendable {
    /// The goal whose reminder is set.
    public var goal: UUID
    /// Omitted components keep the current time, or default to 09:00 (filled in at append).
    public var hour: Int?
    /// See `hour`.
    public var minute: Int?
    /// The weekday a weekly goal's reminder fires on, 1…7 (1 = Sunday); nil: the device's
    /// first weekday (not "keep the current weekday", as with `devices`).
    public var weekday: Int?
    /// The reminder write the author replaced (filled in at append).
    public var replaces: UUID?
    /// The devices that should notify; nil: every device (not "keep the current list").
    public var devices: [String]?

    /// A reminder at the time given (components left out are filled in at append), on
    /// `weekday` for a weekly goal.
    public init(
        goal: UUID, hour: Int? = nil, minute: Int? = nil, weekday: Int? = nil, replaces: UUID? = nil, devices: [String]? = nil
    ) {
        self.goal = goal
        self.hour = hour
        self.minute = minute
        self.weekday = weekday
        self.replaces = replaces
        self.devices = devices
    }
}

extension ReminderSet: GoalEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) {
        let g = try r.goal()
        self.init(
            goal: g, hour: try r.integer("hour"), minute: try r.integer("minute"), weekday: try r.integer("weekday"),
            devices: try r.strings("devices", of: "device names"))
    }

    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = [("goal", .id(goal))]
        if let h = hour { m.append(("hour", .number(Double(h)))) }
        if let mi = minute { m.append(("minute", .number(Double(mi)))) }
        if let w = weekday { m.append(("weekday", .number(Double(w)))) }
        if let d = devices { m.append(("devices", .array(d.map { .string($0) }))) }
        if let r = replaces { m.append(("replaces", .id(r))) }
        return m
    }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        var f = PresenceReader(try r.varint())
        self.init(goal: try r.uuid())
        let hasHour = f.take()
        let hasMinute = f.take()
        let hasReplaces = f.take()
        let hasDevices = f.take()
        // A later bit: records written before weekdays existed never set it.
        let hasWeekday = f.take()
        if hasHour { hour = Int(try r.u8()) }
        if hasMinute { minute = Int(try r.u8()) }
        if hasReplaces { replaces = try r.uuid() }
        if hasDevices { devices = try r.strings() }
        if hasWeekday { weekday = Int(try r.u8()) }
    }

    func encode(into w: inout ByteWriter) {
        var f = Presence()
        f.mark(hour != nil)
        f.mark(minute != nil)
        f.mark(replaces != nil)
        f.mark(devices != nil)
        f.mark(weekday != nil)
        w.varint(f.bits)
        w.uuid(goal)
        if let h = hour { w.u8(UInt8(h)) }
        if let m = minute { w.u8(UInt8(m)) }
        if let r = replaces { w.uuid(r) }
        if let d = devices { w.strings(d) }
        if let wd = weekday { w.u8(UInt8(truncatingIfNeeded: wd)) }
    }

    func checkWellFormed(_ stage: GateStage) throws(FieldError) {
        try FieldRules.time(hour: hour, minute: minute, weekday: weekday, prefix: "")
        if let d = devices { try FieldRules.reminderDevices(d, field: "devices") }
        if stage == .stored && (hour == nil || minute == nil) {
            throw FieldError(hour == nil ? "hour" : "minute", "a stored reminderSet carries hour and minute")
        }
    }

    /// Omitted components keep the current time (09:00 without one); an omitted weekday is the
    /// device's first weekday, whatever the current one is. Records the write replaced.
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError) {
        let current = (state.reminder?.value ?? nil) ?? .default
        hour = hour ?? current.hour
        minute = minute ?? current.minute
        replaces = state.reminder?.stamp.event
    }

    func registerWrites(as type: EventType) -> [RegisterWrite] {
        let time = ReminderTime(unchecked: hour ?? 9, minute ?? 0, weekday: weekday).json
        return [RegisterWrite(register: .reminder, replaces: replaces, value: time)]
    }
    func yieldsToDeletion(as type: EventType) -> Bool { true }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        AuditWrites(facts: [.register(.reminder)], replaced: [.reminder: replaces])
    }
}
