import Foundation

// The screen-ready values in the JSON forms the command line prints (`ledger goals --json`,
// `ledger show --json`), so that an app can cache them or hand them to a widget with
// `JSONEncoder` and `JSONDecoder`. The forms keep their keys and may gain new ones; decoding
// ignores keys it does not know. Every value is checked as the ledger checks an event's fields
// (a title of 1 to 200 characters, an amount with at most six digits after the point, a real
// date, an RFC 3339 instant, …): a value that breaks a rule, a missing key or a value of the
// wrong type is refused with a `DecodingError` whose coding path ends with the key, and whose
// description starts with the value's path (`entries[0].amount must have …`).

/// The members of a goal's JSON form, and a snapshot's `view`.
enum GoalCodingKeys: String, CodingKey {
    case id, title, details, cadence, targetDate, progress, reminder, tags, deleted, position, entries, versions, createdAt, view
}

/// The members of a goal's `versions`: its editable fields.
struct GoalFieldCodingKey: CodingKey {
    let field: GoalField
    init(_ field: GoalField) { self.field = field }
    init?(stringValue: String) {
        guard let field = GoalField(rawValue: stringValue) else { return nil }
        self.field = field
    }
    init?(intValue: Int) { nil }
    var stringValue: String { field.rawValue }
    var intValue: Int? { nil }
}

/// The members of a goal's `progress`.
enum GoalProgressCodingKeys: String, CodingKey {
    case kind, target, unit
}

/// The members of a goal's `reminder`.
enum GoalReminderCodingKeys: String, CodingKey {
    case hour, minute, weekday, devices
}

