import Foundation

/// A change of one or more fields. `nil` means "not changed"; `.some(nil)` clears an optional field.
public struct GoalEdited: Equatable, Sendable {
    /// The goal changed.
    public var goal: UUID
    /// The new title.
    public var title: String?
    /// The new details; `.some(nil)` clears them.
    public var details: String??
    /// The new cadence.
    public var cadence: Cadence?
    /// The new target date; `.some(nil)` clears it.
    public var targetDate: Day??
    /// The new target of a measurable goal.
    public var target: Double?
    /// The new unit of a measurable goal; `.some(nil)` clears it.
    public var unit: String??
    /// For each changed field, the event whose value the author replaced (filled in at append).
    public var replaces: [GoalField: UUID]

    /// The fields the edit changes, in `GoalField` order.
    public var changedFields: [GoalField] {
        var fields: [GoalField] = []
        if title != nil { fields.append(.title) }
        if details != nil { fields.append(.details) }
        if cadence != nil { fields.append(.cadence) }
        if targetDate != nil { fields.append(.targetDate) }
        if target != nil { fields.append(.target) }
        if unit != nil { fields.append(.unit) }
        return fields
    }

    /// An edit of the fields given; the others stay unchanged.
    public init(
        goal: UUID, title: String? = nil, details: String?? = nil, cadence: Cadence? = nil, targetDate: Day?? = nil,
        target: Double? = nil, unit: String?? = nil, replaces: [GoalField: UUID] = [:]
    ) {
        self.goal = goal
        self.title = title
        self.details = details
        self.cadence = cadence
        self.targetDate = targetDate
        self.target = target
        self.unit = unit
        self.replaces = replaces
    }
}

extension GoalEdited: GoalEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) {
        self.init(goal: try r.goal(), replaces: [:])
        title = try r.string("title")
        details = try r.nullableString("details")
        cadence = try r.enumeration("cadence", Cadence.self)
        targetDate = try r.nullableDay("targetDate")
        target = try r.number("target")
        unit = try r.nullableString("unit")
    }

    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = []
        m.append(("goal", .id(goal)))
        if let t = title { m.append(("title", .string(t))) }
        if let d = details { m.append(("details", .nullable(d))) }
        if let c = cadence { m.append(("cadence", .string(c.rawValue))) }
        if let t = targetDate { m.append(("targetDate", .day(t))) }
        if let t = target { m.append(("target", .number(t))) }
        if let u = unit { m.append(("unit", .nullable(u))) }
        if !replaces.isEmpty {
            m.append(("replaces", .object(replaces.sorted { $0.key < $1.key }.map { ($0.key.rawValue, .id($0.value)) })))
        }
        return m
    }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        var f = PresenceReader(try r.varint())
        self.init(goal: try r.uuid(), replaces: [:])
        let hasTitle = f.take()
        let hasDetails = f.take()
        let detailsValue = f.take()
        let hasCadence = f.take()
        let hasDate = f.take()
        let dateValue = f.take()
        let hasTarget = f.take()
        let hasUnit = f.take()
        let unitValue = f.take()
        if hasTitle { title = try r.string() }
        if hasDetails { details = .some(detailsValue ? try r.string() : nil) }
        if hasCadence { cadence = try Cadence.decode(try r.u8(), "cadence") }
        if hasDate { targetDate = .some(dateValue ? try r.day() : nil) }
        if hasTarget { target = try r.double() }
        if hasUnit { unit = .some(unitValue ? try r.string() : nil) }
        for _ in 0..<(try r.count()) {
            let field = try GoalField.decode(try r.u8(), "field")
            replaces[field] = try r.uuid()
        }
    }

    func encode(into w: inout ByteWriter) {
        // Two bits per clearable field: changed, then has a value.
        var f = Presence()
        f.mark(title != nil)
        f.mark(details != nil)
        f.mark((details ?? nil) != nil)
        f.mark(cadence != nil)
        f.mark(targetDate != nil)
        f.mark((targetDate ?? nil) != nil)
        f.mark(target != nil)
        f.mark(unit != nil)
        f.mark((unit ?? nil) != nil)
        w.varint(f.bits)
        w.uuid(goal)
        if let t = title { w.string(t) }
        if let d = details ?? nil { w.string(d) }
        if let c = cadence { w.u8(c.storedCode) }
        if let t = targetDate ?? nil { w.day(t) }
        if let t = target { w.double(t) }
        if let u = unit ?? nil { w.string(u) }
        let replaced = replaces.sorted { $0.key < $1.key }
        w.varint(UInt64(replaced.count))
        for (field, id) in replaced {
            w.u8(field.storedCode)
            w.uuid(id)
        }
    }

    func checkWellFormed(_ stage: GateStage) throws(FieldError) {
        guard !changedFields.isEmpty else {
            throw FieldError(nil, "goalEdited must change at least one of title, details, cadence, targetDate, target, unit")
        }
        if let t = title { _ = try FieldRules.title(t, field: "title") }
        if let d = details ?? nil { _ = try FieldRules.details(d, field: "details") }
        if let d = targetDate ?? nil { _ = try FieldRules.targetDate(d, field: "targetDate") }
        if let t = target { _ = try FieldRules.target(t, field: "target") }
        if let u = unit ?? nil { _ = try FieldRules.unit(u, field: "unit") }
    }

    /// An outcome goal keeps its kind; each changed field records the write it replaces.
    mutating func prepare(as type: EventType, goal state: GoalState, _ c: LocalContext) throws(FieldError) {
        if state.kind == .outcome {
            if target != nil { throw FieldError("target", "the goal measures an outcome; its progress kind cannot change") }
            if unit != nil { throw FieldError("unit", "the goal measures an outcome; its progress kind cannot change") }
        }
        replaces = [:]
        for field in changedFields {
            if let stamp = state.stamp(of: field) { replaces[field] = stamp.event }
        }
    }

    /// Each changed field is its own register.
    func registerWrites(as type: EventType) -> [RegisterWrite] {
        jsonMembers.compactMap { name, value in
            GoalField(rawValue: name).map { RegisterWrite(field: name, replaces: replaces[$0], value: value) }
        }
    }
    func yieldsToDeletion(as type: EventType) -> Bool { true }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        var writes = AuditWrites(fields: changedFields.map(\.rawValue))
        for f in changedFields { writes.replaced[f.rawValue] = .some(replaces[f]) }
        return writes
    }
}
