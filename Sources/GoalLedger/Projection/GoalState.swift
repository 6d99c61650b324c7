import Foundation

/// One progress entry: a `progressRecorded` event, keyed by its event id.
public struct ProgressEntry: Hashable, Sendable {
    /// The entry's id: its `progressRecorded` event's (in a schema-1 history, the entry's own).
    public var id: UUID
    /// For a measurable goal, the amount (may be negative); nil for a completion.
    public var amount: Amount?
    /// For an outcome goal, whether it was done; nil for an amount.
    public var completed: Bool?
    /// When it happened: the event's `occurredAt`, else the event's wall time.
    public var occurredAt: Instant
    /// The day it counts for, which decides its period: the event's `day` (filled in at append,
    /// in its author's time zone), else `occurredAt`'s day in UTC.
    public var day: Day
    /// The device that recorded it.
    public var device: String
    /// The clock of the event the entry came from (with `device`, its canonical position).
    public var hlc: HLC

    /// The entry's place in canonical order: `hlc`, then `device`.
    public var key: CanonicalKey { CanonicalKey(hlc: hlc, device: device) }
}

extension ProgressEntry {

    /// The entry a `progressRecorded` event `e` (with payload `p`) is: `occurredAt` defaults to
    /// the event's wall time, `day` to `occurredAt`'s day in UTC.
    init(_ e: Event, _ p: ProgressRecorded) {
        let occurred = p.occurredAt ?? e.at
        self.init(
            id: e.id, amount: p.amount, completed: p.completed, occurredAt: occurred, day: p.day ?? occurred.day(in: GoalState.utc),
            device: e.origin, hlc: e.hlc)
    }
}

/// How schema-1 history writes (`progressHistoryReplaced`) become entries.
public enum HistoryRule: Equatable, Sendable {
    /// Schema 1, the old app's rule: the last history write in canonical order is the history.
    case lastWriteWins
    /// After migration: each write is upcast to record-level changes: the entries it added
    /// relative to its base write, and the base's entries it left out as removals; a write with
    /// no (known) base only adds. Nothing another device recorded is lost.
    case recordLevel

    /// The rule of a store on event schema `schema`: the old one until migration.
    package init(schema: Int) { self = schema == 1 ? .lastWriteWins : .recordLevel }
}

/// A schema-1 history write, kept as written: its entries are derived by the history rule.
public struct HistoryWrite: Equatable, Sendable {
    /// The `progressHistoryReplaced` event's id.
    public var event: UUID
    /// The event's place in canonical order.
    public var key: CanonicalKey
    /// The whole history the event wrote.
    public var entries: [ProgressEntry]
    /// The history write its author had read and replaced; nil when it named none.
    public var base: UUID?
}

/// A goal's last-writer registers: the facts an event overwrites whole, each resolved by
/// canonical order (``Register``), as opposed to the tags and the progress entries, which merge.
/// A register's raw value names it where the ledger prints it: in conflicts, audits and the goal's
/// JSON form. Conflicts and audits list registers in the order of the cases.
///
/// What the ledger does with each register (its stamp, its value as audits and conflicts show
/// it, its member of the goal's JSON form, its stored form, its member of ``Goal``) is a column
/// of one register table: an exhaustive switch per column, with no default, so that a new case
/// makes the compiler name each place to fill in (<doc:ExtendingTheLedger>). Conflicts, audits,
/// ``Goal``, the goal's JSON form, the digest and the stored projection all go through it.
public enum GoalRegister: String, CaseIterable, Sendable, Comparable, CustomStringConvertible {
    /// ``GoalState/title``: written by `goalCreated` and `goalEdited`.
    case title
    /// ``GoalState/details``: written by `goalCreated` and `goalEdited`.
    case details
    /// ``GoalState/cadence``: written by `goalCreated` and `goalEdited`.
    case cadence
    /// ``GoalState/targetDate``: written by `goalCreated` and `goalEdited`.
    case targetDate
    /// ``GoalState/target``: written by `goalCreated` and `goalEdited`.
    case target
    /// ``GoalState/unit``: written by `goalCreated` and `goalEdited`.
    case unit
    /// ``GoalState/reminder``, with ``GoalState/reminderDevices``, which the same events write
    /// with the same stamps: written by `goalCreated`, `reminderSet` and `reminderCleared`.
    case reminder
    /// ``GoalState/deletion``: `goalCreated` and `goalRestored` write false, `goalDeleted` true.
    case deleted
    /// ``GoalState/position``: written by `goalMoved` only; a goal never moved has none and
    /// sorts by its creation (``GoalState/orderKey``).
    case position

