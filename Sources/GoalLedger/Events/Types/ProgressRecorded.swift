import Foundation

/// One progress entry (`progressRecorded`): an amount, or whether the goal was done; its id is
/// the event's.
public struct ProgressRecorded: Equatable, Sendable {
    /// The goal the entry counts for.
    public var goal: UUID
    /// For a measurable goal, the amount (may be negative).
    public var amount: Amount?
    /// The double an older record held for the amount when it is not exactly `amount` (−0, or
    /// a value the gate refuses): kept so that the record encodes to the same bytes.
    var legacyAmount: Double?
    /// For an outcome goal, whether it was done.
    public var completed: Bool?
    /// Defaults to the event's `at` (filled in at append).
    public var occurredAt: Instant?
    /// Defaults to `occurredAt`'s day in the author's time zone (filled in at append).
    public var day: Day?

    /// An entry of an amount or a completion (give one of the two).
    public init(goal: UUID, amount: Amount? = nil, completed: Bool? = nil, occurredAt: Instant? = nil, day: Day? = nil) {
        self.goal = goal
        self.amount = amount
        self.completed = completed
        self.occurredAt = occurredAt
        self.day = day
    }
}

extension ProgressRecorded: GoalEventPayload {
    static let schemas = [2]

    init(json r: inout ObjectReader) throws(FieldError) {
        let g = try r.goal()
        let amount = try r.amount("amount")
        let completed = try r.bool("completed")
        self.init(goal: g, amount: amount, completed: completed, occurredAt: try r.instant("occurredAt"), day: try r.day("day"))
    }

    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = [("goal", .id(goal))]
        if let a = amount { m.append(("amount", .amount(a))) } else if let l = legacyAmount { m.append(("amount", .number(l))) }
        if let c = completed { m.append(("completed", .bool(c))) }
        if let o = occurredAt { m.append(("occurredAt", .string(o.rfc3339))) }
        if let d = day { m.append(("day", .day(d))) }
        return m
    }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        var f = PresenceReader(try r.varint())
        self.init(goal: try r.uuid())
        let hasAmount = f.take()
        let hasCompleted = f.take()
        let completed = f.take()
        let hasOccurred = f.take()
        let hasDay = f.take()
        let hasMicros = f.take()
        (amount, legacyAmount) = try StoredAmount.read(&r, double: hasAmount, micros: hasMicros)
        if hasCompleted { self.completed = completed }
        if hasOccurred { occurredAt = try r.instant() }
        if hasDay { day = try r.day() }
    }

    func encode(into w: inout ByteWriter) {
        var f = Presence()
        let double = StoredAmount.double(for: amount, legacy: legacyAmount)
        f.mark(double != nil)
        f.mark(completed != nil)
        f.mark(completed == true)
        f.mark(occurredAt != nil)
        f.mark(day != nil)
        f.mark(double == nil && amount != nil)
        w.varint(f.bits)
        w.uuid(goal)
        StoredAmount.write(amount, double: double, into: &w)
        if let o = occurredAt { w.instant(o) }
        if let d = day { w.day(d) }
    }

    func checkWellFormed(_ stage: GateStage) throws(FieldError) {
        try FieldRules.amountOrCompleted(amount, legacy: legacyAmount, completed, prefix: "")
        if let occurredAt { _ = try FieldRules.instant(occurredAt, field: "occurredAt") }
        if let day { _ = try FieldRules.day(day, field: "day") }
        if stage == .stored && (occurredAt == nil || day == nil) {
            throw FieldError(occurredAt == nil ? "occurredAt" : "day", "a stored progressRecorded carries occurredAt and day")
        }
    }

    /// The value matches the goal's kind; the time defaults to the event's, the day to the
    /// time's day in the author's zone.
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError) {
        let zone = c.author.calendar.timeZone
        try prepare(kind: state.kind, at: c.at) { $0.day(in: zone) }
    }

    /// The same rules, given only what they read: the goal's kind, the event's time and the
    /// day of an instant in the author's zone (`LocalRules.prepareProgress`, which needs no
    /// goal state).
    mutating func prepare(kind: ProgressKind, at: Instant, dayOf: (Instant) -> Day) throws(FieldError) {
        switch kind {
        case .measurable where amount == nil:
            throw FieldError("completed", "the goal is measurable: record an amount, not completed")
        case .outcome where completed == nil:
            throw FieldError("amount", "the goal measures an outcome: record completed, not an amount")
        default: break
        }
        let occurred = occurredAt ?? at
        occurredAt = occurred
        if day == nil {
            // The entry's day in the author's zone must itself be a supported day.
            day = try FieldRules.day(dayOf(occurred), field: "occurredAt")
        }
    }

    /// Entries are a set: recording writes no register.
    func registerWrites(as type: EventType) -> [RegisterWrite] { [] }
    func yieldsToDeletion(as type: EventType) -> Bool { true }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        step.changes.append(AuditChange(field: "entry", before: .null, after: after.recordedEntries[step.event.id]?.json ?? .null))
        return AuditWrites()
    }
}
