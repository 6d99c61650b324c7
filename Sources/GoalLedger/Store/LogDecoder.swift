import Foundation
import LMDB

/// When a long read of the log has a `LogDecoder` read for it: from `minimumEvents` events on
/// (a thread is not worth starting for fewer), in runs of `runLength`.
struct LogDecodingPlan {
    var minimumEvents: UInt64 = 16_384
    var runLength = 2048
    /// The events a batch of `verify`'s goal walk holds at most (unless one goal has more):
    /// read in position order, each page of the log is read once for the several events of
    /// the batch it holds.
    var goalBatchEvents = 131_072
    /// The decoders that read the log together for `verify`, each on its own thread: two on a
    /// machine of two processors or more (the taker of the runs has time to spare; one
    /// decoder alone is the slower side), else one.
    var decoders = ProcessInfo.processInfo.activeProcessorCount >= 2 ? 2 : 1
}

/// Reads a range of the log on a thread of its own and turns each record into an `Item`
/// (`read`: the decoding, and whatever else depends on the record alone), a run at a time, for
/// the calling thread: a rebuild's fold (`StoreTransaction.fold`) and `verify`'s walk of the log
/// then overlap the decoding, and keep two processors busy.
///
/// The decoder reads in a read transaction of its own. Opened while the caller's write
/// transaction is open, it sees what that write started from (the fold never changes the log);
/// given `snapshot`, it reads only in that snapshot (the caller's read transaction's). It holds
/// at most `runsAhead` runs that the caller has not taken. Without a transaction (the map is
/// being resized, or the snapshot is gone) it reads nothing, and ``next()`` says so: the caller
/// reads the range itself.
///
/// Whoever starts a decoder calls ``stop()`` before its own transaction ends (a `defer`): a
/// write transaction must see the decoder's closed before it commits, or retries on a grown map.
/// A decoder made `runByRun` is the exception: it reads each run in a read transaction of its
/// own and hands it over after that transaction ended, so it never holds a snapshot while it
/// waits; it may read ahead of its caller's write transactions, across their commits (a
/// rebuild's chunks), and a resize waits at most for the run it is reading. It reads only
/// records already committed, which never change (the log is append-only).
final class LogDecoder<Item>: @unchecked Sendable {
    /// Runs read ahead of the caller, at most.
    private let runsAhead: Int

    /// A run of records in log order, each as its position (nil for a key that is not a
    /// position's 8 bytes: damage, for the caller to name) and its item.
    typealias Run = DecodedRun<Item>

    /// What ``next()`` gives.
    enum Next {
        /// The next run.
        case run(Run)
        /// Every record of the range was given.
        case end
        /// The decoder had no transaction, and read nothing more (nothing at all, unless it
        /// reads `runByRun`).
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

    /// Starts reading the records from position `start` through `end` of the log of `env`, in
    /// runs of `runLength`, each made into an item by `read` (its position, when its key is
    /// one, and its record); an error `read` throws is thrown by ``next()`` after the runs
    /// before it.
    ///
    /// `share`: this decoder's share of the runs when several decode one range together, each
    /// on its own thread: decoder `index` of `of` makes runs `index`, `index + of`, … (counted
    /// from 0; it steps over the others' records without reading them), and the caller takes
    /// run `r` from decoder `r % of` (see ``SharedLogDecoders``). Not with `runByRun`.
    ///
    /// `completing`, when given, has each run's items to change in place once the run is read
    /// and before it is handed over: for work done best on many records at once (the entries'
    /// digest hashes, two at a time).
    init(
        _ env: Environment, layout: StoreLayout, from start: UInt64, through end: UInt64, runLength: Int, snapshot: Int? = nil,
        runByRun: Bool = false, runsAhead: Int = 4, share: (index: Int, of: Int) = (0, 1),
        read: @escaping @Sendable (_ position: UInt64?, _ record: UnsafeRawBufferPointer) throws -> Item,
        completing: (@Sendable (UnsafeMutableBufferPointer<Run.Element>) -> Void)? = nil
    ) {
        precondition(share.of >= 1 && (0..<share.of).contains(share.index) && (share.of == 1 || !runByRun), "a share of the runs")
        self.runsAhead = max(1, runsAhead)
        let thread = Thread { [self] in
            defer { exited.signal() }
            do {
                // Each run, completed, to the caller.
                let handOver = { (run: Run) -> Bool in
                    if let completing { run.withRecords(completing) }
                    return self.hand(run)
                }
                if runByRun {
                    return try readRunByRun(env, layout: layout, from: start, through: end, runLength: runLength, read: read, handOver: handOver)
                }
                let done: Bool? = try env.withReadTransactionIfAvailable { raw in
                    let txn = StoreTransaction(raw, layout: layout)
                    if let snapshot, txn.snapshotID != snapshot { return nil }
                    var run = Run(capacity: runLength)
                    // Records counted from `start`: which run each is in, and whose it is.
                    var ordinal = 0
                    try txn.scan(layout.events, from: start.bigEndianBytes) { key, value in
                        let position = key.count == 8 ? UInt64(bigEndianBytes: key) : nil
                        if let position, position > end { return false }
                        defer { ordinal += 1 }
                        guard share.of == 1 || (ordinal / runLength) % share.of == share.index else { return true }
                        run.append((position, try read(position, value)))
                        guard run.count == runLength else { return true }
                        defer { run = Run(capacity: runLength) }
                        return handOver(run)
                    }
                    if run.count > 0 { _ = handOver(run) }
                    return true
                } ?? nil
                finish(unavailable: done == nil, failure: nil)
            } catch {
                finish(unavailable: false, failure: error)
            }
        }
        thread.name = "ledger log decoder"
        thread.start()
    }

