import Foundation
import LMDB

// What a goal's view needs, kept with the projection so that reading a view costs the rows it
// shows rather than the goal's whole history (`docs/storage-and-guarantees.md`, "Views kept
// with the projection"):
//
// | database   | key                               | value                                   |
// |------------|-----------------------------------|-----------------------------------------|
// | `pN.days`  | goal id (16) · day (u32, as in `entries`) | `DaySummary` of the day's live entries |
// | `pN.periods` | goal id (16) · period (u32)     | `DaySummary` of the period's day rows (a one-time goal: one row, period `Int32.min`) |
// | `pN.runs`  | goal id (16)                      | `ViewBasis`: what the periods and runs were built for, and the best run |
// |            | goal id (16) · last period (u32)  | first period (u32): a run of completed periods |
// |            | `calendar`                        | the first weekday the runs' weeks start on (u8) |
//
// Periods are numbered so that consecutive periods have consecutive numbers
// (`Cadence.periodNumber`). A period is complete when it has an entry of the goal's kind and
// its entries reach the target (measurable) or the latest says completed (outcome), exactly as
// `GoalView` decides from the entries. The runs follow the store's own device's first weekday;
// a change of it, or of a goal's cadence, kind or target, builds the affected runs again from
// the day rows.

/// Reading and maintaining `days`, `periods` and `runs`.
enum ViewTables {
    static let calendarKey = Array("calendar".utf8)

    static func number(_ n: Int32) -> UInt32 { UInt32(bitPattern: n) ^ 0x8000_0000 }
    static func number(_ b: UInt32) -> Int32 { Int32(bitPattern: b ^ 0x8000_0000) }

    static func dayKey(_ goal: UUID, _ day: Day) -> [UInt8] {
        var k = goal.bytes
        withUnsafeBytes(of: PendingTable.dayBytes(day).bigEndian) { k += $0 }
        return k
    }

    /// The key of a goal's period `n` in `periods` (nil: the one period of a one-time goal).
    static func periodKey(_ goal: UUID, _ n: Int32?) -> [UInt8] { runKey(goal, n ?? .min) }

    static func runKey(_ goal: UUID, _ last: Int32) -> [UInt8] {
        var k = goal.bytes
        withUnsafeBytes(of: number(last).bigEndian) { k += $0 }
        return k
    }

    static func decoded<T>(_ body: () throws(RecordDecodingError) -> T) throws -> T { try StoredProjection.decoded(body) }

    // MARK: Reading