/// A goal encodes as the goal facts of the command line's JSON form (``GoalState/json``), keys in
/// this order:
///
///     {"id": "3C2E1B7A-…", "title": "Drink water", "details": null, "cadence": "daily",
///      "targetDate": "2026-12-31" | null,
///      "progress": {"kind": "outcome"} | {"kind": "measurable", "target": 2, "unit": "l" | null},
///      "reminder": {"hour": 9, "minute": 0, "weekday": 7, "devices": ["phone"]} | null,
///      "tags": ["health"], "deleted": false, "position": "7f" (once moved),
///      "entries": [ProgressEntry, …], "versions": {…}, "createdAt": "2026-11-02T07:00:00Z"}
///
/// Ids are upper-case UUID strings, days `YYYY-MM-DD`; `reminder.weekday` (1 = Sunday) is present
/// only when a weekday was chosen; `reminder.devices` (``reminderDevices``)
/// is present only when the reminder is routed to some devices, and without a reminder there are
/// none. Beyond the command line's form:
///
/// - `progress.unit` of an outcome goal, present only when it has one (an outcome goal has a unit
///   only when another device's edit wrote one, which the command line does not print);
/// - `progress.target` of a measurable goal is null when the goal has none (a goal the ledger
///   folds always has one; the command line would print 0);
/// - each entry's `hlc` (see ``ProgressEntry``);
/// - `versions`, after `entries`: each editable field's ``FieldVersion`` (`{"title": "6F1C…",
///   "details": "6F1C…", …}`, the id of the event whose write the field holds), so that a cached
///   goal can still guard an edit. Decoding takes it when present; a goal without it has no
///   versions (``Goal/version(of:)``).
/// - `createdAt`, the wall time of the goal's creation (a form without it decodes as 1970).
///
/// Decoding requires every key of the form (`details`, `targetDate`, `reminder` and, for a
/// measurable goal, `progress.target` and `progress.unit` as null when there is no value) and
/// applies the ledger's rules to each value.
extension Goal: Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(members: try decoder.container(keyedBy: GoalCodingKeys.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: GoalCodingKeys.self)
        try encodeMembers(into: &c)
    }

    /// The goal from the members of `c` (a goal's, or a snapshot's, whose `view` is the caller's).
    init(members c: KeyedDecodingContainer<GoalCodingKeys>) throws {
        self.init(id: try c.decode(String.self, forKey: .id, checkedBy: UUIDText.parse), progressKind: .outcome, tags: [], entries: [])
        // The facts in the order of the form: `progress`, with the kind, where its first register is.
        var progress: KeyedDecodingContainer<GoalProgressCodingKeys>?
        for fact in GoalFact.all {
            switch fact {
            case .register(let register):
                if register.place == .progress, progress == nil {
                    let p = try c.nestedContainer(keyedBy: GoalProgressCodingKeys.self, forKey: .progress)
                    progressKind = try p.decode(ProgressKind.self, forKey: .kind)
                    progress = p
                }
                try decode(register, from: c, progress: progress)
            case .tags:
                let tags = try c.decode([String].self, forKey: .tags)
                for (i, tag) in tags.enumerated() {
                    do throws(FieldError) {
                        _ = try FieldRules.tag(tag, field: "tags")
                    } catch {
                        throw DecodingError.ledgerField(c.codingPath + [GoalCodingKeys.tags, IndexCodingKey(i)], error)
                    }
                }
                self.tags = tags
            }
        }
        entries = try c.decode([ProgressEntry].self, forKey: .entries)
        if c.contains(.versions), try !c.decodeNil(forKey: .versions) {
            // Fields this version does not know are left out, as unknown keys are.
            let v = try c.nestedContainer(keyedBy: GoalFieldCodingKey.self, forKey: .versions)
            for field in GoalField.allCases where v.contains(GoalFieldCodingKey(field)) {
                fieldVersions[field] = try v.decode(FieldVersion.self, forKey: GoalFieldCodingKey(field))
            }
        }
        // A form cached before goals kept their creation time lacks it.
        createdAt = try c.decodeIfPresent(Instant.self, forKey: .createdAt) ?? .earliest
    }

    /// Reads `register`'s member of `c` (of `progress`, for a register placed there), checked by
    /// the ledger's rules: a column of the register table (`GoalState.swift`).
    private mutating func decode(
        _ register: GoalRegister, from c: KeyedDecodingContainer<GoalCodingKeys>, progress: KeyedDecodingContainer<GoalProgressCodingKeys>?
    ) throws {
        func unitRule(_ s: String) throws(FieldError) -> String { try FieldRules.unit(s, field: "unit") }
        switch register {
        case .title:
            title = try c.decode(String.self, forKey: .title) { s throws(FieldError) in try FieldRules.title(s, field: "title") }
        case .details:
            details = try c.decodeNullable(String.self, forKey: .details).map { s in
                try c.check(s, at: .details) { s throws(FieldError) in try FieldRules.details(s, field: "details") }
            }
        case .cadence:
            cadence = try c.decode(Cadence.self, forKey: .cadence)
        case .targetDate:
            targetDate = try c.decodeNullable(Day.self, forKey: .targetDate).map { d in
                try c.check(d, at: .targetDate) { d throws(FieldError) in try FieldRules.targetDate(d, field: "targetDate") }
            }
        case .target:
            // An outcome goal has no target.
            guard let p = progress, progressKind == .measurable else { return }
            target = try p.decodeNullable(Amount.self, forKey: .target).map { t in
                try p.check(t, at: .target) { t throws(FieldError) in try t.checkedTarget(field: "target") }
            }
        case .unit:
            guard let p = progress else { return }
            switch progressKind {
            case .measurable: unit = try p.decodeNullable(String.self, forKey: .unit).map { try p.check($0, at: .unit, unitRule) }
            case .outcome: unit = try p.decodeIfPresent(String.self, forKey: .unit).map { try p.check($0, at: .unit, unitRule) }
            }
        case .reminder:
            guard c.contains(.reminder) else { throw DecodingError.missing(.reminder, in: c) }
            if try !c.decodeNil(forKey: .reminder) {
                let r = try c.nestedContainer(keyedBy: GoalReminderCodingKeys.self, forKey: .reminder)
                reminder = try ReminderTime(from: r, hour: .hour, minute: .minute, weekday: .weekday)
                reminderDevices = try r.decodeIfPresent([String].self, forKey: .devices).map { list in
                    try r.check(list, at: .devices) { list throws(FieldError) in
                        try FieldRules.reminderDevices(list, field: "devices")
                        return list
                    }
                }
            }
        case .deleted:
            isDeleted = try c.decode(Bool.self, forKey: .deleted)
        case .position:
            position = try c.decodeIfPresent(String.self, forKey: .position).map { text in
                guard let key = PositionKey(hex: text) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .position, in: c, debugDescription: "position must be hex digits, got \"\(text)\"")
                }
                try c.check(key, at: .position) { k throws(FieldError) in
                    try k.check(field: "position")
                    return k
                }
                return key
            }
        }
    }

    /// Writes the goal's members into `c` (a goal's, or a snapshot's, which adds `view`).
    func encodeMembers(into c: inout KeyedEncodingContainer<GoalCodingKeys>) throws {
        try c.encode(id.upperString, forKey: .id)
        // The facts in the order of the form: `progress`, with the kind, where its first register is.
        var progress: KeyedEncodingContainer<GoalProgressCodingKeys>?
        for fact in GoalFact.all {
            switch fact {
            case .register(let register):
                if register.place == .progress, progress == nil {
                    var p = c.nestedContainer(keyedBy: GoalProgressCodingKeys.self, forKey: .progress)
                    try p.encode(progressKind, forKey: .kind)
                    progress = p
                }
                try encode(register, into: &c, progress: &progress)
            case .tags:
                try c.encode(tags, forKey: .tags)
            }
        }
        try c.encode(entries, forKey: .entries)
        if !fieldVersions.isEmpty {
            var v = c.nestedContainer(keyedBy: GoalFieldCodingKey.self, forKey: .versions)
            for field in GoalField.allCases {
                if let version = fieldVersions[field] { try v.encode(version, forKey: GoalFieldCodingKey(field)) }
            }
        }
        try c.encode(createdAt, forKey: .createdAt)
    }

    /// Writes `register`'s member into `c` (into `progress`, for a register placed there): a
    /// column of the register table (`GoalState.swift`).
    private func encode(
        _ register: GoalRegister, into c: inout KeyedEncodingContainer<GoalCodingKeys>,
        progress: inout KeyedEncodingContainer<GoalProgressCodingKeys>?
    ) throws {
        switch register {
        case .title: try c.encode(title, forKey: .title)
        case .details: try c.encodeNullable(details, forKey: .details)
        case .cadence: try c.encode(cadence, forKey: .cadence)
        case .targetDate: try c.encodeNullable(targetDate, forKey: .targetDate)
        case .target:
            if progressKind == .measurable { try progress?.encodeNullable(target, forKey: .target) }
        case .unit:
            if progressKind == .measurable {
                try progress?.encodeNullable(unit, forKey: .unit)
            } else if let unit {
                try progress?.encode(unit, forKey: .unit)
            }
        case .reminder:
            if let reminder {
                var r = c.nestedContainer(keyedBy: GoalReminderCodingKeys.self, forKey: .reminder)
                try reminder.encodeMembers(into: &r, hour: .hour, minute: .minute, weekday: .weekday)
                if let reminderDevices { try r.encode(reminderDevices, forKey: .devices) }
            } else {
                try c.encodeNil(forKey: .reminder)
            }
        case .deleted: try c.encode(isDeleted, forKey: .deleted)
        case .position: if let position { try c.encode(position.description, forKey: .position) }
        }
    }
}

