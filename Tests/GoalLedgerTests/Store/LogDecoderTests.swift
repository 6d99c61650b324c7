import Foundation
import Testing

@testable import GoalLedger

/// A rebuild decodes the log on a thread of its own (`LogDecoder`) while it folds: the rows it
/// writes, the errors it meets and the threads it leaves must be those of the fold that decodes
/// each event as it reads it.
@Suite struct LogDecoderTests {
    let now = instant("2026-11-05T12:00:00Z")

    /// Every row of every table of the store's active projection generation.
    func projectionRows(_ store: LedgerStore) throws -> [[[UInt8]]] {
        try store.readTransaction { txn in
            let tables = store.layout.projections[try txn.projectionStatus().generation]
            return try tables.all.map { db in
                var rows: [[UInt8]] = []
                try txn.scan(db) { k, v in
                    rows.append(Array(k) + [0xFF] + Array(v))
                    return true
                }
                return rows
            }
        }
    }

    /// A store with one goal and `count` entries of it.
    func storeWithEntries(_ count: Int) throws -> (TemporaryStore, UUID) {
        let t = try TemporaryStore()
        let goal = UUID()
        var drafts = [
            EventDraft(
                payload: .goalCreated(GoalCreated(goal: goal, title: "Read", cadence: .daily, progressKind: .measurable, target: try! Amount("20"))))
        ]
        for i in 0..<count {
            drafts.append(EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("\(i % 7 + 1)"), completed: nil))))
        }
        try t.store.append(drafts, now: now)
        return (t, goal)
    }
    /// Every run length, from one event to more than the log, and chunks that cut the runs,
    /// rebuild the same rows as the fold that decodes inline.
    @Test(arguments: 0..<3)
    func aRebuildDecodedAheadWritesTheRowsOfOneDecodedInline(_ seed: Int) throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        let events = KeptViewsTests.history(seed: UInt64(seed) &* 53 &+ 11, count: 240, ownDevice: "laptop")
        var queues = Dictionary(grouping: events, by: \.origin)
        var rng = SeededRandom(seed: UInt64(seed))
        while !queues.isEmpty {
            let origin = queues.keys.sorted().randomElement(using: &rng)!
            let take = min(queues[origin]!.count, 1 + Int(rng.next() % 9))
            _ = try t.store.importEvents(Array(queues[origin]!.prefix(take)), from: "test")
            queues[origin]!.removeFirst(take)
            if queues[origin]!.isEmpty { queues[origin] = nil }
        }
        let store = t.store
        try store.rebuild(progress: nil, chunk: 100_000, plan: LogDecodingPlan(minimumEvents: .max))
        let inline = try projectionRows(store)
        let digest = try store.digest()
        #expect(try digest == store.replay().digest)
        for (chunk, runLength) in [(100_000, 1), (100_000, 7), (100_000, 5000), (50, 7), (64, 64)] as [(UInt64, Int)] {
            try store.rebuild(progress: nil, chunk: chunk, plan: LogDecodingPlan(minimumEvents: 1, runLength: runLength))
            #expect(try store.digest() == digest, "chunks of \(chunk), runs of \(runLength)")
            #expect(try projectionRows(store) == inline, "chunks of \(chunk), runs of \(runLength)")
        }
        #expect(try store.verify().isClean)
        try KeptViewsTests.expectKeptViewsMatch(store, "seed \(seed), decoded ahead")
    }

    /// A record that does not decode stops a rebuild decoded ahead with the error of one
    /// decoded inline, after the runs before it; the store keeps the projection it had.
    @Test(arguments: [1, 3, 150])
    func aDamagedRecordStopsTheRebuildWithTheSameError(_ runLength: Int) throws {
        let (t, _) = try storeWithEntries(200)
        let goalsBefore = try t.store.goals(now: now)
        try t.store.writeTransaction { txn in try txn.put(t.store.layout.events, key: UInt64(120).bigEndianBytes, value: [0, 1, 2, 3]) }
        let inline = ledgerError { try t.store.rebuild(progress: nil, chunk: 1000, plan: LogDecodingPlan(minimumEvents: .max)) }
        let ahead = ledgerError {
            try t.store.rebuild(progress: nil, chunk: 1000, plan: LogDecodingPlan(minimumEvents: 1, runLength: runLength))
        }
        #expect(inline != nil)
        #expect(ahead?.reason == inline?.reason)
        #expect(ahead?.message == inline?.message)
        #expect(try t.store.goals(now: now) == goalsBefore)
    }

    /// A decoder stopped while it waits for the fold to take its runs (the fold failed, or
    /// ended early) ends its thread and its transaction: a write can follow at once.
    @Test func aDecoderStoppedEarlyEndsItsReadAndLetsTheWriteGoOn() throws {
        let (t, goal) = try storeWithEntries(40)
        try t.store.writeTransaction { txn in
            let decoder = LogDecoder<Int>(t.store.env, layout: t.store.layout, from: 1, through: 41, runLength: 1) { _, record in record.count }
            guard case .run(let first) = try decoder.next() else {
                Issue.record("no first run")
                return
            }
            #expect(first.takeAll().map(\.position) == [1])
            decoder.stop()
            decoder.stop()
        }
        try t.store.append([EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("1"), completed: nil)))], now: now)
        #expect(try t.store.verify().isClean)
        // Taken to the end, the runs hold each event once, in order.
        let all = try t.store.writeTransaction { txn in
            let decoder = LogDecoder<Int>(t.store.env, layout: t.store.layout, from: 1, through: 42, runLength: 5) { _, record in record.count }
            defer { decoder.stop() }
            var positions: [UInt64?] = []
            while case .run(let run) = try decoder.next() {
                let records = run.takeAll()
                #expect(records.allSatisfy { $0.item > 0 })
                positions += records.map(\.position)
            }
            return positions
        }
        #expect(all == Array(1...42).map { Optional($0) })
    }

    /// Asked to read in a snapshot that is not the newest, the decoder reads nothing and says
    /// so: its caller reads the log itself.
    @Test func aDecoderWithoutItsSnapshotReadsNothing() throws {
        let (t, _) = try storeWithEntries(10)
        let current = try t.store.readTransaction { txn in txn.snapshotID }
        for (snapshot, expected) in [(current - 1, "unavailable"), (current, "run")] {
            let decoder = LogDecoder<Int>(t.store.env, layout: t.store.layout, from: 1, through: 11, runLength: 4, snapshot: snapshot) {
                _, record in record.count
            }
            defer { decoder.stop() }
            switch try decoder.next() {
            case .run: #expect(expected == "run")
            case .unavailable: #expect(expected == "unavailable")
            case .end: Issue.record("no run and no refusal")
            }
        }
    }

    /// Decoders sharing a range, each its share of the runs, give every record once and in
    /// log order, from any start, with runs that do or do not divide the range; then the end.
    @Test(arguments: [(1, 4), (2, 4), (3, 4), (2, 1), (3, 5), (2, 50)])
    func sharedDecodersGiveEveryRecordOnceInOrder(_ decoders: Int, _ runLength: Int) throws {
        let (t, _) = try storeWithEntries(21)
        for start in [UInt64(1), 5] {
            // Each decoder reads with a reader of its own.
            var readers = 0
            var shared = SharedLogDecoders<UInt64?>(
                decoders, t.store.env, layout: t.store.layout, from: start, through: 21, runLength: runLength, snapshot: nil
            ) {
                readers += 1
                return { position, _ in position }
            }
            #expect(readers == decoders)
            var all: [UInt64?] = []
            var runs = 0
            reading: while true {
                switch try shared.next() {
                case .run(let run):
                    runs += 1
                    while let record = run.take() {
                        #expect(record.item == record.position)
                        all.append(record.position)
                    }
                case .end: break reading
                case .unavailable:
                    Issue.record("no transaction")
                    break reading
                }
            }
            shared.stop()
            #expect(all == Array(start...21).map { Optional($0) }, "\(decoders) decoders, runs of \(runLength), from \(start)")
            #expect(runs == (Int(22 - start) + runLength - 1) / runLength)
        }
    }

    /// A decoder reading run by run holds no snapshot between runs: it goes on across the
    /// commits of its caller's write transactions (a rebuild's chunks) and hands each record
    /// once, in order.
    @Test func aDecoderReadingRunByRunGoesOnAcrossCommits() throws {
        let (t, goal) = try storeWithEntries(40)
        let decoder = LogDecoder<Int>(t.store.env, layout: t.store.layout, from: 1, through: 41, runLength: 3, runByRun: true, runsAhead: 2) {
            _, record in record.count
        }
        defer { decoder.stop() }
        var positions: [UInt64?] = []
        for _ in 0..<5 {
            // Each a write of its own, committed while the decoder waits with runs in hand.
            try t.store.append(
                [EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("1"), completed: nil)))], now: now)
            guard case .run(let run) = try decoder.next() else {
                Issue.record("no run")
                return
            }
            positions += run.takeAll().map(\.position)
        }
        while case .run(let run) = try decoder.next() { positions += run.takeAll().map(\.position) }
        // The range was fixed when it started: the events appended since are not in it.
        #expect(positions == Array(1...41).map { Optional($0) })
        #expect(try t.store.verify().isClean)
    }

    /// A rebuild's feed hands each chunk its records, each entry with its digest hash, and keeps
    /// the rest of a run for the next; a chunk taken again (its transaction run again after the
    /// map grew) starts it anew there; records beyond its range are left to the caller.
    @Test func aFeedHandsEachChunkItsRecordsAndStartsAgainWhereAsked() throws {
        let (t, _) = try storeWithEntries(60)
        let feed = FoldFeed(t.store.env, layout: t.store.layout, from: 1, through: 50, runLength: 7)
        defer { feed.stop() }
        func take(_ start: UInt64, _ last: UInt64) throws -> (positions: [UInt64], rest: UInt64) {
            var positions: [UInt64] = []
            let rest = try feed.take(from: start, through: last) { position, record in
                positions.append(try #require(position))
                #expect(record.event.type == (position == 1 ? .goalCreated : .progressRecorded))
                // Each entry's own hash (they are hashed two at a time, runs of 7 leaving one over).
                if case .progressRecorded(let p) = record.event.payload {
                    #expect(record.entryHash == ProjectionDigest.entryHash(ProgressEntry(record.event, p)))
                } else {
                    #expect(record.entryHash == nil)
                }
            }
            return (positions, rest)
        }
        let first = try take(1, 10)
        #expect(first.positions == Array(1...10) && first.rest == 11)
        let again = try take(1, 10)
        #expect(again.positions == Array(1...10) && again.rest == 11)
        let second = try take(11, 30)
        #expect(second.positions == Array(11...30) && second.rest == 31)
        // The last chunk reaches past the feed's range: the caller reads 51…61 itself.
        let third = try take(31, 61)
        #expect(third.positions == Array(31...50) && third.rest == 51)
        // A chunk the feed has passed is read again from its start.
        let back = try take(20, 25)
        #expect(back.positions == Array(20...25) && back.rest == 26)
    }

    /// A decoded run hands each record over once, in order, moved out; what is not taken is
    /// destroyed with the run, once; a record taken is the taker's alone.
    @Test func aDecodedRunHandsEachRecordOnceAndDestroysTheRest() {
        final class Counted {
            static let lock = NSLock()
            nonisolated(unsafe) static var alive = 0
            let n: Int
            init(_ n: Int) {
                self.n = n
                Self.lock.withLock { Self.alive += 1 }
            }
            deinit { Self.lock.withLock { Self.alive -= 1 } }
        }
        var kept: [Counted] = []
        do {
            let run = DecodedRun<Counted>(capacity: 5)
            for i in 1...4 { run.append((UInt64(i), Counted(i))) }
            #expect(Counted.alive == 4 && run.count == 4 && run.nextPosition == 1)
            let first = run.take()
            #expect(first?.position == 1 && first?.item.n == 1 && run.nextPosition == 2)
            kept.append(first!.item)
            #expect(run.take()?.item.n == 2)
            // The second record, taken and dropped, is gone; the two not taken wait in the run.
            #expect(Counted.alive == 3 && !run.isEmpty)
        }
        // The run is gone, and with it the two records it still held: the one taken and kept lives.
        #expect(Counted.alive == 1 && kept.map(\.n) == [1])
        let all = DecodedRun<Counted>(capacity: 3)
        for i in 1...3 { all.append((nil, Counted(i))) }
        #expect(all.nextPosition == nil)
        #expect(all.takeAll().map(\.item.n) == [1, 2, 3] && all.isEmpty && all.take() == nil)
        kept = []
        #expect(Counted.alive == 0)
    }
}

extension DecodedRun {
    /// Moves every record not taken yet out, in order (for the tests: the fold takes them one
    /// at a time).
    func takeAll() -> [Element] {
        var all: [Element] = []
        while let record = take() { all.append(record) }
        return all
    }
}