    /// Reads the range a run at a time, each in a read transaction of its own (ended before the
    /// run is handed over). A key that is not a position ends the reading after its record.
    /// Unavailable (a resize is under way) from some run on, it says so (``Next/unavailable``)
    /// after the runs before it: the caller reads the rest.
    private func readRunByRun(
        _ env: Environment, layout: StoreLayout, from start: UInt64, through end: UInt64, runLength: Int,
        read: (_ position: UInt64?, _ record: UnsafeRawBufferPointer) throws -> Item, handOver: (Run) -> Bool
    ) throws {
        var next = start
        while true {
            let got: (run: Run, next: UInt64?)? = try env.withReadTransactionIfAvailable { raw in
                let txn = StoreTransaction(raw, layout: layout)
                let run = Run(capacity: runLength)
                var after: UInt64?
                try txn.scan(layout.events, from: next.bigEndianBytes) { key, value in
                    guard key.count == 8 else {
                        run.append((nil, try read(nil, value)))
                        return false
                    }
                    let position = UInt64(bigEndianBytes: key)
                    guard position <= end else { return false }
                    run.append((position, try read(position, value)))
                    guard run.count == runLength else { return true }
                    if position < end { after = position + 1 }
                    return false
                }
                return (run, after)
            }
            guard let got else { return finish(unavailable: true, failure: nil) }
            if got.run.count > 0, !handOver(got.run) { break }
            guard let after = got.next else { break }
            next = after
        }
        finish(unavailable: false, failure: nil)
    }

    /// Hands `run` to the caller, waiting while `runsAhead` are waiting already; false once the
    /// decoder is stopped.
    private func hand(_ run: Run) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while ready.count >= runsAhead && !stopped { condition.wait() }
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

    /// The next run, in log order, waiting for it; an error of `read` or of the read itself
    /// is thrown here, after the runs before it.
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

    /// Stops the decoder and waits until its thread has closed its transaction and ended (once;
    /// later calls return at once).
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

/// Several decoders reading one range together, each its share of the runs on its own thread
/// (`LogDecoder`'s `share`), their runs given in log order.
struct SharedLogDecoders<Item>: ~Copyable {
    private let decoders: [LogDecoder<Item>]
    /// The run to give next, counted from 0.
    private var turn = 0

    /// `count` decoders of the records `start` through `end`; see `LogDecoder.init`. Each
    /// decoder reads with a `read` of its own, made by `reader` (which may keep buffers that
    /// only that decoder's thread uses).
    init(
        _ count: Int, _ env: Environment, layout: StoreLayout, from start: UInt64, through end: UInt64, runLength: Int, snapshot: Int?,
        reader: () -> @Sendable (_ position: UInt64?, _ record: UnsafeRawBufferPointer) throws -> Item
    ) {
        let n = max(1, count)
        decoders = (0..<n).map {
            LogDecoder(
                env, layout: layout, from: start, through: end, runLength: runLength, snapshot: snapshot, share: ($0, n), read: reader())
        }
    }

    /// The next run in log order (from the decoder whose share it is). A decoder with no run
    /// where its share has one means the range ended there: no later run exists either.
    /// ``LogDecoder/Next/unavailable`` may come after runs were given, when only some
    /// decoders got a transaction.
    mutating func next() throws -> LogDecoder<Item>.Next {
        let got = try decoders[turn % decoders.count].next()
        if case .run = got { turn += 1 }
        return got
    }

    /// Stops every decoder (see `LogDecoder.stop`).
    func stop() { for d in decoders { d.stop() } }

    deinit { stop() }
}

/// A run of decoded records, which its taker moves out one at a time, in order (a record is
/// never copied: the decoder's thread builds it in place, the taker takes it over). What is
/// not taken goes with the run.
final class DecodedRun<Item>: @unchecked Sendable {
    typealias Element = (position: UInt64?, item: Item)

    private let storage: UnsafeMutablePointer<Element>
    private let capacity: Int
    /// The records appended: those from `taken` up to `count` are held.
    private(set) var count = 0
    private var taken = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        storage = .allocate(capacity: self.capacity)
    }

    deinit {
        (storage + taken).deinitialize(count: count - taken)
        storage.deallocate()
    }

    /// Appends a record (at most `capacity`), on the decoder's side, before the run is handed over.
    func append(_ record: consuming Element) {
        precondition(count < capacity, "a decoded run holds at most \(capacity) records")
        (storage + count).initialize(to: record)
        count += 1
    }

    /// Lets `body` change the records appended, in place, on the decoder's side before the run
    /// is handed over.
    func withRecords(_ body: (UnsafeMutableBufferPointer<Element>) -> Void) {
        precondition(taken == 0, "a run is completed before any of it is taken")
        body(UnsafeMutableBufferPointer(start: storage, count: count))
    }

    /// Whether every record was taken.
    var isEmpty: Bool { taken == count }

    /// The position of the next record to take (nil: none, or its key is not a position).
    var nextPosition: UInt64? { taken < count ? storage[taken].position : nil }

    /// Moves the next record out and lends it to `body`, then ends it (whether `body` returns
    /// or throws); false when every record was taken. Lent, not handed over: passing the fields
    /// of a record moved out to a closure copied it first (a retain and a release of each of
    /// its references).
    @discardableResult
    func takeNext(_ body: (UInt64?, borrowing Item) throws -> Void) rethrows -> Bool {
        guard taken < count else { return false }
        taken += 1
        let record = (storage + taken - 1).move()
        try body(record.position, record.item)
        return true
    }

    /// Moves the next record out; nil when every record was taken.
    func take() -> Element? {
        guard taken < count else { return nil }
        taken += 1
        return (storage + taken - 1).move()
    }
}