    /// The raw value: the name conflicts, audits and the goal's JSON form use.
    public var description: String { rawValue }

    /// Orders registers as they are declared (the order of conflicts and audits).
    public static func < (a: GoalRegister, b: GoalRegister) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// The facts about one goal, folded from its events. Every part is a merge that does not depend
/// on the order events arrive in: registers by canonical order, tags as an add-wins set, entries
/// as a set keyed by event id with removals winning. Each register is nil until an event that
/// writes it is folded: a goal's events may arrive (by sync) before its `goalCreated`.
public struct GoalState: Equatable, Sendable {
    /// The goal's id.
    public let id: UUID
    /// Outcome or measurable, as `goalCreated` set it (no event changes it).
    public internal(set) var progressKind: Register<ProgressKind>?
    /// The title, and who wrote it.
    public internal(set) var title: Register<String>?
    /// The details (a nil value: none), and who wrote them.
    public internal(set) var details: Register<String?>?
    /// The cadence, and who wrote it.
    public internal(set) var cadence: Register<Cadence>?
    /// The target date (a nil value: none), and who wrote it.
    public internal(set) var targetDate: Register<Day?>?
    /// For a measurable goal, the amount a period must reach (a nil value: none), and who wrote it.
    public internal(set) var target: Register<Amount?>?
    /// The unit of a measurable goal's amounts (a nil value: none), and who wrote it.
    public internal(set) var unit: Register<String?>?
    /// The reminder time (a nil value: no reminder), and who set or cleared it.
    public internal(set) var reminder: Register<ReminderTime?>?
    /// The devices the reminder is routed to (nil: every device). Written by the same events as
    /// `reminder`, with the same stamps, so it resolves exactly as the reminder register does.
    public internal(set) var reminderDevices: Register<[String]?>?
    /// Whether the goal is deleted, and who wrote that last: `goalCreated` and `goalRestored`
    /// write false, `goalDeleted` true.
    public internal(set) var deletion: Register<Bool>?
    /// The goal's place in the person's order, and who moved it there; nil until a `goalMoved`.
    public internal(set) var position: Register<PositionKey>?
    /// The wall time `at` of the goal's `goalCreated`, written with the creation's stamp.
    public internal(set) var createdAt: Register<Instant>?
    /// The last origin sequence of each device that deleted or restored the goal: what an
    /// event appended now records as `deletionsSeen`.
    public internal(set) var deletionHeads: [String: UInt64] = [:]
    /// For each tag (in NFC), the events that added it.
    public internal(set) var tagAdds: [NormalizedText: Set<UUID>] = [:]
    /// Adds cancelled by a `tagRemoved` whose author had seen them.
    public internal(set) var removedTagAdds: Set<UUID> = []
    /// The entries of `progressRecorded` events, by id, removed ones included.
    public internal(set) var recordedEntries = RecordedEntries()
    /// The entries `progressRemoved` events removed: a removal wins over the entry, whatever the
    /// order they arrive in.
    public internal(set) var removedEntries: Set<UUID> = []
    /// How many events about this goal were folded (the goal's stream version).
    public internal(set) var version: Int = 0
    /// Schema-1 history writes by event id.
    public internal(set) var historyWrites: [UUID: HistoryWrite] = [:]
    /// How history writes count (the store's schema decides).
    public internal(set) var historyRule: HistoryRule = .recordLevel
    /// The tags in effect, when a read that lists goals took them as stored instead of
    /// folding `tagAdds` (left empty then; `ProjectionCodec.decodeHeader` with `allTagAdds`
    /// false). Such a state is for showing the goal, never for folding into.
    var listedTags: [String]?

    /// The state of goal `id` before any of its events is folded.
    public init(id: UUID) { self.id = id }

    /// An empty state whose table of entries has room for `entries` (0: grown as they come).
    init(id: UUID, rule: HistoryRule, entries: Int = 0) {
        self.id = id
        historyRule = rule
        if entries > 0 { recordedEntries.reserveCapacity(entries) }
    }

    /// Whether any event other than progress has been folded (the stored header exists).
    var hasHeader: Bool {
        progressKind != nil || reminderDevices != nil || !tagAdds.isEmpty || !removedTagAdds.isEmpty
            || GoalRegister.allCases.contains { lastWrite(of: $0) != nil }
    }

