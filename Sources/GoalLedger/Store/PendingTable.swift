import Foundation

/// The per-device pending tables: a stored projection (see docs/reminders.md), in each generation of
/// projection tables beside the goal projection.
///
/// | database       | key                                              | value            |
/// |----------------|--------------------------------------------------|------------------|
/// | `pN.reminders` | goal id (16)                                     | `ReminderFacts`  |
/// | `pN.pending`   | device · 0x00 · request id (`goal-reminder-<GOAL>`) | `PendingRow`  |
/// | `pN.goalEntries` | goal id (16), with a duplicate per row: day (4) · clock reading (8) · event id (16) · the rest of the value | the entry (`entryValue`); for a history write its canonical key (`historyValue`); both values start with the clock reading; see `StoreTransaction.scanEntries` |
///
/// What is stored never depends on the moment. `reminders` holds the facts of every goal with a
/// live reminder; `pending` holds, for every device the store knows (one that reported settings
/// or an authorization), one row per goal whose reminder that device should hold at some moment
/// (routing applied; a completed one-time goal has none). A row keeps the timeless request: the
/// repeating strategy's trigger, a one-time goal's fire instant in the device's zone, the
/// localized body. The window strategy's dated ids, whether a fire time is past, the next fire
/// time and the capacity ranking are applied when the table is read (`LedgerStore.pendingPlan`),
/// in time proportional to the device's rows. `entries` holds each progress entry by its day,
/// so that the window strategy reads only the entries of the periods in its window, and a goal's
/// entries are read in one pass over its rows, without looking up and decoding their events (a
/// schema-1 history write is indexed under the day `historyDay`, after every real day, with its
/// event's canonical key: its goal's entries are then derived from the history writes' events,
/// and under the old rule, where only the last write counts, that one is found by the keys alone).
///
/// `reminders` and `pending` are `PendingModel`'s tables, `entries` is `EntryModel`'s: each
/// model keeps them up to date in the transaction of the append, import or rebuild chunk that
/// changes them, and `verify` compares them with a fresh computation.
enum PendingTable {
    /// 2: the facts carry the reminder's weekday (0: the device's first weekday).
    static let codecVersion: UInt8 = 2
    /// The day key of schema-1 history writes: later than any real day.
    static let historyDay = UInt32.max

    /// The value of a history write's row in `entries`: its event's clock reading (8 bytes,
    /// big-endian), then its origin (UTF-8).
    static func historyValue(_ key: CanonicalKey) -> [UInt8] { key.hlc.rawValue.bigEndianBytes + Array(key.device.utf8) }

    /// The canonical key a history write's row holds (`historyValue`).
    static func historyKey(_ v: UnsafeRawBufferPointer) throws(RecordDecodingError) -> CanonicalKey {
        guard v.count >= 8 else { throw RecordDecodingError(reason: "a history write's row of \(v.count) bytes") }
        return CanonicalKey(
            hlc: HLC(rawValue: UInt64(bigEndian: v.loadUnaligned(as: UInt64.self))),
            device: String(decoding: UnsafeRawBufferPointer(rebasing: v[8...]), as: UTF8.self))
    }

    // MARK: Keys

    static func devicePrefix(_ device: String) -> [UInt8] { Array(device.utf8) + [0] }

    static func rowKey(device: String, goal: UUID) -> [UInt8] {
        devicePrefix(device) + Array((ReminderPlan.idPrefix + goal.upperString).utf8)
    }

    static func dayBytes(_ day: Day) -> UInt32 { UInt32(bitPattern: day.daysSinceEpoch) ^ 0x8000_0000 }

    /// A key of `entries`: the goal, the day, then the event id (a goal's entries are one run
    /// of keys, in day order).
    static func entryKey(goal: UUID, day: UInt32, event: UUID) -> [UInt8] { EntryKey(goal: goal, day: day, event: event, hlc: 0).bytes }

    static func entryKey(goal: UUID, _ e: ProgressEntry) -> [UInt8] { EntryKey(goal: goal, e).bytes }

