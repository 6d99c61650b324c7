import Foundation
import LMDB

/// Reads and decodes a range of the log on a thread of its own, a run of events at a time, for
/// a fold in the calling thread's write transaction: decoding, a fifth of a rebuild's work, then
/// overlaps the folding, and a rebuild keeps two processors busy.
///
/// The decoder reads in a read transaction of its own, opened while the caller's write
/// transaction is open: it sees what that write started from, and the fold never changes the
/// log. It holds at most `runsAhead` runs that the fold has not taken. Without a transaction
/// (the map is being resized) it decodes nothing, and ``next()`` says so: the caller decodes
/// the range itself.
///
/// Whoever starts a decoder calls ``stop()`` before its write transaction ends (a `defer`): the
/// decoder's transaction must be closed before the write can commit, or retry on a grown map.
final class LogDecoder: @unchecked Sendable {
    /// When `StoreTransaction.fold` has a decoder read for it: from `minimumEvents` events on
    /// (a thread is not worth starting for fewer), in runs of `runLength`.
    struct Plan {
        var minimumEvents: UInt64 = 16_384
        var runLength = 2048
    }

    /// Runs decoded ahead of the fold, at most.
    static let runsAhead = 4

    /// A run of events in position order, each with its position and, for a
    /// `progressRecorded`, its entry's digest hash (`ProjectionDigest.entryHash`), the fold's
    /// costliest step that depends on the event alone.
    typealias Run = [(position: UInt64, event: Event, entryHash: DigestSum?)]

    /// What ``next()`` gives.
    enum Next {
        /// The next run.
        case run(Run)
        /// Every event of the range was given.
        case end
        /// The decoder had no transaction, and decoded nothing.
        case unavailable
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var ready: [Run] = []
    private var finished = false
    private var unavailable = false
    private var failure: (any Error)?
    private var stopped = false
    private var joined = false
    private let exited = DispatchSemaphore(value: 0)

    /// Starts decoding the events from `start` through `end` of the log of `env`, in runs of
    /// `runLength`.
    init(_ env: Environment, layout: StoreLayout, from start: UInt64, through end: UInt64, runLength: Int) {
        let thread = Thread { [self] in
            defer { exited.signal() }
            do {
                let read: Void? = try env.withReadTransactionIfAvailable { raw in
                    let txn = StoreTransaction(raw, layout: layout)
                    var run = Run()
                    run.reserveCapacity(runLength)
                    var hashBuffer: [UInt8] = []
                    try txn.scan(layout.events, from: start.bigEndianBytes) { key, value in
                        let position = UInt64(bigEndianBytes: key)
                        guard position <= end else { return false }
                        let event = try LedgerStore.decodeForFolding(value, position: position)
                        var hash: DigestSum?
                        if case .progressRecorded(let p) = event.payload {
                            hash = ProjectionDigest.entryHash(ProgressEntry(event, p), buffer: &hashBuffer)
                        }
                        run.append((position, event, hash))
                        guard run.count == runLength else { return true }
                        defer { run.removeAll(keepingCapacity: true) }
                        return hand(run)
                    }
                    if !run.isEmpty { _ = hand(run) }
                }
                finish(unavailable: read == nil, failure: nil)
            } catch {
                finish(unavailable: false, failure: error)
            }
        }
        thread.name = "ledger log decoder"
        thread.start()
    }

    /// Hands `run` to the fold, waiting while `runsAhead` are waiting already; false once the
    /// decoder is stopped.
    private func hand(_ run: Run) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while ready.count >= Self.runsAhead && !stopped { condition.wait() }
        guard !stopped else { return false }
        ready.append(run)
        condition.broadcast()
        return true
    }

    private func finish(unavailable: Bool, failure: (any Error)?) {
        condition.lock()
        finished = true
        self.unavailable = unavailable
        self.failure = failure
        condition.broadcast()
        condition.unlock()
    }

    /// The next run, in position order, waiting for it; a record the decoder could not read is
    /// thrown here, after the runs before it.
    func next() throws -> Next {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty && !finished { condition.wait() }
        if !ready.isEmpty {
            condition.broadcast()
            return .run(ready.removeFirst())
        }
        if let failure { throw failure }
        return unavailable ? .unavailable : .end
    }

    /// Stops the decoder and waits until its thread has closed its transaction and ended.
    func stop() {
        condition.lock()
        stopped = true
        let join = !joined
        joined = true
        condition.broadcast()
        condition.unlock()
        if join { exited.wait() }
    }
}