    /// True once a `goalCreated` has been folded (events can arrive before it by sync).
    public var exists: Bool { progressKind != nil }
    /// Whether the goal is deleted now (false before it exists).
    public var isDeleted: Bool { deletion?.value ?? false }
    /// The progress kind (outcome before the goal exists).
    public var kind: ProgressKind { progressKind?.value ?? .outcome }

    /// The tags in effect, in NFC, sorted by their UTF-8 bytes.
    public var tags: [String] {
        if let listedTags { return listedTags }
        // Without removals every tag with an add is live (no subset test per tag).
        let live = removedTagAdds.isEmpty ? tagAdds.compactMap { $1.isEmpty ? nil : $0 } : tagAdds.compactMap { tag, adds in adds.isSubset(of: removedTagAdds) ? nil : tag }
        return live.sorted().map(\.value)
    }

    /// The adds of `tag` (in any normalization form) still in effect: what a `tagRemoved`
    /// authored now would cancel.
    public func liveAdds(of tag: String) -> [UUID] {
        (tagAdds[NormalizedText(tag)] ?? []).subtracting(removedTagAdds).sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
    }

    /// Live entries in canonical order (entries of one history write in id order).
    public var entries: [ProgressEntry] {
        entries(under: historyRule)
    }

    /// The live entries with schema-1 history writes read by `rule` rather than by
    /// ``historyRule``, in canonical order: the two readings of a migrated goal side by side.
    public func entries(under rule: HistoryRule) -> [ProgressEntry] {
        let live = liveEntries(under: rule)
        // Canonical order (clock, then device bytes), then id. The clock alone decides almost
        // every pair, so the sort moves pairs of clock and index, not whole entries.
        var order = live.indices.map { (hlc: live[$0].hlc.rawValue, index: $0) }
        order.sort { x, y in
            if x.hlc != y.hlc { return x.hlc < y.hlc }
            let a = live[x.index]
            let b = live[y.index]
            if a.device != b.device { return String.bytesPrecede(a.device, b.device) }
            return UUID.precedes(a.id, b.id)
        }
        return order.map { live[$0.index] }
    }

    /// Calls `body` with each live entry under `rule`, in no particular order: a goal with no
    /// removal and no history write reads its entries in place, without an array of them.
    func forEachLiveEntry(under rule: HistoryRule, _ body: (ProgressEntry) throws -> Void) rethrows {
        guard removedEntries.isEmpty, historyWrites.isEmpty else {
            for e in liveEntries(under: rule) { try body(e) }
            return
        }
        for e in recordedEntries.values { try body(e) }
    }

    /// The live entries under `rule`, in no particular order.
    func liveEntries(under rule: HistoryRule) -> [ProgressEntry] {
        var live = removedEntries.isEmpty ? recordedEntries.values : recordedEntries.values.filter { !removedEntries.contains($0.id) }
        if !historyWrites.isEmpty { live += historyEntries(under: rule) }
        return live
    }

    /// The entries schema-1 history writes contribute under `rule`.
    func historyEntries(under rule: HistoryRule) -> [ProgressEntry] {
        let writes = historyWrites.values.sorted { $0.key != $1.key ? $0.key < $1.key : UUID.precedes($0.event, $1.event) }
        switch rule {
        case .lastWriteWins:
            return (writes.last?.entries ?? []).filter { !removedEntries.contains($0.id) }
        case .recordLevel:
            var added: [UUID: ProgressEntry] = [:]
            var removed = Set<UUID>()
            for w in writes {
                let base = w.base.flatMap { historyWrites[$0] }
                let baseIDs = Set(base?.entries.map(\.id) ?? [])
                // The earliest write (canonical order) that added an entry is where it came from.
                for e in w.entries where !baseIDs.contains(e.id) && added[e.id] == nil { added[e.id] = e }
                if let base {
                    let kept = Set(w.entries.map(\.id))
                    for e in base.entries where !kept.contains(e.id) { removed.insert(e.id) }
                }
            }
            return added.values.filter { !removed.contains($0.id) && !removedEntries.contains($0.id) }
        }
    }

    /// Whether `id` is a live entry of the goal: recorded and not removed, or in the schema-1
    /// history in effect.
    public func isLiveEntry(_ id: UUID) -> Bool {
        if recordedEntries.contains(id) { return !removedEntries.contains(id) }
        return !historyWrites.isEmpty && entries.contains { $0.id == id }
    }