    /// The first weekday the stored runs' weeks start on (nil: none recorded yet).
    static func firstWeekday(_ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> Int? {
        try txn.withValue(t.runs, key: calendarKey) { $0.count == 1 ? Int($0[0]) : nil } ?? nil
    }

    static func basis(_ goal: UUID, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> ViewBasis? {
        try txn.withValue(t.runs, key: goal.bytes) { b in try decoded { () throws(RecordDecodingError) in try ViewBasis(bytes: b) } }
    }

    /// The summary of `goal`'s day rows from `first` through `last` (both included; nil: every day).
    static func summary(_ goal: UUID, from first: Day?, through last: Day?, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws
        -> DaySummary
    {
        var out = DaySummary()
        let prefix = goal.bytes
        let end = last.map(PendingTable.dayBytes) ?? .max
        try txn.scan(t.days, from: first.map { dayKey(goal, $0) } ?? prefix) { k, v in
            guard k.count == 20, k.prefix(16).elementsEqual(prefix),
                UInt32(bigEndian: k.loadUnaligned(fromByteOffset: 16, as: UInt32.self)) <= end
            else { return false }
            out.add(try decoded { () throws(RecordDecodingError) in try DaySummary(bytes: v) })
            return true
        }
        return out
    }

    /// The kept summary of `goal`'s period `n` (nil: the one period of a one-time goal).
    static func period(_ n: Int32?, of goal: UUID, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> DaySummary {
        try txn.withValue(t.periods, key: periodKey(goal, n)) { b in try decoded { () throws(RecordDecodingError) in try DaySummary(bytes: b) } }
            ?? DaySummary()
    }

    /// The run a row of `runs` holds: nil for a row that is not a run (the basis, the calendar).
    static func run(key k: UnsafeRawBufferPointer, value v: UnsafeRawBufferPointer) -> ClosedRange<Int32>? {
        guard k.count == 20, v.count == 4 else { return nil }
        let first = number(UInt32(bigEndian: v.loadUnaligned(as: UInt32.self)))
        let last = number(UInt32(bigEndian: k.loadUnaligned(fromByteOffset: 16, as: UInt32.self)))
        return first <= last ? first...last : nil
    }

    /// The run of completed periods that holds period `n`, if any.
    static func run(containing n: Int32, of goal: UUID, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> ClosedRange<Int32>? {
        let prefix = goal.bytes
        var found: ClosedRange<Int32>?
        try txn.scan(t.runs, from: runKey(goal, n)) { k, v in
            guard k.prefix(16).elementsEqual(prefix), let r = run(key: k, value: v) else { return false }
            if r.contains(n) { found = r }
            return false
        }
        return found
    }

    /// The view of `goal` (its header; no entries needed) at `now` in `calendar`, read from the
    /// kept rows: the current period's row and one run. Nil when the rows were kept for
    /// another first weekday or other rules than the header's (the caller folds the entries).
    static func view(of goal: GoalState, calendar: DeviceCalendar, now: Instant, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws
        -> GoalView?
    {
        guard try firstWeekday(txn, t) == calendar.firstWeekday else { return nil }
        return try view(of: goal, today: calendar.day(of: now), firstWeekday: calendar.firstWeekday, txn, t)
    }

    /// `view(of:calendar:now:)` for a caller that has checked the kept rows' first weekday is
    /// `fw` and knows the day of `now` (a list reads them once for all its goals).
    static func view(of goal: GoalState, today: Day, firstWeekday fw: Int, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws
        -> GoalView?
    {
        let rules = ViewBasis(goal)
        guard let basis = try basis(goal.id, txn, t), basis.sameRules(as: rules) else { return nil }
        guard let current = rules.cadence.period(containing: today, firstWeekday: fw),
            let n = rules.cadence.periodNumber(of: today, firstWeekday: fw)
        else {
            let s = try period(nil, of: goal.id, txn, t).summary(rules.kind, targetMicro: rules.targetMicro)
            return GoalView(period: nil, value: s.value, completed: s.completed, streak: nil)
        }
        let s = try period(n, of: goal.id, txn, t).summary(rules.kind, targetMicro: rules.targetMicro)
        // The current run ends with the current period if it is complete, else with the previous one.
        let cursor = s.completed ? n : n - 1
        let run = try run(containing: cursor, of: goal.id, txn, t)
        // In `Int`: a damaged run row can start anywhere in `Int32`.
        let currentRun = run.map { Int(cursor) - Int($0.lowerBound) + 1 } ?? 0
        return GoalView(
            period: Period(start: max(current.start, Day.supported.lowerBound), end: min(current.end, Day.supported.upperBound)),
            value: s.value, completed: s.completed, streak: Streak(current: currentRun, best: max(Int(basis.best), currentRun)))
    }

    // MARK: Writing, inside the transaction of a batch

    /// How many periods `r` spans, as a run's length is kept (a damaged run row can span all of
    /// `Int32`: the length is worked out in `Int` and clamped, never trapped on).
    static func length(_ r: ClosedRange<Int32>) -> UInt32 { UInt32(clamping: Int(r.upperBound) - Int(r.lowerBound) + 1) }

    /// Writes `goal`'s row for `day` again from the day's rows in `entries` that have no
    /// removal; returns the row before and after.
    static func rescan(_ goal: UUID, _ day: Day, _ txn: borrowing StoreTransaction, _ t: ProjectionTables, anyRemoved: Bool) throws
        -> (old: DaySummary, new: DaySummary)
    {
        try updateDay(goal, day, txn, t) { (txn: borrowing StoreTransaction, _) in
            let prefix = dayKey(goal, day)
            var entries: [ProgressEntry] = []
            try txn.scanEntries(t.entries, from: prefix) { k, v in
                guard k.count == 36, k.prefix(20).elementsEqual(prefix) else { return false }
                if let e = try decoded({ () throws(RecordDecodingError) in try PendingTable.entry(key: k, value: v) }) { entries.append(e) }
                return true
            }
            var s = DaySummary()
            for e in entries {
                if anyRemoved, try txn.withValue(t.removed, key: goal.bytes + e.id.bytes, { _ in true }) == true { continue }
                s.add(e)
            }
            return s
        }
    }

    /// Adds `added` (the summary of new live entries) to `goal`'s row for `day`; returns the row
    /// before and after.
    static func add(_ added: DaySummary, to goal: UUID, _ day: Day, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws
        -> (old: DaySummary, new: DaySummary)
    {
        try updateDay(goal, day, txn, t) { (_: borrowing StoreTransaction, old) in
            var new = old
            new.add(added)
            return new
        }
    }

    /// Replaces `goal`'s row for `day` with what `change` makes of it (an empty summary removes
    /// the row); returns the row before and after.
    private static func updateDay(
        _ goal: UUID, _ day: Day, _ txn: borrowing StoreTransaction, _ t: ProjectionTables,
        _ change: (borrowing StoreTransaction, DaySummary) throws -> DaySummary
    ) throws -> (old: DaySummary, new: DaySummary) {
        let key = dayKey(goal, day)
        let old = try txn.withValue(t.days, key: key) { b in try decoded { () throws(RecordDecodingError) in try DaySummary(bytes: b) } }
            ?? DaySummary()
        let new = try change(txn, old)
        if new != old {
            if new.isEmpty {
                try txn.delete(t.days, key: key)
            } else {
                try txn.put(t.days, key: key, value: new.bytes)
            }
        }
        return (old, new)
    }

    /// Replaces every day row of `goal` with those of its live entries (a goal whose entries
    /// come from schema-1 history writes, which are not additive).
    static func replaceDays(of goal: GoalState, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws {
        try deleteRows(t.days, of: goal.id, keyLength: 20, txn)
        for (day, s) in days(of: goal) { try txn.put(t.days, key: dayKey(goal.id, day), value: s.bytes) }
    }

    /// The day rows of `goal`'s live entries, in day order.
    static func days(of goal: GoalState) -> [(day: Day, summary: DaySummary)] {
        var days: [Day: DaySummary] = [:]
        // Entries of one day often come one after another (those read from the stored
        // projection come in day order): each such run is summed apart and taken into its day's
        // summary once, not looked up entry by entry.
        var run: (day: Day, summary: DaySummary)?
        func takeRun() { if let done = run { days[done.day, default: DaySummary()].add(done.summary) } }
        goal.forEachLiveEntry(under: goal.historyRule) { e in
            if run?.day != e.day {
                takeRun()
                run = (e.day, DaySummary())
            }
            run?.summary.add(e)
        }
        takeRun()
        return days.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }.map { (day: $0.key, summary: $0.value) }
    }

    /// Deletes `goal`'s rows of `db` whose keys have `keyLength` bytes.
    static func deleteRows(_ db: Database, of goal: UUID, keyLength: Int, _ txn: borrowing StoreTransaction) throws {
        let prefix = goal.bytes
        var keys: [[UInt8]] = []
        try txn.scan(db, from: prefix) { k, _ in
            guard k.prefix(16).elementsEqual(prefix) else { return false }
            if k.count == keyLength { keys.append(Array(k)) }
            return true
        }
        for k in keys { try txn.delete(db, key: k) }
    }

    /// The period summaries of a goal whose day rows are `days` (in day order), in period
    /// order (a one-time goal: one, numbered nil).
    static func periods(of days: some Sequence<(day: Day, summary: DaySummary)>, cadence: Cadence, firstWeekday fw: Int)
        -> [(n: Int32?, summary: DaySummary)]
    {
        var out: [(n: Int32?, summary: DaySummary)] = []
        for (day, s) in days {
            let n = cadence.periodNumber(of: day, firstWeekday: fw)
            if let last = out.last, last.n == n {
                out[out.count - 1].summary.add(s)
            } else {
                out.append((n, s))
            }
        }
        return out
    }

    /// The runs of consecutive completed periods among `periods` (in period order) under `rules`.
    static func runs(of periods: [(n: Int32?, summary: DaySummary)], rules: ViewBasis) -> [ClosedRange<Int32>] {
        var runs: [ClosedRange<Int32>] = []
        for (n, s) in periods {
            guard let n, rules.isComplete(s) else { continue }
            if let last = runs.last, last.upperBound == n - 1 {
                runs[runs.count - 1] = last.lowerBound...n
            } else {
                runs.append(n...n)
            }
        }
        return runs
    }

    /// The rows of `runs` for a goal: its basis (with the best run) and one row per run.
    static func runRows(_ goal: UUID, rules: ViewBasis, runs: [ClosedRange<Int32>]) -> [(key: [UInt8], value: [UInt8])] {
        var basis = rules
        var rows: [(key: [UInt8], value: [UInt8])] = []
        for r in runs {
            rows.append((runKey(goal, r.upperBound), withUnsafeBytes(of: number(r.lowerBound).bigEndian) { Array($0) }))
            basis.best = max(basis.best, UInt32(r.upperBound - r.lowerBound) + 1)
        }
        rows.append((goal.bytes, basis.bytes))
        return rows
    }

    /// Builds `goal`'s periods, runs and basis again from its day rows under `rules` (nothing is
    /// kept for a goal that has neither a header nor a day row).
    static func rebuildPeriods(_ goal: UUID, rules: ViewBasis, exists: Bool, firstWeekday fw: Int, _ txn: borrowing StoreTransaction, _ t: ProjectionTables)
        throws
    {
        try deleteRows(t.runs, of: goal, keyLength: 20, txn)
        try deleteRows(t.periods, of: goal, keyLength: 20, txn)
        var days: [(day: Day, summary: DaySummary)] = []
        let prefix = goal.bytes
        try txn.scan(t.days, from: prefix) { k, v in
            guard k.count == 20, k.prefix(16).elementsEqual(prefix) else { return false }
            let bytes = UInt32(bigEndian: k.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
            days.append(
                try decoded { () throws(RecordDecodingError) in (try PendingTable.EntryKey.storedDay(bytes), try DaySummary(bytes: v)) })
            return true
        }
        guard exists || !days.isEmpty else {
            try txn.delete(t.runs, key: goal.bytes)
            return
        }
        let periods = periods(of: days, cadence: rules.cadence, firstWeekday: fw)
        for (n, s) in periods { try txn.put(t.periods, key: periodKey(goal, n), value: s.bytes) }
        for row in runRows(goal, rules: rules, runs: runs(of: periods, rules: rules)) {
            try txn.put(t.runs, key: row.key, value: row.value)
        }
    }

    /// Follows a change of `goal`'s row for `day` from `old` to `new` in its period's row: the
    /// sums by difference, the latest completion from the new row when it is at least as late,
    /// else from the period's day rows when the period's latest was this day's. Returns the
    /// period.
    static func apply(
        day: Day, old: DaySummary, new: DaySummary, of goal: UUID, cadence: Cadence, firstWeekday fw: Int, _ txn: borrowing StoreTransaction,
        _ t: ProjectionTables
    ) throws -> Int32? {
        let n = cadence.periodNumber(of: day, firstWeekday: fw)
        guard old != new else { return n }
        var p = try period(n, of: goal, txn, t)
        p.micro = p.micro &+ new.micro &- old.micro
        p.amounts = p.amounts &+ new.amounts &- old.amounts
        p.outcomes = p.outcomes &+ new.outcomes &- old.outcomes
        if let o = new.latest, p.latest.map({ o == $0 || o.isAfter($0) }) ?? true {
            p.latest = o
        } else if old.latest != nil, old.latest == p.latest {
            // The period's latest was this day's and is gone or replaced by an earlier one.
            let span = cadence.period(number: n ?? 0, firstWeekday: fw)
            p.latest = try summary(goal, from: span?.start, through: span?.end, txn, t).latest
        }
        if p.isEmpty {
            try txn.delete(t.periods, key: periodKey(goal, n))
        } else {
            try txn.put(t.periods, key: periodKey(goal, n), value: p.bytes)
        }
        return n
    }

    /// Rows of `days`, `periods` and `runs`, each by key.
    typealias FreshRows = (days: [[UInt8]: [UInt8]], periods: [[UInt8]: [UInt8]], runs: [[UInt8]: [UInt8]])

    /// Every row of `days`, `periods` and `runs` a fresh replay gives, for `verify` (the `calendar` row
    /// apart: it is present once a batch has been folded).
    static func rows(of p: GoalProjection, firstWeekday fw: Int) -> FreshRows {
        var rows: FreshRows = ([:], [:], [:])
        for g in p.goals.values { addRows(of: g, firstWeekday: fw, to: &rows) }
        return rows
    }

    /// The rows of `days`, `periods` and `runs` one goal's state gives.
    static func rows(of g: GoalState, firstWeekday fw: Int) -> FreshRows {
        var rows: FreshRows = ([:], [:], [:])
        addRows(of: g, firstWeekday: fw, to: &rows)
        return rows
    }

    private static func addRows(of g: GoalState, firstWeekday fw: Int, to rows: inout FreshRows) {
        let sorted = days(of: g)
        for (day, s) in sorted { rows.days[dayKey(g.id, day)] = s.bytes }
        guard g.hasHeader || !sorted.isEmpty else { return }
        let rules = ViewBasis(g)
        let periods = periods(of: sorted, cadence: rules.cadence, firstWeekday: fw)
        for (n, s) in periods { rows.periods[periodKey(g.id, n)] = s.bytes }
        for row in Self.runRows(g.id, rules: rules, runs: runs(of: periods, rules: rules)) { rows.runs[row.key] = row.value }
    }

    /// Brings `goal`'s runs in line with period `n`, whose day rows may have changed.
    static func update(period n: Int32, of goal: UUID, basis: inout ViewBasis, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws {
        let complete = basis.isComplete(try period(n, of: goal, txn, t))
        let run = try run(containing: n, of: goal, txn, t)
        guard complete != (run != nil) else { return }
        func put(_ r: ClosedRange<Int32>) throws {
            try txn.put(t.runs, key: runKey(goal, r.upperBound), value: withUnsafeBytes(of: number(r.lowerBound).bigEndian) { Array($0) })
        }
        if complete {
            // Joins the run ending just before and the one starting just after, if any.
            let before = n == .min ? nil : try self.run(containing: n - 1, of: goal, txn, t)
            let after = n == .max ? nil : try self.run(containing: n + 1, of: goal, txn, t)
            if let before { try txn.delete(t.runs, key: runKey(goal, before.upperBound)) }
            let joined = (before?.lowerBound ?? n)...(after?.upperBound ?? n)
            try put(joined)
            basis.best = max(basis.best, length(joined))
        } else if let run {
            // Splits the run around the period.
            try txn.delete(t.runs, key: runKey(goal, run.upperBound))
            if run.lowerBound < n { try put(run.lowerBound...(n - 1)) }
            if n < run.upperBound { try put((n + 1)...run.upperBound) }
            if length(run) >= basis.best {
                basis.best = 0
                let prefix = goal.bytes
                try txn.scan(t.runs, from: prefix) { k, v in
                    guard k.prefix(16).elementsEqual(prefix) else { return false }
                    if let r = Self.run(key: k, value: v) { basis.best = max(basis.best, length(r)) }
                    return true
                }
            }
        }
    }
}
