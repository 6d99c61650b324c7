import Foundation

/// A new goal and its first values (`goalCreated`).
public struct GoalCreated: Equatable, Sendable {
    /// The new goal's id.
    public var goal: UUID
    /// The title (1 to 200 characters, not blank).
    public var title: String
    /// Free text, at most 2000 characters.
    public var details: String?
    /// How often progress resets.
    public var cadence: Cadence
    /// The day the goal should be reached by.
    public var targetDate: Day?
    /// A completion flag, or an amount against `target`.
    public var progressKind: ProgressKind
    /// For a measurable goal, the amount a period must reach.
    public var target: Amount?
    /// The double an older record held when it is not exactly `target` (see ``ProgressRecorded``).
    var legacyTarget: Double?
    /// For a measurable goal, the unit of its amounts.
    public var unit: String?
    /// The reminder's time, or nil for no reminder.
    public var reminder: ReminderTime?
    /// The goal's first tags.
    public var tags: [String]
    /// The devices that should notify (`reminder.devices`); nil: every device.
    public var reminderDevices: [String]?

    /// A creation with the defaults of the JSON form for every value not given.
    public init(
        goal: UUID, title: String, details: String? = nil, cadence: Cadence = .once, targetDate: Day? = nil,
        progressKind: ProgressKind = .outcome, target: Amount? = nil, unit: String? = nil,
        reminder: ReminderTime? = nil, tags: [String] = [], reminderDevices: [String]? = nil
    ) {
        self.goal = goal
        self.title = title
        self.details = details
        self.cadence = cadence
        self.targetDate = targetDate
        self.progressKind = progressKind
        self.target = target
        self.unit = unit
        self.reminder = reminder
        self.tags = tags
        self.reminderDevices = reminderDevices
    }
}