    /// The stamp of the value each editable field currently holds (see ``stamp(of:)-(GoalRegister)``).
    public func stamp(of field: GoalField) -> Stamp? { stamp(of: field.register) }

    /// The stamp of the value `register` currently holds: its last write in canonical order, or
    /// for a register the goal's creation does not write and no event has written yet, the
    /// creation (the register holds its default from then on); nil before the goal exists. What a
    /// write records as the value it replaced.
    public func stamp(of register: GoalRegister) -> Stamp? { lastWrite(of: register) ?? progressKind?.stamp }

    /// Folds the entry of a `progressRecorded` event as ``apply(_:)`` folds the event: for
    /// `verify`, which reads a goal's entries from the stored projection once it has checked
    /// them against the log.
    mutating func foldEntry(_ entry: ProgressEntry) {
        version += 1
        recordedEntries.record(entry)
    }

    /// Adds the entry a `progressRecorded` event is, or the history a `progressHistoryReplaced`
    /// event wrote.
    mutating func record(_ e: Event) {
        switch e.payload {
        case .progressRecorded(let p):
            recordedEntries.record(ProgressEntry(e, p))
        case .progressHistoryReplaced(let p):
            historyWrites[e.id] = HistoryWrite(
                event: e.id, key: e.key,
                entries: p.entries.map {
                    ProgressEntry(
                        id: $0.id, amount: $0.amount, completed: $0.completed, occurredAt: $0.occurredAt,
                        day: $0.day ?? $0.occurredAt.day(in: Self.utc), device: e.origin, hlc: e.hlc)
                },
                base: p.base)
        default:
            break
        }
    }

    static let utc = TimeZone(identifier: "UTC")!

    /// Folds one event about this goal.
    public mutating func apply(_ e: Event) {
        let s = Stamp(e)
        version += 1
        switch e.payload {
        case .goalCreated(let p):
            progressKind.offer(p.progressKind, s)
            createdAt.offer(e.at, s)
            for register in GoalRegister.allCases { offer(register, of: p, s) }
            for tag in p.tags { tagAdds[NormalizedText(tag), default: []].insert(e.id) }
        case .goalEdited(let p):
            for field in GoalField.allCases { offer(field, of: p, s) }
        case .goalDeleted:
            deletion.offer(true, s)
            deletionHeads[e.origin] = max(deletionHeads[e.origin] ?? 0, e.sequence)
        case .goalRestored:
            deletion.offer(false, s)
            deletionHeads[e.origin] = max(deletionHeads[e.origin] ?? 0, e.sequence)
        case .reminderSet(let p):
            let (hour, minute) = (p.hour ?? ReminderTime.default.hour, p.minute ?? ReminderTime.default.minute)
            reminder.offer(ReminderTime(unchecked: hour, minute, weekday: p.weekday), s)
            reminderDevices.offer(p.devices, s)
        case .reminderCleared:
            reminder.offer(nil, s)
            reminderDevices.offer(nil, s)
        case .progressRecorded:
            record(e)
        case .progressRemoved(let p): removedEntries.insert(p.entry)
        case .tagAdded(let p): tagAdds[NormalizedText(p.tag), default: []].insert(e.id)
        case .tagRemoved(let p): removedTagAdds.formUnion(p.observed)
        case .progressHistoryReplaced: record(e)
        case .goalMoved(let p): if let key = p.key { position.offer(key, s) }
        case .deviceConfigured, .notificationAuthorization, .deviceEnrolled, .deviceRevoked: break
        }
    }
}

// MARK: The register table

/// Where a register's member sits in the goal's JSON form (``GoalState/json``); `audit` lists a
/// creation's changes in the same order, with the progress registers in place.
enum GoalJSONPlace {
    /// A member of the goal, before `tags`.
    case beforeTags
    /// A member of `progress`, after `kind`; `progress` sits where the first such register
    /// would.
    case progress
    /// A member of the goal, after `tags`.
    case afterTags
}

extension GoalRegister {
    /// The register's bit in a stored goal header's flags, which also orders the stored values
    /// (`ProjectionCodec`). A bit is written once and means the same forever: bit 0 is the
    /// progress kind's, bit 9 the reminder devices' and bit 11 the creation time's; a new
    /// register takes the next free bit (12), so that rows stored before it stay readable.
    var storedBit: Int {
        switch self {
        case .title: 1
        case .details: 2
        case .cadence: 3
        case .targetDate: 4
        case .target: 5
        case .unit: 6
        case .reminder: 7
        case .deleted: 8
        case .position: 10
        }
    }

