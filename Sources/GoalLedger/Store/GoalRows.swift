import Foundation

/// The stored rows of one goal, made from a fold of that goal's events alone: what the
/// goal-at-a-time `verify` compares with the stored projection. The rows come table by table
/// (by their index in `ProjectionTables.tableNames`), each table's in key order; the entries'
/// rows, the most numerous, come apart as keys and the rows they stand for, in key order, so
/// that they are compared without making each row's bytes.
///
/// The rows that depend on more than the goal (its pending requests, which depend on every
/// device; the digest's ledger totals) are left to the caller, which gets the goal's reminder
/// facts and its digest term for them.
struct GoalRows {
    /// Table indexes in `ProjectionTables.tableNames`.
    enum Table {
        static let goals = 0, removed = 1, reminders = 3, entries = 5, digest = 7, days = 8, periods = 9, runs = 10
    }

    /// Each row but the entries': its table, key and value; by table, then key.
    private(set) var rows: [(table: Int, key: [UInt8], value: [UInt8])] = []
    /// The rows of `entries`, in key order.
    let entries: [(key: PendingTable.EntryKey, row: PendingTable.EntryRow)]
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
        for key in g.removedEntries.map({ id + $0.bytes }).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            rows.append((Table.removed, key, []))
        }
        facts = ReminderFacts(g)
        if let facts { rows.append((Table.reminders, id, PendingTable.encode(facts))) }
        // Sorted by key alone (no row moved, nothing retained), then each row taken once.
        let unsorted = PendingTable.entryRows(of: g)
        var order = unsorted.indices.map { (key: unsorted[$0].key, index: $0) }
        order.sort { $0.key < $1.key }
        entries = order.map { unsorted[$0.index] }
        let parts = try ProjectionDigest.parts(of: g)
        if !parts.isEmpty { rows.append((Table.digest, id, parts.bytes)) }
        goalHash = parts.goalHash
        let views = ViewTables.rows(of: g, firstWeekday: firstWeekday)
        for (table, made) in [(Table.days, views.days), (Table.periods, views.periods), (Table.runs, views.runs)] {
            for (key, value) in made.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) { rows.append((table, key, value)) }
        }
    }
}