/// An entry encodes as in the command line's JSON form (``ProgressEntry/json``), with one key
/// added:
///
///     {"id": "6F1C…", "amount": 0.1 | "completed": true, "occurredAt": "2026-11-02T07:00:00Z",
///      "day": "2026-11-02", "device": "phone", "hlc": "0001A3F2C4B00000"}
///
/// - `hlc`: the clock of the event the entry came from, as sixteen hex digits (``HLC``); with
///   `device`, the entry's place in canonical order. Decoding requires it, so output of the
///   command line, which lacks it, is not an entry.
///
/// Exactly one of `amount` (checked as an ``Amount``) and `completed` is present; `occurredAt`
/// is an RFC 3339 instant, `day` a real date, `device` a device name.
extension ProgressEntry: Codable {
    enum CodingKeys: String, CodingKey {
        case id, amount, completed, occurredAt, day, device, hlc
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let id = try c.decode(String.self, forKey: .id, checkedBy: UUIDText.parse)
        let amount = try c.decodeIfPresent(Amount.self, forKey: .amount)
        let completed = try c.decodeIfPresent(Bool.self, forKey: .completed)
        if amount == nil && completed == nil {
            throw DecodingError.keyNotFound(
                CodingKeys.amount,
                DecodingError.Context(
                    codingPath: c.codingPath,
                    debugDescription:
                        "\(CodingPathText.text(c.codingPath + [CodingKeys.amount])) is required (or completed, for an outcome goal)"))
        }
        if amount != nil && completed != nil {
            throw DecodingError.ledgerField(
                c.codingPath + [CodingKeys.completed], "give either amount (measurable) or completed (outcome), not both")
        }
        self.init(
            id: id, amount: amount, completed: completed, occurredAt: try c.decode(Instant.self, forKey: .occurredAt),
            day: try c.decode(Day.self, forKey: .day),
            device: try c.decode(String.self, forKey: .device) { s throws(FieldError) in
                try FieldRules.deviceName(s, field: "device")
                return s
            },
            hlc: try c.decode(HLC.self, forKey: .hlc))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.upperString, forKey: .id)
        if let amount { try c.encode(amount, forKey: .amount) }
        if let completed { try c.encode(completed, forKey: .completed) }
        try c.encode(occurredAt, forKey: .occurredAt)
        try c.encode(day, forKey: .day)
        try c.encode(device, forKey: .device)
        try c.encode(hlc, forKey: .hlc)
    }
}

