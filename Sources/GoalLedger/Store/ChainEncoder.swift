import Foundation
import Synchronization

/// Encodes a local batch's events and links them into their device's hash chain on a thread of
/// its own, while the batch's thread applies the rules to the next events and folds them.
///
/// Each record names the hash of the record before it, so the chain is one sequence; but
/// nothing in the batch reads a record or a hash before the commit (the rules and the fold read
/// the events), so the chain can trail the batch and be waited for only then. The events are
/// handed over in runs (`runLength`), one lock and one wake-up a run. A batch that is abandoned
/// (a draft refused) drops its encoder, which stops the thread.
///
/// The thread also hashes each progress entry for the digest (`ProjectionDigest.entryHash`,
/// a SHA-256 the fold would otherwise compute on the batch's thread), for the flush.
final class ChainEncoder {
    /// What the two threads share: the runs handed over, and what the encoding thread made,
    /// which the batch's thread reads only once that thread has ended (`done`).
    private final class Shared: @unchecked Sendable {
        struct Queue {
            var runs: [[Event]] = []
            var finishing = false
            var stopped = false
        }
        let queue = Mutex(Queue())
        let wake = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        var records: [[UInt8]] = []
        var previousHashes: [[UInt8]] = []
        var entryHashes: [DigestSum?] = []
        var last: [UInt8]

        init(after previous: [UInt8], capacity: Int) {
            last = previous
            records.reserveCapacity(capacity)
            previousHashes.reserveCapacity(capacity)
            entryHashes.reserveCapacity(capacity)
        }

        /// The encoding thread's work: each run as it comes, until the batch finishes or stops.
        func run() {
            defer { done.signal() }
            // The entries are hashed two at a time, each hash put in its event's place.
            var hashing = EntryHashing()
            while true {
                wake.wait()
                let (runs, finishing, stopped) = queue.withLock { q in
                    defer { q.runs.removeAll() }
                    return (q.runs, q.finishing, q.stopped)
                }
                if stopped { return }
                for run in runs {
                    for var event in run {
                        entryHashes.append(nil)
                        if case .progressRecorded(let p) = event.payload {
                            hashing.add(ProgressEntry(event, p), entryHashes.count - 1) { i, h in entryHashes[i] = h }
                        }
                        event.previousHash = last
                        let record = EventCodec.encode(event)
                        previousHashes.append(last)
                        last = EventChain.hash(record: record)
                        records.append(record)
                    }
                }
                if finishing {
                    hashing.finish { i, h in entryHashes[i] = h }
                    return
                }
            }
        }
    }

    /// The events handed over at once.
    static let runLength = 256

    private let shared: Shared
    private var staged: [Event] = []
    private var finished = false

    /// An encoder whose first event follows the chain hash `previous`, for a batch of about
    /// `events` events; its thread starts at once.
    init(after previous: [UInt8], events: Int) {
        shared = Shared(after: previous, capacity: events)
        staged.reserveCapacity(Self.runLength)
        let shared = self.shared
        let thread = Thread { shared.run() }
        thread.name = "ledger chain"
        thread.start()
    }

    /// Whether a batch of `events` new events of a signing device is worth a thread: enough
    /// events that its start is small beside their hashes, and a second processor to run it.
    static func pays(for events: Int) -> Bool {
        events >= 1_024 && ProcessInfo.processInfo.activeProcessorCount >= 2
    }

    /// Adds the batch's next event (its `previousHash` is set here, in the encoding).
    func add(_ event: Event) {
        staged.append(event)
        if staged.count >= Self.runLength { handOver() }
    }

    private func handOver() {
        guard !staged.isEmpty else { return }
        let run = staged
        staged.removeAll(keepingCapacity: true)
        shared.queue.withLock { $0.runs.append(run) }
        shared.wake.signal()
    }

    /// Waits for every event added to be encoded: their records in order, the chain hash each
    /// names as its previous one, the hash of the last (which the next event names), and the
    /// digest hash of each event's progress entry (nil for an event of another type).
    func finish() -> (records: [[UInt8]], previousHashes: [[UInt8]], last: [UInt8], entryHashes: [DigestSum?]) {
        precondition(!finished, "a chain encoder finishes once")
        handOver()
        shared.queue.withLock { $0.finishing = true }
        shared.wake.signal()
        shared.done.wait()
        finished = true
        return (shared.records, shared.previousHashes, shared.last, shared.entryHashes)
    }

    deinit {
        guard !finished else { return }
        shared.queue.withLock { $0.stopped = true }
        shared.wake.signal()
    }
}
