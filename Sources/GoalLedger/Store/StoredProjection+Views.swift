import Foundation

extension StoredProjection.Batch {
    /// Brings `days`, `periods` and `runs` in line with the batch (after `entries`, `removed`, the headers
    /// and the digest are written): the touched days are computed again from their entries,
    /// goals whose entries are not additive from their whole state, and each changed goal's
    /// runs follow the periods of its touched days, or are built again when its cadence, kind
    /// or target, or the store device's first weekday, changed.
    mutating func flushViews(_ txn: borrowing StoreTransaction) throws {
        let t = tables
        let own = try txn.withValue(layout.meta, key: MetaKey.device) { String(decoding: $0, as: UTF8.self) } ?? ""
        let fw = try device(own, txn).calendar.firstWeekday
        var rebuildRuns = Set<UUID>()
        if try ViewTables.firstWeekday(txn, t) != fw {
            try txn.put(t.runs, key: ViewTables.calendarKey, value: [UInt8(fw)])
            try txn.scan(t.runs) { k, _ in
                if k.count == 16 { rebuildRuns.insert(StoredProjection.uuid(k)) }
                return true
            }
        }
        // Goals whose entries are not additive had their days written again by `flushDigest`,
        // from the whole state it read.
        rebuildRuns.formUnion(recomputeEntries)
        let anyRemoved = try txn.count(t.removed) > 0
        var changed: [UUID: [(day: Day, old: DaySummary, new: DaySummary)]] = [:]
        for d in touchedDays where !recomputeEntries.contains(d.goal) {
            let (old, new) = try ViewTables.rescan(d.goal, d.day, txn, t, anyRemoved: anyRemoved)
            changed[d.goal, default: []].append((d.day, old, new))
        }
        for (d, added) in addedToDays where !touchedDays.contains(d) && !recomputeEntries.contains(d.goal) {
            let (old, new) = try ViewTables.add(added, to: d.goal, d.day, txn, t)
            changed[d.goal, default: []].append((d.day, old, new))
        }
        var goals = Set(changed.keys)
        goals.formUnion(dirtyGoals)
        goals.formUnion(rebuildRuns)
        for goal in goals.map({ (key: IDWords($0), goal: $0) }).sorted(by: { $0.key < $1.key }).map(\.goal) {
            // A goal whose header this batch left alone keeps the rules its basis row names, so
            // progress alone reads no header; otherwise the header says which rules apply.
            let stored = rebuildRuns.contains(goal) ? nil : try ViewTables.basis(goal, txn, t)
            if stored == nil || dirtyGoals.contains(goal) {
                let header = try headers[goal] ?? StoredProjection.header(goal, txn, t) ?? GoalState(id: goal)
                let rules = ViewBasis(header)
                if stored?.sameRules(as: rules) != true {
                    try ViewTables.rebuildPeriods(goal, rules: rules, exists: header.hasHeader, firstWeekday: fw, txn, t)
                    continue
                }
            }
            guard var basis = stored else { continue }
            let before = basis
            var numbers = Set<Int32>()
            for c in changed[goal] ?? [] {
                if let n = try ViewTables.apply(day: c.day, old: c.old, new: c.new, of: goal, cadence: basis.cadence, firstWeekday: fw, txn, t) {
                    numbers.insert(n)
                }
            }
            for n in numbers.sorted() { try ViewTables.update(period: n, of: goal, basis: &basis, txn, t) }
            if basis != before { try txn.put(t.runs, key: goal.bytes, value: basis.bytes) }
        }
    }
}