    /// Where the register's member sits in the goal's JSON form.
    var place: GoalJSONPlace {
        switch self {
        case .title, .details, .cadence, .targetDate, .reminder: .beforeTags
        case .target, .unit: .progress
        case .deleted, .position: .afterTags
        }
    }
}

/// A goal's fact as its JSON form and `audit` list it: a register, or the tags.
enum GoalFact: Hashable {
    case register(GoalRegister)
    case tags

    /// Its member's name in the goal's JSON form.
    var name: String {
        switch self {
        case .register(let r): r.rawValue
        case .tags: "tags"
        }
    }

    /// Every fact in the order of the goal's JSON form: the registers in theirs, the tags before
    /// the first register placed after them.
    static let all: [GoalFact] = {
        let registers = GoalRegister.allCases
        return registers.filter { $0.place != .afterTags }.map(GoalFact.register) + [.tags]
            + registers.filter { $0.place == .afterTags }.map(GoalFact.register)
    }()
}

/// What the register table gives for one register of a goal.
struct RegisterCell {
    /// The register's value as audits and conflicts show it (null when unset, or for a
    /// progress register of an outcome goal).
    var value: JSONValue
    /// The register's member of the goal's JSON form, at ``GoalRegister/place``; nil leaves the
    /// member out.
    var json: JSONValue?
}

extension GoalState {
    /// Who wrote the value `register` holds; nil until an event writes it.
    func lastWrite(of register: GoalRegister) -> Stamp? {
        switch register {
        case .title: title?.stamp
        case .details: details?.stamp
        case .cadence: cadence?.stamp
        case .targetDate: targetDate?.stamp
        case .target: target?.stamp
        case .unit: unit?.stamp
        case .reminder: reminder?.stamp
        case .deleted: deletion?.stamp
        case .position: position?.stamp
        }
    }

    /// The value `register` holds, as audits and conflicts show it and as the goal's JSON form
    /// holds it (see ``json``).
    func cell(_ register: GoalRegister) -> RegisterCell {
        let measurable = kind == .measurable
        switch register {
        case .title:
            let v = JSONValue.string(title?.value ?? "")
            return RegisterCell(value: v, json: v)
        case .details:
            let v = JSONValue.nullable(details?.value ?? nil)
            return RegisterCell(value: v, json: v)
        case .cadence:
            let v = JSONValue.string((cadence?.value ?? .once).rawValue)
            return RegisterCell(value: v, json: v)
        case .targetDate:
            let v = JSONValue.day(targetDate?.value ?? nil)
            return RegisterCell(value: v, json: v)
        case .target:
            // An outcome goal has no target: a measurable goal's is its amount (0 for none).
            let v: JSONValue = measurable ? .amount((target?.value ?? nil) ?? Amount.zero) : .null
            return RegisterCell(value: v, json: measurable ? v : nil)
        case .unit:
            let v: JSONValue = measurable ? .nullable(unit?.value ?? nil) : .null
            return RegisterCell(value: v, json: measurable ? v : nil)
        case .reminder:
            guard let time = reminder?.value ?? nil else { return RegisterCell(value: .null, json: .null) }
            // `weekday` only when chosen, so the facts of other goals print and hash as before.
            let m = time.jsonMembers
            // Only routed reminders carry `devices`, so the facts of unrouted goals print as before.
            let devices = (reminderDevices?.value ?? nil).map { [("devices", JSONValue.array($0.map { .string($0) }))] } ?? []
            return RegisterCell(value: .object(m), json: .object(m + devices))
        case .deleted:
            let v = JSONValue.bool(isDeleted)
            return RegisterCell(value: v, json: v)
        case .position:
            // A goal never moved has no member: its form, and so the digest, stay as they were.
            let v = position.map { JSONValue.string($0.value.description) }
            return RegisterCell(value: v ?? .null, json: v)
        }
    }

