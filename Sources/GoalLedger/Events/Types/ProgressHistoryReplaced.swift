import Foundation

/// One entry of a schema-1 progress history: its own id (not an event id), and the value.
public struct HistoryEntry: Equatable, Sendable {
    /// The entry's own id.
    public var id: UUID
    /// For a measurable goal, the amount.
    public var amount: Amount?
    /// The double an older record held when it is not exactly `amount` (see ``ProgressRecorded``).
    var legacyAmount: Double?
    /// For an outcome goal, whether it was done.
    public var completed: Bool?
    /// When the entry happened.
    public var occurredAt: Instant
    /// Defaults to `occurredAt`'s day in the author's time zone (filled in at append).
    public var day: Day?

    /// An entry of an amount or a completion (give one of the two).
    public init(id: UUID, amount: Amount? = nil, completed: Bool? = nil, occurredAt: Instant, day: Day? = nil) {
        self.id = id
        self.amount = amount
        self.completed = completed
        self.occurredAt = occurredAt
        self.day = day
    }
}

/// Schema 1: the whole progress history of a goal, written at once. `base` is the history write
/// its author had read before writing, if the old app recorded it.
public struct ProgressHistoryReplaced: Equatable, Sendable {
    /// The goal whose history is written.
    public var goal: UUID
    /// The whole history.
    public var entries: [HistoryEntry]
    /// The history write the author had read, if known.
    public var base: UUID?

    /// A history write of `entries` over `base`.
    public init(goal: UUID, entries: [HistoryEntry], base: UUID? = nil) {
        self.goal = goal
        self.entries = entries
        self.base = base
    }
}

extension ProgressHistoryReplaced: GoalEventPayload {
    static let schemas = [1]

    init(json r: inout ObjectReader) throws(FieldError) {
        let g = try r.goal()
        guard let list = r.raw("entries") else { throw FieldError("entries", "is required") }
        guard case .array(let items) = list else { throw FieldError("entries", "must be an array, got \(list.typeName)") }
        var entries: [HistoryEntry] = []
        for (i, item) in items.enumerated() {
            var er = try ObjectReader(item, path: "entries[\(i)]")
            let id = try er.uuid("id", required: true)!
            let amount = try er.amount("amount")
            let completed = try er.bool("completed")
            guard let occurred = try er.instant("occurredAt") else { throw FieldError("entries[\(i)].occurredAt", "is required") }
            let day = try er.day("day")
            try er.finish()
            entries.append(HistoryEntry(id: id, amount: amount, completed: completed, occurredAt: occurred, day: day))
        }
        self.init(goal: g, entries: entries, base: try r.uuid("base"))
    }

    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = [("goal", .id(goal))]
        m.append(
            (
                "entries",
                .array(
                    entries.map { e in
                        var o: [(String, JSONValue)] = [("id", .string(e.id.upperString))]
                        if let a = e.amount { o.append(("amount", .amount(a))) } else if let l = e.legacyAmount { o.append(("amount", .number(l))) }
                        if let c = e.completed { o.append(("completed", .bool(c))) }
                        o.append(("occurredAt", .string(e.occurredAt.rfc3339)))
                        if let d = e.day { o.append(("day", .day(d))) }
                        return .object(o)
                    })
            ))
        if let b = base { m.append(("base", .id(b))) }
        return m
    }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        var f = PresenceReader(try r.varint())
        let goal = try r.uuid()
        let base = f.take() ? try r.uuid() : nil
        var entries: [HistoryEntry] = []
        for _ in 0..<(try r.count()) {
            var g = PresenceReader(try r.varint())
            let hasAmount = g.take()
            let hasCompleted = g.take()
            let completed = g.take()
            let hasDay = g.take()
            let hasMicros = g.take()
            let id = try r.uuid()
            let (amount, legacy) = try StoredAmount.read(&r, double: hasAmount, micros: hasMicros)
            let occurred = try r.instant()
            var entry = HistoryEntry(
                id: id, amount: amount, completed: hasCompleted ? completed : nil, occurredAt: occurred,
                day: hasDay ? try r.day() : nil)
            entry.legacyAmount = legacy
            entries.append(entry)
        }
        self.init(goal: goal, entries: entries, base: base)
    }

    func encode(into w: inout ByteWriter) {
        w.varint(base == nil ? 0 : 1)
        w.uuid(goal)
        if let b = base { w.uuid(b) }
        w.varint(UInt64(entries.count))
        for e in entries {
            var f = Presence()
            let double = StoredAmount.double(for: e.amount, legacy: e.legacyAmount)
            f.mark(double != nil)
            f.mark(e.completed != nil)
            f.mark(e.completed == true)
            f.mark(e.day != nil)
            f.mark(double == nil && e.amount != nil)
            w.varint(f.bits)
            w.uuid(e.id)
            StoredAmount.write(e.amount, double: double, into: &w)
            w.instant(e.occurredAt)
            if let d = e.day { w.day(d) }
        }
    }

    func checkWellFormed(_ stage: GateStage) throws(FieldError) {
        var ids = Set<UUID>()
        for (i, e) in entries.enumerated() {
            guard ids.insert(e.id).inserted else { throw FieldError("entries[\(i)].id", "appears twice") }
            try FieldRules.amountOrCompleted(e.amount, legacy: e.legacyAmount, e.completed, prefix: "entries[\(i)].")
            _ = try FieldRules.instant(e.occurredAt, field: "entries[\(i)].occurredAt")
            if let d = e.day { _ = try FieldRules.day(d, field: "entries[\(i)].day") }
        }
    }

    /// Each entry's value matches the goal's kind and its day defaults to its time's day in the
    /// author's zone; the base must be a history write of the goal.
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError) {
        for (i, e) in entries.enumerated() {
            switch state.kind {
            case .measurable where e.amount == nil:
                throw FieldError("entries[\(i)].completed", "the goal is measurable: record an amount, not completed")
            case .outcome where e.completed == nil:
                throw FieldError("entries[\(i)].amount", "the goal measures an outcome: record completed, not an amount")
            default: break
            }
            if e.day == nil {
                entries[i].day = try FieldRules.day(e.occurredAt.day(in: c.author.calendar.timeZone), field: "entries[\(i)].occurredAt")
            }
        }
        if let base, state.historyWrites[base] == nil {
            throw FieldError("base", "\(base.uuidString) is not a history write of goal \(goal.uuidString)")
        }
    }

    /// Histories merge by entry (after migration): no register.
    func registerWrites(as type: EventType) -> [RegisterWrite] { [] }
    func yieldsToDeletion(as type: EventType) -> Bool { true }

    /// The entries added and removed relative to the base write, and those of them the schema-1
    /// view had lost.
    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        let base = self.base.flatMap { before.historyWrites[$0] }
        let baseIDs = base.map { Set($0.entries.map(\.id)) } ?? []
        let ids = entries.map(\.id)
        step.historyAdded = ids.filter { !baseIDs.contains($0) }
        step.historyRemoved = base.map { b in b.entries.map(\.id).filter { !Set(ids).contains($0) } } ?? []
        step.recovered = step.historyAdded.filter { lost.contains($0) }
        step.changes.append(
            AuditChange(
                field: "history", before: base.map { .array($0.entries.map { .string($0.id.upperString) }) } ?? .null,
                after: .array(ids.map { .string($0.upperString) })))
        return AuditWrites()
    }
}