extension GoalCreated: GoalEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) {
        let g = try r.goal()
        let title = try r.string("title", required: true)!
        let details = try r.string("details")
        let cadence = try r.enumeration("cadence", Cadence.self) ?? .once
        let targetDate = try r.day("targetDate")
        var kind = ProgressKind.outcome
        var target: Amount?
        var unit: String?
        if let p = r.raw("progress") {
            var pr = try ObjectReader(p, path: "progress")
            guard let k = try pr.enumeration("kind", ProgressKind.self) else {
                throw FieldError("progress.kind", "is required")
            }
            kind = k
            if kind == .measurable {
                guard let t = try pr.amount("target") else { throw FieldError("progress.target", "is required for a measurable goal") }
                target = t
                unit = try pr.string("unit")
            }
            try pr.finish()
        }
        var reminder: ReminderTime?
        var reminderDevices: [String]?
        if let rv = r.raw("reminder") {
            var rr = try ObjectReader(rv, path: "reminder")
            reminder = ReminderTime(
                unchecked: try rr.integer("hour") ?? 9, try rr.integer("minute") ?? 0, weekday: try rr.integer("weekday"))
            reminderDevices = try rr.strings("devices", of: "device names")
            try rr.finish()
        }
        let tags = try r.strings("tags", of: "strings") ?? []
        self.init(
            goal: g, title: title, details: details, cadence: cadence, targetDate: targetDate,
            progressKind: kind, target: target, unit: unit, reminder: reminder, tags: tags,
            reminderDevices: reminderDevices)
    }

    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = []
        m.append(("goal", .id(goal)))
        m.append(("title", .string(title)))
        if let d = details { m.append(("details", .string(d))) }
        m.append(("cadence", .string(cadence.rawValue)))
        if let t = targetDate { m.append(("targetDate", .day(t))) }
        var progress: [(String, JSONValue)] = [("kind", .string(progressKind.rawValue))]
        if progressKind == .measurable {
            progress.append(("target", target.map { .amount($0) } ?? .number(legacyTarget ?? 0)))
            if let u = unit { progress.append(("unit", .string(u))) }
        }
        m.append(("progress", .object(progress)))
        if let r = reminder {
            var reminder = r.jsonMembers
            if let d = reminderDevices { reminder.append(("devices", .array(d.map { .string($0) }))) }
            m.append(("reminder", .object(reminder)))
        }
        if !tags.isEmpty { m.append(("tags", .array(tags.map { .string($0) }))) }
        return m
    }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        var f = PresenceReader(try r.varint())
        let goal = try r.uuid()
        let hasDetails = f.take()
        let hasDate = f.take()
        let hasTarget = f.take()
        let hasUnit = f.take()
        let hasReminder = f.take()
        let hasDevices = f.take()
        let hasTargetMicros = f.take()
        // A later bit: records written before weekdays existed never set it.
        let hasWeekday = f.take()
        guard !hasWeekday || hasReminder else { throw RecordDecodingError(reason: "a reminder weekday without a reminder") }
        let title = try r.string()
        let cadence = try Cadence.decode(try r.u8(), "cadence")
        let kind = try ProgressKind.decode(try r.u8(), "progress kind")
        self.init(
            goal: goal, title: title, details: nil, cadence: cadence, targetDate: nil,
            progressKind: kind, target: nil, unit: nil, reminder: nil, tags: [])
        if hasDetails { details = try r.string() }
        if hasDate { targetDate = try r.day() }
        (target, legacyTarget) = try StoredAmount.read(&r, double: hasTarget, micros: hasTargetMicros)
        if hasUnit { unit = try r.string() }
        if hasReminder {
            let (hour, minute) = (Int(try r.u8()), Int(try r.u8()))
            reminder = ReminderTime(unchecked: hour, minute, weekday: hasWeekday ? Int(try r.u8()) : nil)
        }
        if hasDevices { reminderDevices = try r.strings() }
        for _ in 0..<(try r.count()) { tags.append(try r.string()) }
    }

    func encode(into w: inout ByteWriter) {
        var f = Presence()
        f.mark(details != nil)
        f.mark(targetDate != nil)
        let targetDouble = StoredAmount.double(for: target, legacy: legacyTarget)
        f.mark(targetDouble != nil)
        f.mark(unit != nil)
        f.mark(reminder != nil)
        f.mark(reminderDevices != nil)
        f.mark(target != nil && targetDouble == nil)
        f.mark(reminder?.weekday != nil)
        w.varint(f.bits)
        w.uuid(goal)
        w.string(title)
        w.u8(cadence.storedCode)
        w.u8(progressKind.storedCode)
        if let d = details { w.string(d) }
        if let t = targetDate { w.day(t) }
        StoredAmount.write(target, double: targetDouble, into: &w)
        if let u = unit { w.string(u) }
        if let r = reminder {
            w.u8(UInt8(r.hour))
            w.u8(UInt8(r.minute))
            if let wd = r.weekday { w.u8(UInt8(truncatingIfNeeded: wd)) }
        }
        if let d = reminderDevices { w.strings(d) }
        w.varint(UInt64(tags.count))
        for t in tags { w.string(t) }
    }

    func checkWellFormed(_ stage: GateStage) throws(FieldError) {
        _ = try FieldRules.title(title, field: "title")
        if let d = details { _ = try FieldRules.details(d, field: "details") }
        if let d = targetDate { _ = try FieldRules.targetDate(d, field: "targetDate") }
        if progressKind == .measurable {
            guard target != nil || legacyTarget != nil else { throw FieldError("progress.target", "is required for a measurable goal") }
            try FieldRules.target(target, legacy: legacyTarget, field: "progress.target")
            if let u = unit { _ = try FieldRules.unit(u, field: "progress.unit") }
        } else if target != nil || legacyTarget != nil {
            throw FieldError("progress.target", "an outcome goal has no target")
        } else if unit != nil {
            throw FieldError("progress.unit", "an outcome goal has no unit")
        }
        if let r = reminder { try FieldRules.time(hour: r.hour, minute: r.minute, weekday: r.weekday, prefix: "reminder.") }
        if let d = reminderDevices {
            guard reminder != nil else { throw FieldError("reminder.devices", "devices without a reminder") }
            try FieldRules.reminderDevices(d, field: "reminder.devices")
        }
        try FieldRules.tags(tags, field: "tags")
    }

    /// `LocalRules` has checked that no event names the goal yet; nothing is filled in.
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError) {}

    /// A creation replaces nothing: its values are the goal's first.
    func registerWrites(as type: EventType) -> [RegisterWrite] { [] }
    func yieldsToDeletion(as type: EventType) -> Bool { false }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        AuditWrites(facts: GoalFact.all, omitsUnset: true)
    }
}
