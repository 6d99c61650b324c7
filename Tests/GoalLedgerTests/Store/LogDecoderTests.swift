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
            #expect(first.map(\.position) == [1])
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
                #expect(run.allSatisfy { $0.item > 0 })
                positions += run.map(\.position)
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
}
