import Foundation

/// The goal fields that `goalEdited` can change; each is its own last-writer register
/// (``register``).
public enum GoalField: String, CaseIterable, Sendable, Comparable {
    /// ``GoalCreated/title``.
    case title
    /// ``GoalCreated/details``.
    case details
    /// ``GoalCreated/cadence``.
    case cadence
    /// ``GoalCreated/targetDate``.
    case targetDate
    /// ``GoalCreated/target``.
    case target
    /// ``GoalCreated/unit``.
    case unit

    /// The register the field is (its raw value is the register's).
    public var register: GoalRegister {
        switch self {
        case .title: .title
        case .details: .details
        case .cadence: .cadence
        case .targetDate: .targetDate
        case .target: .target
        case .unit: .unit
        }
    }

    /// Whether the field can be cleared (`.some(nil)`): its stored form then takes a second
    /// presence bit, whether it has a value.
    var isClearable: Bool {
        switch self {
        case .details, .targetDate, .unit: true
        case .title, .cadence, .target: false
        }
    }

    /// The fields in the order of their stored codes: the order of an edit's stored form.
    static let stored = allCases.sorted { $0.storedCode < $1.storedCode }

    public static func < (a: GoalField, b: GoalField) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// Each field's one-byte code in a stored edit's `replaces` (see `StoredCode`).
extension GoalField: StoredCode {
    var storedCode: UInt8 {
        switch self {
        case .title: 0
        case .details: 1
        case .cadence: 2
        case .targetDate: 3
        case .target: 4
        case .unit: 5
        }
    }
}

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
    public var target: Amount?
    /// The double an older record held when it is not exactly `target` (see ``ProgressRecorded``).
    var legacyTarget: Double?
    /// The new unit of a measurable goal; `.some(nil)` clears it.
    public var unit: String??
    /// For each changed field, the event whose value the author replaced (filled in at append).
    public var replaces: [GoalField: UUID]

    /// The fields the edit changes, in `GoalField` order.
    public var changedFields: [GoalField] { GoalField.allCases.filter { value(of: $0) != nil } }

