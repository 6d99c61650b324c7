import Foundation

extension LedgerSnapshot {
    /// The desired notification table of `device` at `now` (what `ledger pending` prints), read
    /// from the stored pending table: each of the device's rows is expanded at `now` (past
    /// one-time fire times dropped, next fire times, the window's dated requests), then ranked
    /// and capped by the device's capacity. Costs time proportional to the device's rows, not to
    /// the goals or the events. A device the store does not know (it never reported settings or
    /// an authorization) has no stored table: its rows are computed from the reminder facts.
    public func pendingPlan(device name: String, now: Instant) throws(LedgerError) -> (DeviceState, ReminderPlan) {
        let rule = historyRule
        return try run {
            let t = try txn.activeProjection()
            let device = try StoredProjection.device(name, txn, t)
            let rows = try PendingTable.rows(of: name, txn, t) ?? PendingTable.computedRows(of: device, txn, t)
            return (device, try txn.plan(rows, device, now: now, in: t, rule: rule))
        }
    }

    /// The rows of `device`'s table for these goals only (absent rows are skipped), and whether
    /// the table holds more than `limit` rows. What an incremental reconciliation pass reads.
    func pendingRows(device name: String, goals: Set<UUID>, limit: Int) throws(LedgerError) -> (rows: [PendingRow], exceeds: Bool) {
        try run {
            let t = try txn.activeProjection()
            var rows: [PendingRow] = []
            for g in goals.sorted(by: UUID.precedes) {
                if let row = try PendingTable.row(of: name, goal: g, txn, t) { rows.append(row) }
            }
            var count = 0
            let prefix = PendingTable.devicePrefix(name)
            try txn.scan(t.pending, from: prefix) { k, _ in
                guard k.starts(with: prefix) else { return false }
                count += 1
                return count <= limit
            }
            return (rows, count > limit)
        }
    }

    /// The reminder facts of these goals (absent: the goal has no live reminder).
    func reminderFacts(_ goals: Set<UUID>) throws(LedgerError) -> [UUID: ReminderFacts] {
        try run {
            let t = try txn.activeProjection()
            var out: [UUID: ReminderFacts] = [:]
            for g in goals { out[g] = try PendingTable.facts(g, txn, t) }
            return out
        }
    }

    /// Expands rows read earlier (an incremental pass) at `now`.
    func expand(_ rows: [PendingRow], device: DeviceState, now: Instant) throws(LedgerError) -> ReminderPlan {
        let rule = historyRule
        return try run { try txn.plan(rows, device, now: now, in: try txn.activeProjection(), rule: rule) }
    }
}
