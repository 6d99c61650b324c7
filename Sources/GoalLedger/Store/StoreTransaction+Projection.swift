import Foundation

// Reading the stored projection (`StoredProjection`, `ProjectionTables`).
extension StoreTransaction {
    /// The stored projection's active generation, version and checkpoint.
    func projectionStatus() throws -> StoredProjection.Status {
        StoredProjection.Status(
            // The low bit alone: a damaged row of any value still names one of the two generations.
            generation: Int(truncatingIfNeeded: (try u64(layout.meta, MetaKey.projectionActive) ?? 0) & 1),
            version: try u64(layout.meta, MetaKey.projectionVersion) ?? 0,
            checkpoint: try u64(layout.meta, MetaKey.projectionCheckpoint) ?? 0)
    }

    /// The tables of the active generation.
    func activeProjection() throws -> ProjectionTables {
        layout.projections[try projectionStatus().generation]
    }


    /// A goal with its entries and version: the header, then the goal's events through the
    /// log's goal index (each `progressRecorded` is an entry), then the removals.
    func goal(_ goal: UUID, in t: ProjectionTables, rule: HistoryRule, revoked: [String: UInt64]? = nil) throws -> GoalState? {
        guard let state = try StoredProjection.header(goal, self, t) else { return nil }
        return try withEntries(state, in: t, rule: rule, revoked: revoked)
    }

    /// `header` completed with the goal's entries, history writes, removals and version.
    func withEntries(
        _ header: GoalState, in t: ProjectionTables, rule: HistoryRule, revoked: [String: UInt64]? = nil, historyInEffectOnly: Bool = false
    ) throws -> GoalState {
        var state = header
        let goal = header.id
        state.historyRule = rule
        // Read once by callers that load many goals; a single goal reads it here.
        let revoked = try revoked ?? revocations()
        // A revoked device's events after its revocation do not count (see GoalProjection):
        // they are not in `entries`, and the version leaves them out.
        if revoked.isEmpty {
            state.version = try goalEventCount(goal)
        } else {
            state.version = 0
            for p in try positions(ofGoal: goal) {
                guard let e = try event(at: p) else {
                    throw LedgerError.damaged("the goal index names position \(p), which holds no event", position: p)
                }
                if let after = revoked[e.origin], e.sequence > after { continue }
                state.version += 1
            }
        }
        var historyWrites: [UUID] = []
        // Under the old rule only the last write in canonical order counts: with
        // `historyInEffectOnly`, the others are left unread (their rows hold their keys).
        let lastOnly = historyInEffectOnly && rule == .lastWriteWins
        var last: (key: CanonicalKey, id: UUID)?
        // Room for the entries at once, up to a bound: the count is read from the goal index, and
        // a damaged one must not ask for any amount of memory (past it, the table grows).
        state.recordedEntries.reserveCapacity(min(state.version, 1 << 20))
        let prefix = goal.bytes
        try scanEntries(t.entries, from: prefix) { k, v in
            guard k.count == 36, k.prefix(16).elementsEqual(prefix) else { return false }
            if let entry = try StoredProjection.decoded({ () throws(RecordDecodingError) in try PendingTable.entry(key: k, value: v) }) {
                state.recordedEntries.record(entry)
            } else {
                let id = StoredProjection.uuid(UnsafeRawBufferPointer(rebasing: k[20...]))
                guard lastOnly else {
                    historyWrites.append(id)
                    return true
                }
                let key = try StoredProjection.decoded({ () throws(RecordDecodingError) in try PendingTable.historyKey(v) })
                if let l = last, l.key != key ? key < l.key : !UUID.precedes(l.id, id) { return true }
                last = (key, id)
            }
            return true
        }
        if let last { historyWrites = [last.id] }
        for id in historyWrites {
            guard let e = try event(id: id) else {
                throw LedgerError.damaged("the entries table names event \(id.uuidString), which the log does not hold")
            }
            state.record(e)
        }
        try lmdb.scan(t.removed, from: prefix) { key, _ in
            guard key.count == 32, key.prefix(16).elementsEqual(prefix) else { return false }
            state.removedEntries.insert(StoredProjection.uuid(UnsafeRawBufferPointer(rebasing: key[16...])))
            return true
        }
        return state
    }

