import Foundation
import LMDB

extension LedgerStore {
    /// Expands `rows` at `now` for `device`, reading entries by day for the window strategy.
    static func plan(
        _ rows: [PendingRow], _ device: DeviceState, now: Instant, _ txn: borrowing Transaction, _ t: ProjectionTables,
        _ layout: StoreLayout, rule: HistoryRule
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
                    row, within: within, from: from, calendar: context.calendar, cache: &cache, txn, t, layout, rule: rule)
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return plan
    }
}