    /// A key of `entries` as integers, with the clock reading its row's value starts with: the
    /// rows are stored in the order of goal, day, clock, event (see
    /// `StoreTransaction.scanEntries`), and batches sort their rows by it before writing them,
    /// and `verify` walks the table against it, without comparing byte arrays. `bytes` is the
    /// row's key (goal, day, event), without the clock.
    struct EntryKey: Comparable {
        let goal: IDWords
        let day: UInt32
        /// The row's clock reading (the first 8 bytes of its value, an entry's or a history
        /// write's): a goal's new rows come after its others, so they are appended.
        let hlc: UInt64
        let event: IDWords

        init(goal: UUID, day: UInt32, event: UUID, hlc: UInt64) {
            self.goal = IDWords(goal)
            self.day = day
            self.hlc = hlc
            self.event = IDWords(event)
        }

        /// The key of a progress entry of `goal`.
        init(goal: UUID, _ e: ProgressEntry) { self.init(goal: goal, day: dayBytes(e.day), event: e.id, hlc: e.hlc.rawValue) }

        /// The key of a stored row of `entries`, its 36-byte key and its value; nil for a key
        /// that is not 36 bytes or a value shorter than a clock reading.
        init?(key k: UnsafeRawBufferPointer, value v: UnsafeRawBufferPointer) {
            guard k.count == 36, v.count >= 8 else { return nil }
            goal = IDWords(UnsafeRawBufferPointer(rebasing: k[0..<16]))
            day = UInt32(bigEndian: k.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
            hlc = UInt64(bigEndian: v.loadUnaligned(as: UInt64.self))
            event = IDWords(UnsafeRawBufferPointer(rebasing: k[20..<36]))
        }

        /// The calendar day a stored key's day bytes (`dayBytes`) stand for, refused unless it
        /// is a day an event can be on (``Day/supported``): a damaged row's day must not reach
        /// the calendar arithmetic.
        static func storedDay(_ bytes: UInt32) throws(RecordDecodingError) -> Day {
            let d = Day(daysSinceEpoch: Int32(bitPattern: bytes ^ 0x8000_0000))
            guard Day.supported.contains(d) else { throw RecordDecodingError(reason: "a stored day out of range (\(d.daysSinceEpoch))") }
            return d
        }

        static func < (a: EntryKey, b: EntryKey) -> Bool {
            if a.goal != b.goal { return a.goal < b.goal }
            if a.day != b.day { return a.day < b.day }
            if a.hlc != b.hlc { return a.hlc < b.hlc }
            return a.event < b.event
        }

        /// Calls `body` with the key's 36 bytes, made on the stack.
        func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            var words: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
            return try withUnsafeMutableBytes(of: &words) { b in
                b.storeBytes(of: goal.high.bigEndian, toByteOffset: 0, as: UInt64.self)
                b.storeBytes(of: goal.low.bigEndian, toByteOffset: 8, as: UInt64.self)
                b.storeBytes(of: day.bigEndian, toByteOffset: 16, as: UInt32.self)
                b.storeBytes(of: event.high.bigEndian, toByteOffset: 20, as: UInt64.self)
                b.storeBytes(of: event.low.bigEndian, toByteOffset: 28, as: UInt64.self)
                return try body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(b)[0..<36]))
            }
        }

        /// The size of the head of a row's duplicate in `entries` (`writeHead`).
        static let headSize = 28

        /// Appends the head of the row's duplicate in `entries`: day, clock reading, event.
        func writeHead(into w: inout ByteWriter) {
            // Made on the stack and appended at once (one append, not one a field).
            var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &words) { b in
                b.storeBytes(of: day.bigEndian, toByteOffset: 0, as: UInt32.self)
                b.storeBytes(of: hlc.bigEndian, toByteOffset: 4, as: UInt64.self)
                b.storeBytes(of: event.high.bigEndian, toByteOffset: 12, as: UInt64.self)
                b.storeBytes(of: event.low.bigEndian, toByteOffset: 20, as: UInt64.self)
                w.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(b)[0..<Self.headSize]))
            }
        }

        var bytes: [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(36)
            goal.write(into: &out)
            withUnsafeBytes(of: day.bigEndian) { out.append(contentsOf: $0) }
            event.write(into: &out)
            return out
        }
    }

    /// A progress entry's value in `entries`: what the views need of it (its day and id are in
    /// the key), compactly, since there is one per entry:
    ///
    ///     hlc (8, big-endian) · flags (1: 1 amount, 2 completed given, 4 completed)
    ///     · occurredAt − the clock's milliseconds (zig-zag varint)
    ///     · amount (zig-zag varint of millionths; when given)
    ///     · device (UTF-8, the rest of the value)
    static func entryValue(_ e: ProgressEntry) -> [UInt8] {
        var w = ByteWriter(capacity: 32)
        writeEntryValue(e, into: &w)
        return w.bytes
    }

    /// Appends `entryValue(e)` to `w` (a writer reused for many rows).
    static func writeEntryValue(_ e: ProgressEntry, into w: inout ByteWriter) {
        w.u64BE(e.hlc.rawValue)
        writeEntryValueAfterClock(e, into: &w)
    }

    /// Appends the duplicate `entries` stores for the entry `e` of the goal `goal` (its key's
    /// head, then its value after the clock reading; see `StoreTransaction.scanEntries`) to
    /// `w`.
    static func writeEntryDuplicate(goal: UUID, _ e: ProgressEntry, into w: inout ByteWriter) {
        EntryKey(goal: goal, e).writeHead(into: &w)
        writeEntryValueAfterClock(e, into: &w)
    }

    /// Appends the duplicate `entries` stores for the history write `key` of `goal` (its
    /// key's head, then its origin) to `w`.
    static func writeHistoryDuplicate(goal: UUID, event: UUID, _ key: CanonicalKey, into w: inout ByteWriter) {
        EntryKey(goal: goal, day: historyDay, event: event, hlc: key.hlc.rawValue).writeHead(into: &w)
        w.bytes.append(contentsOf: key.device.utf8)
    }

    /// Appends what follows the clock reading in `entryValue(e)`.
    private static func writeEntryValueAfterClock(_ e: ProgressEntry, into w: inout ByteWriter) {
        w.u8((e.amount == nil ? 0 : 1) | (e.completed == nil ? 0 : 2) | (e.completed == true ? 4 : 0))
        w.signed(e.occurredAt.milliseconds &- e.hlc.milliseconds)
        if let a = e.amount { w.amount(a) }
        w.bytes.append(contentsOf: e.device.utf8)
    }

    /// The entry a row of `entries` holds; nil for a history write's row (under `historyDay`).
    static func entry(key k: UnsafeRawBufferPointer, value v: UnsafeRawBufferPointer) throws(RecordDecodingError) -> ProgressEntry? {
        guard let key = EntryKey(key: k, value: v) else {
            throw RecordDecodingError(reason: "an entry row of a \(k.count)-byte key and a \(v.count)-byte value")
        }
        guard key.day != historyDay else { return nil }
        return try entry(event: key.event, day: key.day, hlc: key.hlc, afterClock: UnsafeRawBufferPointer(rebasing: v[8...]))
    }

    /// The entry a duplicate of `entries` holds as stored (day, clock reading, event, then the
    /// rest of the row's value; see `StoreTransaction.scanEntries`), read in place; nil for a
    /// history write's.
    static func entry(duplicate d: UnsafeRawBufferPointer) throws(RecordDecodingError) -> ProgressEntry? {
        guard d.count >= EntryKey.headSize else { throw RecordDecodingError(reason: "an entry row of a \(d.count)-byte duplicate") }
        let day = UInt32(bigEndian: d.loadUnaligned(as: UInt32.self))
        guard day != historyDay else { return nil }
        let hlc = UInt64(bigEndian: d.loadUnaligned(fromByteOffset: 4, as: UInt64.self))
        let event = IDWords(UnsafeRawBufferPointer(rebasing: d[12..<28]))
        return try entry(event: event, day: day, hlc: hlc, afterClock: UnsafeRawBufferPointer(rebasing: d[28...]))
    }

    /// The entry of the row of `event` on `day` whose value after its clock reading `hlc` is
    /// `rest`.
    private static func entry(
        event: IDWords, day: UInt32, hlc clock: UInt64, afterClock rest: UnsafeRawBufferPointer
    ) throws(RecordDecodingError) -> ProgressEntry {
        let entryDay = try EntryKey.storedDay(day)
        var r = ByteReader(rest)
        let hlc = HLC(rawValue: clock)
        let flags = try r.u8()
        let occurredAt = Instant(milliseconds: hlc.milliseconds &+ (try r.signed()))
        let amount = flags & 1 == 0 ? nil : try r.amount()
        let device = String(decoding: UnsafeRawBufferPointer(rebasing: rest[r.index...]), as: UTF8.self)
        return ProgressEntry(
            id: event.uuid, amount: amount, completed: flags & 2 != 0 ? flags & 4 != 0 : nil, occurredAt: occurredAt,
            day: entryDay, device: device, hlc: hlc)
    }

    // MARK: Changes a batch makes

    /// What a batch of events changed that the pending tables depend on.
    struct Changes {
        /// Goals whose registers changed.
        var goals = Set<UUID>()
        /// Goals whose entries changed (the facts of a one-time goal depend on them).
        var progress = Set<UUID>()
        /// Devices whose settings changed, or that the store sees for the first time: every row
        /// of theirs is recomputed.
        var settings = Set<String>()
        /// Whether some device's authorization changed: routed reminders may move.
        var authorization = false

        var isEmpty: Bool { goals.isEmpty && progress.isEmpty && settings.isEmpty && !authorization }
    }

    /// Brings the facts and rows in line with a batch's changes. Runs in the batch's transaction,
    /// after its goal headers and device rows were written.
    static func update(_ changes: Changes, headers: [UUID: GoalState], _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws {
        guard !changes.isEmpty else { return }
        var rule: HistoryRule?

        // The facts of the goals that changed. Progress matters only to one-time goals.
        var changedFacts: [UUID: ReminderFacts?] = [:]
        for goal in changes.goals.union(changes.progress) {
            let storedBytes = try txn.get(t.reminders, key: goal.bytes)
            if !changes.goals.contains(goal) {
                guard let stored = try facts(goal, txn, t), stored.cadence == .once, stored.targetDate != nil else { continue }
            }
            var fresh: ReminderFacts?
            if var state = try headers[goal] ?? StoredProjection.header(goal, txn, t) {
                if ReminderFacts.needsEntries(state) {
                    if rule == nil { rule = try txn.historyRule() }
                    state = try txn.withEntries(state, in: t, rule: rule!)
                }
                fresh = ReminderFacts(state)
            }
            // Compared as bytes: two titles can be equal as Swift strings (canonically
            // equivalent) and still differ in what is stored and shown.
            let freshBytes = fresh.map(encode)
            guard freshBytes != storedBytes else { continue }
            if let freshBytes {
                try txn.put(t.reminders, key: goal.bytes, value: freshBytes)
            } else {
                _ = try txn.delete(t.reminders, key: goal.bytes)
            }
            changedFacts[goal] = fresh
        }

        guard !changedFacts.isEmpty || !changes.settings.isEmpty || changes.authorization else { return }
        let devices = try knownDevices(txn, t)
        let routing = ReminderRouting(devices: devices)
        // A change of authorization can move every routed reminder.
        var routed: [ReminderFacts] = []
        if changes.authorization {
            try scanFacts(txn, t) { f in if f.devices != nil { routed.append(f) } }
        }
        for device in devices {
            let context = ReminderPlan.Context(device)
            if changes.settings.contains(device.name) {
                try rewriteRows(of: device, context, routing, txn, t)
                continue
            }
            for (goal, f) in changedFacts { try writeRow(goal, f, device, context, routing, txn, t) }
            for f in routed where changedFacts[f.goal] == nil { try writeRow(f.goal, f, device, context, routing, txn, t) }
        }
    }

    /// The row `facts` give `device`, written if it differs from the stored one.
    static func writeRow(
        _ goal: UUID, _ facts: ReminderFacts?, _ device: DeviceState, _ context: ReminderPlan.Context, _ routing: ReminderRouting,
        _ txn: borrowing StoreTransaction, _ t: ProjectionTables
    ) throws {
        let key = rowKey(device: device.name, goal: goal)
        let row = facts.flatMap { ReminderPlan.row($0, context, routing: routing, device: device.name) }
        if let row {
            let bytes = encode(row)
            if try txn.get(t.pending, key: key) != bytes { try txn.put(t.pending, key: key, value: bytes) }
        } else {
            _ = try txn.delete(t.pending, key: key)
        }
    }

    /// Recomputes every row of `device` from the facts of every goal.
    static func rewriteRows(
        of device: DeviceState, _ context: ReminderPlan.Context, _ routing: ReminderRouting, _ txn: borrowing StoreTransaction,
        _ t: ProjectionTables
    ) throws {
        var want: [[UInt8]: [UInt8]] = [:]
        try scanFacts(txn, t) { f in
            if let row = ReminderPlan.row(f, context, routing: routing, device: device.name) {
                want[rowKey(device: device.name, goal: f.goal)] = encode(row)
            }
        }
        var stale: [[UInt8]] = []
        let prefix = devicePrefix(device.name)
        try txn.scan(t.pending, from: prefix) { k, v in
            guard k.starts(with: prefix) else { return false }
            let key = Array(k)
            if let w = want[key], w.elementsEqual(v) { want[key] = nil } else if want[key] == nil { stale.append(key) }
            return true
        }
        for key in stale { _ = try txn.delete(t.pending, key: key) }
        for (key, value) in want { try txn.put(t.pending, key: key, value: value) }
    }

    // MARK: Reading

    static func knownDevices(_ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> [DeviceState] {
        var out: [DeviceState] = []
        try txn.scan(t.devices) { key, _ in
            out.append(try StoredProjection.device(String(decoding: key, as: UTF8.self), txn, t))
            return true
        }
        return out
    }

    static func facts(_ goal: UUID, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> ReminderFacts? {
        try txn.withValue(t.reminders, key: goal.bytes) { bytes in try decoded { () throws(RecordDecodingError) in try decodeFacts(bytes) } }
    }

    static func scanFacts(_ txn: borrowing StoreTransaction, _ t: ProjectionTables, _ body: (ReminderFacts) throws -> Void) throws {
        try txn.scan(t.reminders) { _, v in
            try body(try decoded { () throws(RecordDecodingError) in try decodeFacts(v) })
            return true
        }
    }

    /// The stored rows of a device, in request id order; nil when the store does not know the
    /// device (it never reported settings or an authorization).
    static func rows(of device: String, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> [PendingRow]? {
        guard try txn.get(t.devices, key: Array(device.utf8)) != nil else { return nil }
        var out: [PendingRow] = []
        let prefix = devicePrefix(device)
        try txn.scan(t.pending, from: prefix) { k, v in
            guard k.starts(with: prefix) else { return false }
            out.append(try decoded { () throws(RecordDecodingError) in try decodeRow(v) })
            return true
        }
        return out
    }

    static func row(of device: String, goal: UUID, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> PendingRow? {
        try txn.withValue(t.pending, key: rowKey(device: device, goal: goal)) { v in
            try decoded { () throws(RecordDecodingError) in try decodeRow(v) }
        }
    }

    /// The rows of a device the store does not know (default settings, never authorized),
    /// computed from the facts: proportional to the goals with a reminder.
    static func computedRows(of device: DeviceState, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> [PendingRow] {
        let routing = ReminderRouting(devices: try knownDevices(txn, t))
        let context = ReminderPlan.Context(device)
        var out: [PendingRow] = []
        try scanFacts(txn, t) { f in
            if let row = ReminderPlan.row(f, context, routing: routing, device: device.name) { out.append(row) }
        }
        return out
    }

    /// Whether the period of `row`'s goal containing `within` is complete, from the entries dated
    /// on or after `from` (the first day of the window's first period that can hold a request:
    /// such a period has no earlier entry).
    /// `cache` keeps each goal's entries for the rest of the read.
    static func periodCompleted(
        _ row: PendingRow, within: Instant, from: Day, calendar: DeviceCalendar, cache: inout [UUID: GoalState],
        _ txn: borrowing StoreTransaction, _ t: ProjectionTables, rule: HistoryRule
    ) throws -> Bool {
        let goal = row.facts.goal
        if cache[goal] == nil {
            var recorded: [ProgressEntry] = []
            var legacy = false
            let prefix = goal.bytes
            try txn.scanEntries(t.entries, from: goal.bytes + withUnsafeBytes(of: dayBytes(from).bigEndian) { Array($0) }) { k, v in
                guard k.count == 36, k.prefix(16).elementsEqual(prefix) else { return false }
                guard let entry = try StoredProjection.decoded({ () throws(RecordDecodingError) in try entry(key: k, value: v) }) else {
                    legacy = true
                    return false
                }
                recorded.append(entry)
                return true
            }
            if legacy, let header = try StoredProjection.header(goal, txn, t) {
                cache[goal] = try txn.withEntries(header, in: t, rule: rule)
            } else {
                var removed = Set<UUID>()
                for entry in recorded where try txn.get(t.removed, key: goal.bytes + entry.id.bytes) != nil { removed.insert(entry.id) }
                cache[goal] = row.facts.completionState(recorded: recorded, removed: removed)
            }
        }
        return GoalView(goal: cache[goal]!, calendar: calendar, now: within).completed
    }

    // MARK: Codec

    static func encode(_ f: ReminderFacts) -> [UInt8] {
        var w = ByteWriter(capacity: 96)
        w.u8(codecVersion)
        write(f, &w)
        return w.bytes
    }

    static func write(_ f: ReminderFacts, _ w: inout ByteWriter) {
        w.uuid(f.goal)
        w.string(f.title)
        w.u8(f.cadence.storedCode)
        w.u8(f.targetDate == nil ? 0 : 1)
        if let d = f.targetDate { w.day(d) }
        w.u8(UInt8(f.time.hour))
        w.u8(UInt8(f.time.minute))
        w.u8(UInt8(truncatingIfNeeded: f.time.weekday ?? 0))
        if let devices = f.devices {
            w.u8(1)
            w.varint(UInt64(devices.count))
            for d in devices { w.string(d) }
        } else {
            w.u8(0)
        }
        w.u8(f.kind.storedCode)
        w.u8(f.target == nil ? 0 : 1)
        if let t = f.target { w.amount(t) }
        w.u8(f.completed ? 1 : 0)
    }

    static func decodeFacts(_ bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) -> ReminderFacts {
        var r = ByteReader(bytes)
        guard try r.u8() == codecVersion else { throw RecordDecodingError(reason: "unknown reminder row version") }
        let f = try read(&r)
        guard r.isAtEnd else { throw RecordDecodingError(reason: "trailing bytes in a reminder row") }
        return f
    }

    static func read(_ r: inout ByteReader) throws(RecordDecodingError) -> ReminderFacts {
        let goal = try r.uuid()
        let title = try r.string()
        let cadence = try Cadence.decode(try r.u8(), "cadence")
        let targetDate = try r.u8() == 1 ? try r.day() : nil
        let (hour, minute, weekday) = (Int(try r.u8()), Int(try r.u8()), Int(try r.u8()))
        // A time the gate lets through, or the row is damaged: a weekday past 7 would make weeks
        // that never start.
        guard hour < 24, minute < 60, weekday <= 7 else { throw RecordDecodingError(reason: "a reminder time out of range") }
        let time = ReminderTime(unchecked: hour, minute, weekday: weekday == 0 ? nil : weekday)
        var devices: [String]?
        if try r.u8() == 1 {
            let n = try r.varint()
            guard n <= 256 else { throw RecordDecodingError(reason: "too many reminder devices") }
            devices = []
            for _ in 0..<n { devices!.append(try r.string()) }
        }
        let kind = try ProgressKind.decode(try r.u8(), "progress kind")
        let target = try r.u8() == 1 ? try r.amount() : nil
        let completed = try r.u8() == 1
        return ReminderFacts(
            goal: goal, title: title, cadence: cadence, targetDate: targetDate, time: time, devices: devices, kind: kind,
            target: target, completed: completed)
    }

    static func encode(_ row: PendingRow) -> [UInt8] {
        var w = ByteWriter(capacity: 160)
        w.u8(codecVersion)
        write(row.facts, &w)
        w.u8(row.strategy.storedCode)
        w.string(row.body)
        if let trigger = row.trigger {
            w.u8(1)
            w.u8(trigger.repeats ? 1 : 0)
            switch trigger.kind {
            case .calendar(let year, let month, let day, let weekday, let hour, let minute):
                w.u8(0)
                for c in [year, month, day, weekday] {
                    w.u8(c == nil ? 0 : 1)
                    if let c { w.varint(UInt64(c)) }
                }
                w.u8(UInt8(hour))
                w.u8(UInt8(minute))
            case .date(let at):
                w.u8(1)
                w.instant(at)
            }
        } else {
            w.u8(0)
        }
        w.u8(row.fireAt == nil ? 0 : 1)
        if let f = row.fireAt { w.instant(f) }
        return w.bytes
    }

    static func decodeRow(_ bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) -> PendingRow {
        var r = ByteReader(bytes)
        guard try r.u8() == codecVersion else { throw RecordDecodingError(reason: "unknown pending row version") }
        let facts = try read(&r)
        let strategy = try NotificationStrategy.decode(try r.u8(), "strategy")
        let body = try r.string()
        var trigger: NotificationTrigger?
        if try r.u8() == 1 {
            let repeats = try r.u8() == 1
            switch try r.u8() {
            case 0:
                var c: [Int?] = []
                for _ in 0..<4 { c.append(try r.u8() == 1 ? Int(clamping: try r.varint()) : nil) }
                let hour = Int(try r.u8())
                let minute = Int(try r.u8())
                trigger = NotificationTrigger(
                    kind: .calendar(year: c[0], month: c[1], day: c[2], weekday: c[3], hour: hour, minute: minute), repeats: repeats)
            case 1:
                trigger = NotificationTrigger(kind: .date(try r.instant()), repeats: repeats)
            default:
                throw RecordDecodingError(reason: "unknown trigger")
            }
        }
        let fireAt = try r.u8() == 1 ? try r.instant() : nil
        guard r.isAtEnd else { throw RecordDecodingError(reason: "trailing bytes in a pending row") }
        // The parts `ReminderPlan.row` always writes together: a one-time goal's row has its
        // fire time (and the goal its date), a recurring one's has none, and a repeating
        // strategy's row has its trigger. The planning relies on them.
        guard (facts.cadence == .once) == (fireAt != nil), facts.cadence != .once || facts.targetDate != nil,
            strategy != .repeating || trigger != nil
        else { throw RecordDecodingError(reason: "a pending row whose parts disagree") }
        return PendingRow(
            facts: facts, id: ReminderPlan.idPrefix + facts.goal.upperString, strategy: strategy, body: body,
            trigger: trigger, fireAt: fireAt)
    }

    private static func decoded<T>(_ body: () throws(RecordDecodingError) -> T) throws -> T {
        do throws(RecordDecodingError) {
            return try body()
        } catch {
            throw LedgerError("a pending-table row is damaged: \(error.reason)", reason: .projectionDamaged)
        }
    }
}
