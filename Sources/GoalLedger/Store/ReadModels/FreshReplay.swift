import Foundation

/// What `verify` compares a stored projection with: a fresh replay of the whole log, and what
/// the read models need besides it to give the rows it would store (`ReadModel.freshRows`).
struct FreshReplay {
    /// The replay of every event that passed the gate.
    let projection: GoalProjection
    /// The rows of `setAside`: the events the gate refused as the log was read.
    let setAsideRows: [[UInt8]: [UInt8]]
    /// The store device's first weekday, which the views' weeks start on.
    let firstWeekday: Int
    /// Whether the stored `runs` holds its `calendar` row (the first batch folded writes it).
    let calendarStored: Bool

    /// The rows a fresh replay gives one table.
    enum Rows {
        /// By key, in no order.
        case keyed([[UInt8]: [UInt8]])
        /// The rows of `entries`, in key order (a million of them are walked against the table
        /// rather than held as a table of byte arrays).
        case entries([(key: PendingTable.EntryKey, row: PendingTable.EntryRow)])
    }
}
