import Foundation

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
