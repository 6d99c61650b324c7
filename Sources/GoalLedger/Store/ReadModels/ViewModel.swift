import Foundation

/// The views read model: `days` (per goal and day, a summary of its live entries), `periods`
/// (the same per period of the goal's cadence) and `runs` (runs of completed periods, the
/// rules they were built for, the store device's first weekday). See `ViewTables` and
/// docs/storage-and-guarantees.md, "Views kept with the projection".
///
/// Last in the order: its flush reads the written entries, removals and headers.
struct ViewModel: ReadModel {
    static let tables: [ProjectionTable] = [.days, .periods, .runs]

    /// What this batch's live new entries add to their days (`flush` adds it to each day's
    /// row, unless the day is computed again): a summary is a sum, counts and the latest
    /// completion, so additions need no rescan of the day.
    /// Keyed by the goal's slot (`FoldState.slot(of:)`) in the high half and the day in the low.
    private var addedToDays: [UInt64: DaySummary] = [:]
    /// Per goal slot, the day its latest entries went to and what they add to it: a goal's
    /// entries mostly come day after day, so they are summed here and moved into
    /// `addedToDays` only when the slot's day changes (and at flush).
    private var currentDays = GoalSlots<(key: UInt64, added: DaySummary)>()

    init() {}

    mutating func apply(_ e: Event, at position: UInt64, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        guard let entry = state.liveEntry else { return }
        let slot = state.progressSlot
        let key = UInt64(slot) << 32 | UInt64(UInt32(bitPattern: entry.day.daysSinceEpoch))
        if let current = currentDays[slot], current.key != key { addedToDays[current.key, default: DaySummary()].add(current.added) }
        currentDays.update(slot, default: (key, DaySummary())) { current in
            if current.key != key { current = (key, DaySummary()) }
            current.added.add(entry)
        }
    }

    /// Moves what `currentDays` holds into `addedToDays`.
    private mutating func settleCurrentDays() {
        for (_, current) in currentDays.filled { addedToDays[current.key, default: DaySummary()].add(current.added) }
        currentDays.removeAll()
    }

    /// A goal whose entries are not additive has its days written again from its whole state
    /// (`flush` then builds its periods and runs again).
    mutating func recompute(_ goal: GoalState, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        try ViewTables.replaceDays(of: goal, txn, state.tables)
    }

    /// Brings `days`, `periods` and `runs` in line with the batch: the days the removals touched
    /// are computed again from their entries, the added entries are added to theirs, and each
    /// changed goal's runs follow the periods of its changed days, or are built again when its
    /// cadence, kind or target, or the store device's first weekday, changed.
    mutating func flush(_ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        settleCurrentDays()
        let t = state.tables
        let own = try txn.withValue(state.layout.meta, key: MetaKey.device) { String(decoding: $0, as: UTF8.self) } ?? ""
        let fw = try (state.devices[own] ?? StoredProjection.device(own, txn, t)).calendar.firstWeekday
        var rebuildRuns = Set<UUID>()
        if try ViewTables.firstWeekday(txn, t) != fw {
            try txn.put(t.runs, key: ViewTables.calendarKey, value: [UInt8(fw)])
            try txn.scan(t.runs) { k, _ in
                if k.count == 16 { rebuildRuns.insert(StoredProjection.uuid(k)) }
                return true
            }
        }
        // Goals whose entries are not additive had their days written again by `recompute`.
        rebuildRuns.formUnion(state.recomputed)
        let changed = try changedDays(state, txn)
        var goals = Set(changed.keys)
        goals.formUnion(state.changedGoals)
        goals.formUnion(rebuildRuns)
        for goal in goals.map({ (key: IDWords($0), goal: $0) }).sorted(by: { $0.key < $1.key }).map(\.goal) {
            try updateRuns(of: goal, changed[goal] ?? [], rebuild: rebuildRuns.contains(goal), firstWeekday: fw, state, txn)
        }
        addedToDays = [:]
    }

    /// Writes the day rows the batch changed (other than those of goals computed again): the
    /// days of removed entries computed again from their rows in `entries`, the others added
    /// to. Returns each goal's changed days with their rows before and after.
    private func changedDays(_ state: FoldState, _ txn: borrowing StoreTransaction) throws
        -> [UUID: [(day: Day, old: DaySummary, new: DaySummary)]]
    {
        let t = state.tables
        var touchedDays = Set<GoalDay>()
        for r in state.removedEntries { touchedDays.insert(GoalDay(goal: r.goal, day: r.entry.day)) }
        let anyRemoved = try txn.count(t.removed) > 0
        var changed: [UUID: [(day: Day, old: DaySummary, new: DaySummary)]] = [:]
        for d in touchedDays where !state.recomputed.contains(d.goal) {
            let (old, new) = try ViewTables.rescan(d.goal, d.day, txn, t, anyRemoved: anyRemoved)
            changed[d.goal, default: []].append((d.day, old, new))
        }
        for (key, added) in addedToDays {
            let d = GoalDay(goal: state.slotGoals[Int(key >> 32)], day: Day(daysSinceEpoch: Int32(bitPattern: UInt32(truncatingIfNeeded: key))))
            guard !touchedDays.contains(d) && !state.recomputed.contains(d.goal) else { continue }
            let (old, new) = try ViewTables.add(added, to: d.goal, d.day, txn, t)
            changed[d.goal, default: []].append((d.day, old, new))
        }
        return changed
    }

    /// Brings `goal`'s periods and runs in line with its `changed` days; builds them again
    /// from its day rows when `rebuild` is set or its rules changed.
    private func updateRuns(
        of goal: UUID, _ changed: [(day: Day, old: DaySummary, new: DaySummary)], rebuild: Bool, firstWeekday fw: Int, _ state: FoldState,
        _ txn: borrowing StoreTransaction
    ) throws {
        let t = state.tables
        // A goal whose header this batch left alone keeps the rules its basis row names, so
        // progress alone reads no header; otherwise the header says which rules apply.
        let stored = rebuild ? nil : try ViewTables.basis(goal, txn, t)
        if stored == nil || state.changedGoals.contains(goal) {
            let header = try state.headers[goal] ?? StoredProjection.header(goal, txn, t) ?? GoalState(id: goal)
            let rules = ViewBasis(header)
            if stored?.sameRules(as: rules) != true {
                try ViewTables.rebuildPeriods(goal, rules: rules, exists: header.hasHeader, firstWeekday: fw, txn, t)
                return
            }
        }
        guard var basis = stored else { return }
        let before = basis
        var numbers = Set<Int32>()
        for c in changed {
            if let n = try ViewTables.apply(day: c.day, old: c.old, new: c.new, of: goal, cadence: basis.cadence, firstWeekday: fw, txn, t)
            {
                numbers.insert(n)
            }
        }
        for n in numbers.sorted() { try ViewTables.update(period: n, of: goal, basis: &basis, txn, t) }
        if basis != before { try txn.put(t.runs, key: goal.bytes, value: basis.bytes) }
    }

    /// `days`, `periods` and `runs`, with the `calendar` row where the stored table has one
    /// (it names the store device's first weekday).
    static func freshRows(of replay: FreshReplay) throws -> [FreshReplay.Rows] {
        var views = ViewTables.rows(of: replay.projection, firstWeekday: replay.firstWeekday)
        if replay.calendarStored { views.runs[ViewTables.calendarKey] = [UInt8(replay.firstWeekday)] }
        return [.keyed(views.days), .keyed(views.periods), .keyed(views.runs)]
    }
}