    /// Writes `register` as a stored goal header holds it, its stamp then its value, and returns
    /// true; returns false, writing nothing, while no event has written it.
    func encode(_ register: GoalRegister, into w: inout ByteWriter) -> Bool {
        func put<V>(_ r: Register<V>?, _ value: (V, inout ByteWriter) -> Void) -> Bool {
            guard let r else { return false }
            ProjectionCodec.stamp(r.stamp, &w)
            value(r.value, &w)
            return true
        }
        switch register {
        case .title: return put(title) { $1.string($0) }
        case .details: return put(details) { ProjectionCodec.optionalString($0, &$1) }
        case .cadence: return put(cadence) { $1.u8($0.storedCode) }
        case .targetDate:
            return put(targetDate) { d, w in
                w.u8(d == nil ? 0 : 1)
                if let d { w.day(d) }
            }
        case .target:
            return put(target) { t, w in
                w.u8(t == nil ? 0 : 1)
                if let t { w.amount(t) }
            }
        case .unit: return put(unit) { ProjectionCodec.optionalString($0, &$1) }
        case .reminder:
            return put(reminder) { t, w in
                if let t {
                    // 1: a time; 2: a time and a weekday.
                    w.u8(t.weekday == nil ? 1 : 2)
                    w.u8(UInt8(t.hour))
                    w.u8(UInt8(t.minute))
                    if let weekday = t.weekday { w.u8(UInt8(truncatingIfNeeded: weekday)) }
                } else {
                    w.u8(0)
                }
            }
        case .deleted: return put(deletion) { $1.u8($0 ? 1 : 0) }
        case .position:
            return put(position) { k, w in
                w.varint(UInt64(k.bytes.count))
                w.bytes += k.bytes
            }
        }
    }

    /// Reads `register` as `encode(_:into:)` wrote it.
    mutating func decode(_ register: GoalRegister, from r: inout ByteReader) throws(RecordDecodingError) {
        let s = try ProjectionCodec.stamp(&r)
        switch register {
        case .title: title = Register(try r.string(), s)
        case .details: details = Register(try ProjectionCodec.optionalString(&r), s)
        case .cadence: cadence = Register(try Cadence.decode(try r.u8(), "cadence"), s)
        case .targetDate: targetDate = Register(try r.u8() == 1 ? try r.day() : nil, s)
        case .target: target = Register(try r.u8() == 1 ? try r.amount() : nil, s)
        case .unit: unit = Register(try ProjectionCodec.optionalString(&r), s)
        case .reminder:
            let form = try r.u8()
            guard form <= 2 else { throw RecordDecodingError(reason: "unknown reminder form \(form)") }
            guard form != 0 else {
                reminder = Register(nil, s)
                return
            }
            let (hour, minute) = (Int(try r.u8()), Int(try r.u8()))
            reminder = Register(ReminderTime(unchecked: hour, minute, weekday: form == 2 ? Int(try r.u8()) : nil), s)
        case .deleted: deletion = Register(try r.u8() == 1, s)
        case .position:
            let n = try r.varint()
            guard n <= UInt64(PositionKey.maximumLength) else { throw RecordDecodingError(reason: "a position key of \(n) bytes") }
            position = Register(PositionKey(try r.fixed(Int(n))), s)
        }
    }

    /// Folds what a `goalCreated` writes to `register`.
    mutating func offer(_ register: GoalRegister, of p: GoalCreated, _ s: Stamp) {
        switch register {
        case .title: title.offer(p.title, s)
        case .details: details.offer(p.details, s)
        case .cadence: cadence.offer(p.cadence, s)
        case .targetDate: targetDate.offer(p.targetDate, s)
        case .target: target.offer(p.target, s)
        case .unit: unit.offer(p.unit, s)
        case .reminder:
            reminder.offer(p.reminder, s)
            reminderDevices.offer(p.reminder == nil ? nil : p.reminderDevices, s)
        case .deleted: deletion.offer(false, s)
        case .position: break  // a new goal sorts by its creation until it is moved
        }
    }

    /// Folds `field` of a `goalEdited` (a field the edit leaves unchanged writes nothing).
    mutating func offer(_ field: GoalField, of p: GoalEdited, _ s: Stamp) {
        switch field {
        case .title: if let v = p.title { title.offer(v, s) }
        case .details: if let v = p.details { details.offer(v, s) }
        case .cadence: if let v = p.cadence { cadence.offer(v, s) }
        case .targetDate: if let v = p.targetDate { targetDate.offer(v, s) }
        case .target: if let v = p.target { target.offer(v, s) }
        case .unit: if let v = p.unit { unit.offer(v, s) }
        }
    }
}
