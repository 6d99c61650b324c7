import Foundation
import LMDB

/// One change of the stored projection: the event at `position` changed a goal, or the settings
/// of a device.
public struct ProjectionChange: Equatable, Hashable, Sendable {
    /// The log position of the event (1 for the first event of the store).
    public var position: UInt64
    /// The goal the event changed; nil when it changed a device.
    public var goal: UUID?
    /// For an event about devices (settings, authorization, enrolment, revocation): the device
    /// that wrote it, its origin; nil when it changed a goal.
    public var device: String?
    /// The type of the event that made the change.
    public var type: EventType
}

/// Follows the projection's changes from a checkpoint of the subscriber's own.
///
/// The contract, in the manner of GRDB's `ValueObservation`:
/// - **Catch-up, then live.** Started after checkpoint `C`, a feed first delivers the changes of
///   positions `C+1, C+2, …` already committed, then those committed later, by this process or
///   another.
/// - **Every change, once, in order.** Changes come in position order, one per event that
///   changed a goal or a device; nothing is coalesced, so a subscriber that needs every change
///   gets it. A subscriber that only needs the latest state may coalesce a batch by goal.
/// - **Only committed changes.** A feed reads committed snapshots: a batch that was rolled back
///   is never seen, and a batch is seen whole.
/// - **The checkpoint is the subscriber's.** It advances as changes are delivered; persist it
///   and start a new feed there to resume. Positions never change, so rebuilding the projection
///   re-points subscribers without feeding them history again.
/// - **No transaction is held** between deliveries: each `next` call is one short read.
/// - **A value.** A feed is its store and its checkpoint: `next` advances the checkpoint of the
///   feed it is called on; a copy keeps its own. ``changes(pollInterval:)`` leaves the feed's
///   checkpoint as it is: each change carries its position, which is the checkpoint to persist.
public struct ChangeFeed: Sendable {
    /// The store whose projection the feed follows.
    public let store: LedgerStore
    /// The position of the last change delivered (or the one the feed started after): persist
    /// it to resume.
    public private(set) var checkpoint: UInt64

    /// A feed of the changes after position `checkpoint` (0: from the first event).
    public init(store: LedgerStore, after checkpoint: UInt64) {
        self.store = store
        self.checkpoint = checkpoint
    }

    /// The next committed changes after the checkpoint (at most `limit`), advancing it. Returns
    /// an empty array when the feed is caught up; never waits.
    public mutating func next(limit: Int = 1000) throws(LedgerError) -> [ProjectionChange] {
        let (changes, last) = try store.changes(after: checkpoint, limit: limit)
        checkpoint = last
        return changes
    }

    /// The changes after the feed's checkpoint as an asynchronous sequence: catch-up first, then
    /// live changes. Once caught up it waits: a commit of this process (through any
    /// `LedgerStore` of the path) wakes it at once; another process's commit is found by
    /// looking again every `pollInterval` (one short read). Ends when the task is cancelled or
    /// reading fails.
    public func changes(pollInterval: Duration = .milliseconds(250)) -> AsyncThrowingStream<ProjectionChange, Error> {
        let store = self.store
        let start = checkpoint
        return AsyncThrowingStream { continuation in
            let wakeUps = store.wakeUps(otherProcesses: pollInterval)
            let task = Task {
                var checkpoint = start
                do {
                    for await _ in wakeUps.stream {
                        if Task.isCancelled { break }
                        // Everything committed so far, in batches, then wait again.
                        while case (let batch, let last) = try store.changes(after: checkpoint, limit: 1000),
                            !batch.isEmpty || last != checkpoint
                        {
                            checkpoint = last
                            for change in batch { continuation.yield(change) }
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                wakeUps.stop()
                task.cancel()
            }
        }
    }
}

extension LedgerStore {
    /// Changes after `checkpoint` up to the projection's checkpoint, and the position reached.
    func changes(after checkpoint: UInt64, limit: Int) throws(LedgerError) -> ([ProjectionChange], UInt64) {
        try readTransaction { txn in
            let committed = try StoredProjection.status(txn, layout).checkpoint
            var out: [ProjectionChange] = []
            var reached = checkpoint
            guard checkpoint < committed else { return (out, max(checkpoint, committed)) }
            try txn.scan(layout.events, from: (checkpoint + 1).bigEndianBytes) { key, value in
                let position = UInt64(bigEndianBytes: key)
                guard position <= committed, out.count < limit else { return false }
                let e = try Self.decodeRecord(value, position: position)
                reached = position
                // A set-aside event changed nothing.
                guard e.isFoldable else { return true }
                out.append(
                    ProjectionChange(
                        position: position, goal: e.payload.goal, device: e.payload.goal == nil ? e.origin : nil, type: e.type))
                return true
            }
            return (out, reached)
        }
    }
}

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