/// A period encodes as `{"start","end"}`, two days; decoding refuses an `end` before `start`. (A
/// view writes its period as `periodStart` and `periodEnd`, see ``GoalView``.)
extension Period: Codable {
    enum CodingKeys: String, CodingKey {
        case start, end
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self = try Period(checking: c.decode(Day.self, forKey: .start), c.decode(Day.self, forKey: .end), in: c, end: .end)
    }

    /// `start…end`, refused at `endKey` of `c` when `end` is before `start`.
    init<K: CodingKey>(checking start: Day, _ end: Day, in c: KeyedDecodingContainer<K>, end endKey: K) throws {
        guard start <= end else {
            throw DecodingError.ledgerField(c.codingPath + [endKey], "must not be before the period's start, got \(end) before \(start)")
        }
        self.init(start: start, end: end)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(start, forKey: .start)
        try c.encode(end, forKey: .end)
    }
}

/// A streak encodes as `{"current","best"}`; decoding refuses a negative `current` and a `best`
/// below `current`.
extension Streak: Codable {
    enum CodingKeys: String, CodingKey {
        case current, best
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let current = try c.decode(Int.self, forKey: .current)
        let best = try c.decode(Int.self, forKey: .best)
        guard current >= 0 else {
            throw DecodingError.ledgerField(c.codingPath + [CodingKeys.current], "must not be negative, got \(current)")
        }
        guard best >= current else {
            throw DecodingError.ledgerField(c.codingPath + [CodingKeys.best], "must be at least current (\(current)), got \(best)")
        }
        self.init(current: current, best: best)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(current, forKey: .current)
        try c.encode(best, forKey: .best)
    }
}