    /// The entry `entry` of `goal`, if that id is a `progressRecorded` of that goal.
    func entry(_ entry: UUID, of goal: UUID) throws -> ProgressEntry? {
        guard let e = try event(id: entry), case .progressRecorded(let r) = e.payload, r.goal == goal
        else { return nil }
        return ProgressEntry(e, r)
    }

    /// The number of events about `goal` in the store (its stream version).
    func version(of goal: UUID) throws -> Int {
        try positions(ofGoal: goal).count
    }

    /// The whole projection, as `replay` would compute it.
    func loadProjection(rule: HistoryRule) throws -> GoalProjection {
        let t = try activeProjection()
        var projection = GoalProjection(historyRule: rule)
        projection.revokedAfter = try revocations()
        try forEachGoal(rule: rule, revoked: projection.revokedAfter) { projection.insert($0) }
        try lmdb.scan(t.devices) { key, value in
            let name = String(decoding: key, as: UTF8.self)
            projection.insert(try StoredProjection.decoded { () throws(RecordDecodingError) in try ProjectionCodec.decodeDevice(value, name: name) })
            return true
        }
        projection.position = try projectionStatus().checkpoint
        return projection
    }

    /// Every goal of the active generation with its entries, in id order, one at a time.
    func forEachGoal(rule: HistoryRule, revoked: [String: UInt64], _ body: (GoalState) throws -> Void) throws {
        let t = try activeProjection()
        var ids: [UUID] = []
        try lmdb.scan(t.goals) { key, _ in
            ids.append(StoredProjection.uuid(key))
            return true
        }
        for id in ids {
            if let g = try goal(id, in: t, rule: rule, revoked: revoked) { try body(g) }
        }
    }

    func setAsideEvents() throws -> [SetAsideEvent] {
        let tables = try activeProjection()
        var out: [SetAsideEvent] = []
        try scan(tables.setAside) { key, value in
            let position = UInt64(bigEndianBytes: key)
            guard let e = try event(at: position) else {
                throw LedgerError.damaged("the set-aside table names position \(position), which holds no event", position: position)
            }
            out.append(
                SetAsideEvent(
                    position: position, id: e.id, origin: e.origin, sequence: e.sequence, reason: String(decoding: value, as: UTF8.self)))
            return true
        }
        return out
    }

    /// Expands `rows` at `now` for `device`, reading entries by day for the window strategy.
    func plan(
        _ rows: [PendingRow], _ device: DeviceState, now: Instant, in t: ProjectionTables, rule: HistoryRule
    ) throws -> ReminderPlan {
        let context = ReminderPlan.Context(device)
        let today = context.calendar.day(of: now)
        // A weekly reminder on a chosen weekday can fall inside a week that began before today:
        // its completion counts that week's entries, up to six days back.
        let weekStart = Cadence.weekly.period(containing: today, firstWeekday: context.settings.firstWeekday)?.start ?? today
        var cache: [UUID: GoalState] = [:]
        var failure: Error?
        let plan = ReminderPlan.plan(rows: rows, context, now: now) { row, within in
            do {
                let from = row.facts.cadence == .weekly ? weekStart : today
                return try PendingTable.periodCompleted(
                    row, within: within, from: from, calendar: context.calendar, cache: &cache, self, t, rule: rule)
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return plan
    }

    /// The view of `goal` from the kept rows, or folded from its entries when the rows were kept
    /// for another calendar (read first when `entriesRead` is false).
    func view(
        of goal: GoalState, entriesRead: Bool, calendar: DeviceCalendar, now: Instant, in t: ProjectionTables, rule: HistoryRule,
        revoked: [String: UInt64]?
    ) throws -> GoalView {
        if let v = try ViewTables.view(of: goal, calendar: calendar, now: now, self, t) { return v }
        let full = entriesRead ? goal : try withEntries(goal, in: t, rule: rule, revoked: revoked)
        return GoalView(goal: full, calendar: calendar, now: now)
    }
}
