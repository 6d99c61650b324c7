import Foundation

/// The stored rows of one goal, made from a fold of that goal's events alone: what the
/// goal-at-a-time `verify` takes into its sums of the rows a sound projection holds. The rows
/// come in no particular order (the sums do not depend on it). The entries' rows, the most
/// numerous, are not made here: each is a function of its event alone, and `verify` sums them
/// as it reads the log (`StreamedEvent.entriesRow`).
///
/// The rows that depend on more than the goal (its pending requests, which depend on every
/// device; the digest's ledger totals) are left to the caller, which gets the goal's reminder
/// facts and its digest term for them.
struct GoalRows {
    /// Table indexes in `ProjectionTables.tableNames`.
    enum Table {
        static let goals = 0, removed = 1, reminders = 3, entries = 5, digest = 7, days = 8, periods = 9, runs = 10
    }

    /// Each row but the entries': its table, key and value.
    private(set) var rows: [(table: Int, key: [UInt8], value: [UInt8])] = []
    /// Whether the goal was created (it counts in the digest and the goal count).
    let exists: Bool
    /// The goal's term of the ledger's digest sum; nil when it does not count.
    let goalHash: DigestSum?
    /// The goal's reminder facts, for the pending rows of every device; nil without a reminder.
    let facts: ReminderFacts?

    /// The rows of `goal` in `replay`, a fold of that goal's events (and of other goals', which
    /// do not change its state); nil when the fold holds nothing of it. `firstWeekday`: the
    /// store device's, which the weekly views count from.
    init?(_ goal: UUID, in replay: GoalProjection, firstWeekday: Int) throws(LedgerError) {
        guard let g = replay.goals[goal] else { return nil }
        exists = g.exists
        let id = goal.bytes
        if g.hasHeader { rows.append((Table.goals, id, ProjectionCodec.encodeHeader(g))) }
        for entry in g.removedEntries { rows.append((Table.removed, id + entry.bytes, [])) }
        facts = ReminderFacts(g)
        if let facts { rows.append((Table.reminders, id, PendingTable.encode(facts))) }
        let parts = try ProjectionDigest.parts(of: g)
        if !parts.isEmpty { rows.append((Table.digest, id, parts.bytes)) }
        goalHash = parts.goalHash
        let views = ViewTables.rows(of: g, firstWeekday: firstWeekday)
        for (table, made) in [(Table.days, views.days), (Table.periods, views.periods), (Table.runs, views.runs)] {
            for (key, value) in made { rows.append((table, key, value)) }
        }
    }
}