    /// An edit of the fields given; the others stay unchanged.
    public init(
        goal: UUID, title: String? = nil, details: String?? = nil, cadence: Cadence? = nil, targetDate: Day?? = nil,
        target: Amount? = nil, unit: String?? = nil, replaces: [GoalField: UUID] = [:]
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

extension GoalEdited {
    /// The new value of `field` in the JSON form (null: cleared); nil when the edit leaves the
    /// field unchanged.
    func value(of field: GoalField) -> JSONValue? {
        switch field {
        case .title: title.map { .string($0) }
        case .details: details.map { .nullable($0) }
        case .cadence: cadence.map { .string($0.rawValue) }
        case .targetDate: targetDate.map { .day($0) }
        case .target: target.map { .amount($0) } ?? legacyTarget.map { .number($0) }
        case .unit: unit.map { .nullable($0) }
        }
    }

    /// Reads `field`'s member of the JSON form.
    mutating func read(_ field: GoalField, from r: inout ObjectReader) throws(FieldError) {
        switch field {
        case .title: title = try r.string("title")
        case .details: details = try r.nullableString("details")
        case .cadence: cadence = try r.enumeration("cadence", Cadence.self)
        case .targetDate: targetDate = try r.nullableDay("targetDate")
        case .target: target = try r.amount("target")
        case .unit: unit = try r.nullableString("unit")
        }
    }

    /// Checks the new value of `field` against its limits.
    func check(_ field: GoalField) throws(FieldError) {
        switch field {
        case .title: if let t = title { _ = try FieldRules.title(t, field: "title") }
        case .details: if let d = details ?? nil { _ = try FieldRules.details(d, field: "details") }
        case .cadence: break  // an enumeration: its reading checked it
        case .targetDate: if let d = targetDate ?? nil { _ = try FieldRules.targetDate(d, field: "targetDate") }
        case .target: if target != nil || legacyTarget != nil { try FieldRules.target(target, legacy: legacyTarget, field: "target") }
        case .unit: if let u = unit ?? nil { _ = try FieldRules.unit(u, field: "unit") }
        }
    }

    /// Writes the new value of `field` as the stored form holds it (nothing when unchanged or
    /// cleared).
    func encodeValue(_ field: GoalField, into w: inout ByteWriter) {
        switch field {
        case .title: if let t = title { w.string(t) }
        case .details: if let d = details ?? nil { w.string(d) }
        case .cadence: if let c = cadence { w.u8(c.storedCode) }
        case .targetDate: if let t = targetDate ?? nil { w.day(t) }
        case .target: StoredAmount.write(target, double: StoredAmount.double(for: target, legacy: legacyTarget), into: &w)
        case .unit: if let u = unit ?? nil { w.string(u) }
        }
    }

    /// Reads the new value of a changed `field` as `encodeValue` wrote it; `hasValue` is false
    /// for a cleared field.
    mutating func decodeValue(_ field: GoalField, hasValue: Bool, from r: inout ByteReader) throws(RecordDecodingError) {
        switch field {
        case .title: title = try r.string()
        case .details: details = .some(hasValue ? try r.string() : nil)
        case .cadence: cadence = try Cadence.decode(try r.u8(), "cadence")
        case .targetDate: targetDate = .some(hasValue ? try r.day() : nil)
        case .target: (target, legacyTarget) = StoredAmount.fromDouble(try r.double())
        case .unit: unit = .some(hasValue ? try r.string() : nil)
        }
    }
}

extension GoalEdited: GoalEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) {
        self.init(goal: try r.goal(), replaces: [:])
        for field in GoalField.allCases { try read(field, from: &r) }
    }

    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = [("goal", .id(goal))]
        for field in GoalField.allCases {
            if let v = value(of: field) { m.append((field.rawValue, v)) }
        }
        if !replaces.isEmpty {
            m.append(("replaces", .object(replaces.sorted { $0.key < $1.key }.map { ($0.key.rawValue, .id($0.value)) })))
        }
        return m
    }

    /// A presence bitmask (for each field in stored-code order: changed, then for a clearable
    /// field whether it has a value), the goal, the new values in the same order, then the
    /// replaced writes by field code.
    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        var f = PresenceReader(try r.varint())
        self.init(goal: try r.uuid(), replaces: [:])
        let presence = GoalField.stored.map { field in (field, changed: f.take(), hasValue: field.isClearable ? f.take() : true) }
        // A target held in millionths has a bit of its own after every field's (its "changed"
        // bit announces the double form).
        let targetInMicros = f.take()
        for (field, changed, hasValue) in presence {
            if field == .target && targetInMicros {
                guard !changed else { throw RecordDecodingError(reason: "an amount stored twice") }
                target = try StoredAmount.fromMicros(&r)
            } else if changed {
                try decodeValue(field, hasValue: hasValue, from: &r)
            }
        }
        for _ in 0..<(try r.count()) {
            let field = try GoalField.decode(try r.u8(), "field")
            replaces[field] = try r.uuid()
        }
    }

    func encode(into w: inout ByteWriter) {
        var f = Presence()
        let targetDouble = StoredAmount.double(for: target, legacy: legacyTarget)
        for field in GoalField.stored {
            let v = value(of: field)
            f.mark(field == .target ? targetDouble != nil : v != nil)
            if field.isClearable { f.mark(v != nil && v != .null) }
        }
        f.mark(target != nil && targetDouble == nil)
        w.varint(f.bits)
        w.uuid(goal)
        for field in GoalField.stored { encodeValue(field, into: &w) }
        let replaced = replaces.sorted { $0.key.storedCode < $1.key.storedCode }
        w.varint(UInt64(replaced.count))
        for (field, id) in replaced {
            w.u8(field.storedCode)
            w.uuid(id)
        }
    }

    func checkWellFormed(_ stage: GateStage) throws(FieldError) {
        guard !changedFields.isEmpty else {
            throw FieldError(nil, "goalEdited must change at least one of " + GoalField.allCases.map(\.rawValue).joined(separator: ", "))
        }
        for field in GoalField.allCases { try check(field) }
    }

    /// An outcome goal keeps its kind; each changed field records the write it replaces.
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError) {
        if state.kind == .outcome {
            if target != nil || legacyTarget != nil {
                throw FieldError("target", "the goal measures an outcome; its progress kind cannot change")
            }
            if unit != nil { throw FieldError("unit", "the goal measures an outcome; its progress kind cannot change") }
        }
        replaces = [:]
        for field in changedFields {
            if let stamp = state.stamp(of: field.register) { replaces[field] = stamp.event }
        }
    }

    /// Each changed field is its own register.
    func registerWrites(as type: EventType) -> [RegisterWrite] {
        GoalField.allCases.compactMap { field in
            value(of: field).map { RegisterWrite(register: field.register, replaces: replaces[field], value: $0) }
        }
    }
    func yieldsToDeletion(as type: EventType) -> Bool { true }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        var writes = AuditWrites(facts: changedFields.map { .register($0.register) })
        for field in changedFields { writes.replaced[field.register] = .some(replaces[field]) }
        return writes
    }
}
