import Foundation

/// What changed in one device's pending table after a checkpoint: the table's change feed, as
/// the reconciler follows it.
///
/// A change to a goal is a change to that goal's row in every device's table (the row may be
/// unchanged: the reader compares). A change of the device's own settings or authorization, or
/// of any device's authorization (routed reminders may move), changes the whole table: `all`.
/// Other devices' settings do not touch this table. Positions are the log's, so a rebuild,
/// which rewrites the tables without moving positions, feeds nothing again.
package struct PendingTableChanges: Sendable {
    public var goals = Set<UUID>()
    public var all = false
    /// The position the changes run to: the subscriber's next checkpoint.
    public var checkpoint: UInt64

    /// Reads the changes of `device`'s table after `checkpoint`, in batches.
    public init(store: LedgerStore, device: String, after checkpoint: UInt64) throws(LedgerError) {
        var feed = ChangeFeed(store: store, after: checkpoint)
        while case let batch = try feed.next(limit: 10_000), !batch.isEmpty {
            for c in batch {
                if let g = c.goal {
                    goals.insert(g)
                } else if c.device == device || c.type == .notificationAuthorization {
                    all = true
                }
            }
        }
        self.checkpoint = feed.checkpoint
    }
}