/// A view encodes as in the command line's JSON form (``GoalView/json``):
///
///     {"periodStart": "2026-11-02" | null, "periodEnd": "2026-11-08" | null,
///      "value": 0.3 | true, "completed": true, "streak": {"current": 1, "best": 3} | null}
///
/// A one-time goal's period and streak are null; an outcome goal's `value` (a nil ``value``) is
/// its `completed`. Decoding refuses a period with one end null or its end before its start, a
/// streak that is null exactly when the period is not (or the reverse), and a `true`/`false`
/// value that differs from `completed`.
extension GoalView: Codable {
    enum CodingKeys: String, CodingKey {
        case periodStart, periodEnd, value, completed, streak
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch (try c.decodeNullable(Day.self, forKey: .periodStart), try c.decodeNullable(Day.self, forKey: .periodEnd)) {
        case (nil, nil): period = nil
        case (let start?, let end?): period = try Period(checking: start, end, in: c, end: .periodEnd)
        case (nil, _?): throw DecodingError.ledgerField(c.codingPath + [CodingKeys.periodStart], "must be a day when periodEnd is one")
        case (_?, nil): throw DecodingError.ledgerField(c.codingPath + [CodingKeys.periodEnd], "must be a day when periodStart is one")
        }
        completed = try c.decode(Bool.self, forKey: .completed)
        if let flag = try? c.decode(Bool.self, forKey: .value) {
            guard flag == completed else {
                throw DecodingError.ledgerField(
                    c.codingPath + [CodingKeys.value],
                    "must be a number, or equal completed (\(completed)) for an outcome goal, got \(flag)")
            }
            value = nil
        } else {
            value = try c.decode(Amount.self, forKey: .value)
        }
        streak = try c.decodeNullable(Streak.self, forKey: .streak)
        if (streak == nil) != (period == nil) {
            throw DecodingError.ledgerField(
                c.codingPath + [CodingKeys.streak],
                period == nil ? "must be null when the view has no period (a one-time goal)" : "must be given when the view has a period")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeNullable(period?.start, forKey: .periodStart)
        try c.encodeNullable(period?.end, forKey: .periodEnd)
        if let value {
            try c.encode(value, forKey: .value)
        } else {
            try c.encode(completed, forKey: .value)
        }
        try c.encode(completed, forKey: .completed)
        try c.encodeNullable(streak, forKey: .streak)
    }
}

/// A snapshot encodes as a goal and its view in the form `ledger goals --json` and
/// `ledger show --json` print: the members of its ``Goal`` (with the keys ``Goal`` adds) and
/// `view` (``GoalView``). The members are those of the form; their order in the text is the
/// encoder's (`JSONEncoder` with `.sortedKeys` gives the same bytes for equal values).
///
///     let data = try JSONEncoder().encode(try store.read { try $0.goals(now: now) })
///     let rows = try JSONDecoder().decode([GoalSnapshot].self, from: data)   // equal values
extension GoalSnapshot: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: GoalCodingKeys.self)
        self.init(goal: try Goal(members: c), view: try c.decode(GoalView.self, forKey: .view))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: GoalCodingKeys.self)
        try goal.encodeMembers(into: &c)
        try c.encode(view, forKey: .view)
    }
}

/// Ids in the JSON forms: a UUID string (written upper-case).
enum UUIDText {
    static func parse(_ text: String) throws(FieldError) -> UUID {
        guard let id = UUID.parse(text) else { throw FieldError("id", "must be a UUID, got \"\(text)\"") }
        return id
    }
}

extension KeyedDecodingContainer {
    /// The value of `key`, which must be present and may be null (nil).
    func decodeNullable<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key) else { throw DecodingError.missing(key, in: self) }
        return try decodeIfPresent(type, forKey: key)
    }

    /// The value of `key` passed through a rule of the ledger; a refusal is a `DecodingError` at
    /// the key.
    func decode<T: Decodable, R>(_ type: T.Type, forKey key: Key, checkedBy rule: (T) throws(FieldError) -> R) throws -> R {
        try check(try decode(type, forKey: key), at: key, rule)
    }

    /// `value`, the value of `key`, passed through a rule of the ledger; a refusal is a
    /// `DecodingError` at the key.
    func check<T, R>(_ value: T, at key: Key, _ rule: (T) throws(FieldError) -> R) throws -> R {
        do throws(FieldError) {
            return try rule(value)
        } catch {
            throw DecodingError.ledgerField(codingPath + [key], error)
        }
    }
}

extension DecodingError {
    /// A key the form requires (null when there is no value) that is not there.
    static func missing<K: CodingKey>(_ key: K, in c: KeyedDecodingContainer<K>) -> DecodingError {
        .keyNotFound(
            key,
            Context(codingPath: c.codingPath, debugDescription: "\(CodingPathText.text(c.codingPath + [key])) is required (null for none)"))
    }
}

extension KeyedEncodingContainer {
    /// `value`, or null for nil: the JSON forms write every key, null when there is no value.
    mutating func encodeNullable<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}
