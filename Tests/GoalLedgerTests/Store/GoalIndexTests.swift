import Foundation
import LMDB
import Testing

@testable import GoalLedger

/// The goal index keeps each goal's positions as rows of distances (format 4): a goal's
/// positions read back in order across rows and batches, its count is its last row's, a row out
/// of form is damage that is named and never trusted, and a store of format 3 is brought to
/// it when opened.
struct GoalIndexTests {
    let now = instant("2026-11-05T12:00:00Z")

    /// A goal measured in kilometres.
    func created(_ goal: UUID, _ title: String) -> String {
        #"{"type":"goalCreated","goal":"\#(goal)","title":"\#(title)","progress":{"kind":"measurable","target":5,"unit":"km"}}"#
    }

    func progress(_ goal: UUID, _ k: Int) -> String {
        #"{"type":"progressRecorded","goal":"\#(goal)","amount":\#(k % 7 + 1),"at":"2026-11-0\#(k % 4 + 1)T10:00:00Z"}"#
    }

    /// Each goal's positions, read from the log.
    func logged(_ store: LedgerStore) throws -> [UUID: [UInt64]] {
        try store.readTransaction { txn in
            var out: [UUID: [UInt64]] = [:]
            var p: UInt64 = 1
            while let e = try txn.event(at: p) {
                if let g = e.payload.goal { out[g, default: []].append(p) }
                p += 1
            }
            return out
        }
    }

    func rows(_ store: LedgerStore) throws -> Int { try store.readTransaction { try $0.count($0.layout.goalPositions) } }

    /// Each goal's positions and count as the index gives them equal the log's.
    func expectEveryGoal(_ store: LedgerStore) throws {
        let want = try logged(store)
        #expect(!want.isEmpty)
        let (got, counts) = try store.readTransaction { txn in
            (try want.keys.map { try txn.positions(ofGoal: $0) }, try want.keys.map { try txn.goalEventCount($0) })
        }
        #expect(got == Array(want.values))
        #expect(counts == want.values.map(\.count))
        #expect(try store.readTransaction { txn in try txn.positions(ofGoal: goalID(999)) }.isEmpty)
    }

    /// Two goals written in batches of every size, interleaved with a third: the busy goal's
    /// positions fill several rows, and each batch carries on from the last.
    @Test func aGoalsPositionsFillRowsAcrossBatchesAndReadBackInOrder() throws {
        let t = try TemporaryStore()
        let (a, b, c) = (goalID(1), goalID(2), goalID(3))
        try t.store.append(
            try drafts([a, b, c].enumerated().map { created($1, "G\($0)") }), now: now)
        var k = 0
        for size in [1, 2, 3, 50, 1, 130, 7, 250, 1, 1, 90] {
            var lines: [String] = []
            for i in 0..<size {
                lines.append(progress(i % 5 == 4 ? b : a, k))
                if i % 9 == 0 { lines.append(progress(c, k)) }
                k += 1
            }
            try t.store.append(try drafts(lines), now: now)
        }
        // More than one row per busy goal, far fewer than one per position.
        let stored = try rows(t.store)
        let positions = try logged(t.store).values.map(\.count).reduce(0, +)
        #expect(stored > 3 && stored * 20 < positions, "\(stored) rows for \(positions) positions")
        try expectEveryGoal(t.store)
        let report = try t.store.verify()
        #expect(report.isClean, "\(report.problems)")
        // The goal's version, as an app sees it, is its count of events.
        #expect(try t.store.read { try $0.goalState(a).version } == logged(t.store)[a]?.count)
    }

    @Test func aRowOutOfFormIsNotRead() {
        func read(_ key: [UInt8], _ value: [UInt8]) -> [UInt64]? {
            var row = GoalPositionRow.Decoded()
            return key.withUnsafeBytes { k in value.withUnsafeBytes { v in row.read(key: k, value: v) ? row.positions : nil } }
        }
        let goal = Array(repeating: UInt8(7), count: 16)
        #expect(read(goal + UInt64(5).bigEndianBytes, [3, 2, 0x81, 1]) == [5, 7, 136])
        #expect(read(goal + UInt64(5).bigEndianBytes, [1]) == [5])
        #expect(read(goal, [1]) == nil, "a key without a position")
        #expect(read(goal + UInt64(0).bigEndianBytes, [1]) == nil, "position 0")
        #expect(read(goal + UInt64(5).bigEndianBytes, [2, 0]) == nil, "a distance of 0")
        #expect(read(goal + UInt64(5).bigEndianBytes, [1, 2]) == nil, "a count below the row's")
        #expect(read(goal + UInt64.max.bigEndianBytes, [2, 1]) == nil, "a position past the largest")
        #expect(read(goal + UInt64(5).bigEndianBytes, [2, 0x80]) == nil, "a truncated distance")
        #expect(read(goal + UInt64(5).bigEndianBytes, []) == nil, "no count")
    }

    /// A store with goals 1 and 2 and `n` progress entries between them, with each goal's
    /// positions as the log has them.
    func twoGoals(progress n: Int) throws -> (TemporaryStore, UUID, UUID, [UUID: [UInt64]]) {
        let t = try TemporaryStore()
        let (a, b) = (goalID(1), goalID(2))
        try t.store.append(try drafts([created(a, "A"), created(b, "B")]), now: now)
        try t.store.append(try drafts((0..<n).map { progress($0 % 2 == 0 ? a : b, $0) }), now: now)
        return (t, a, b, try logged(t.store))
    }

    /// A damaged row of one goal: that goal's reads and verify say so; its neighbours read as
    /// they were; nothing traps.
    @Test func aDamagedRowIsNamedAndItsNeighboursStillRead() throws {
        let (t, a, b, want) = try twoGoals(progress: 20)
        try t.store.writeTransaction { txn in
            try txn.put(txn.layout.goalPositions, key: GoalPositionRow.key(IDWords(a), want[a]![0]), value: [1, 0])
        }
        #expect(throws: LedgerError.self) { try t.store.readTransaction { txn in try txn.positions(ofGoal: a) } }
        #expect(try t.store.readTransaction { txn in try txn.positions(ofGoal: b) } == want[b])
        let problems = try t.store.verify().problems
        #expect(problems.contains("goalPositions: a row is not a run of a goal's positions"), "\(problems)")
    }

    /// Counts that overflow once added to (a damaged file may hold any number): reads and an
    /// append to that goal refuse them as damage, and nothing traps.
    @Test func countsThatWouldOverflowAreDamageNotATrap() throws {
        let (t, a, b, want) = try twoGoals(progress: 6)
        var huge = ByteWriter()
        huge.varint(.max)
        try t.store.writeTransaction { txn in
            // Goal a: one row whose count is the largest there is.
            try txn.put(txn.layout.goalPositions, key: GoalPositionRow.key(IDWords(a), want[a]![0]), value: huge.bytes)
            // Goal b: a second row after one whose count is the largest there is.
            try txn.put(txn.layout.goalPositions, key: GoalPositionRow.key(IDWords(b), want[b]![0]), value: huge.bytes)
            try txn.put(txn.layout.goalPositions, key: GoalPositionRow.key(IDWords(b), want[b]!.last! + 100), value: [1])
        }
        #expect(throws: LedgerError.self) { try t.store.readTransaction { txn in try txn.positions(ofGoal: b) } }
        #expect(throws: LedgerError.self) { try t.store.append(try drafts([progress(a, 9)]), now: now) }
        #expect(try t.store.readTransaction { txn in try txn.goalEventCount(a) } == Int.max)
        #expect(try !t.store.verify().isClean)
    }

    /// A store of format 3 (the `goalEvents` table: a sorted set of 8-byte positions under each
    /// goal) is brought to format 4 when opened: its old table is gone and every goal reads back.
    @Test func aFormatThreeStoreIsUpgradedWhenOpened() throws {
        let t = try TemporaryStore()
        let goals = (1...4).map { goalID($0) }
        try t.store.append(try drafts(goals.map { created($0, "G") }), now: now)
        try t.store.append(try drafts((0..<300).map { progress(goals[$0 % 3], $0) }), now: now)
        let want = try logged(t.store)
        try t.store.writeTransaction { txn in
            let old = try txn.openDatabase(named: "goalEvents", create: true, duplicates: .fixedSize)
            for (goal, positions) in want {
                for p in positions { try txn.put(old, key: goal.bytes, value: p.bigEndianBytes) }
            }
            try txn.clear(txn.layout.goalPositions)
            try txn.put(txn.layout.meta, key: MetaKey.format, value: UInt64(3).bigEndianBytes)
        }
        let reopened = try LedgerStore.open(at: t.store.path)
        #expect(try reopened.readTransaction { try $0.u64($0.layout.meta, MetaKey.format) } == LedgerStore.format)
        #expect(try rows(reopened) > 0)
        #expect(try reopened.writeTransaction { try $0.dropDatabase(named: "goalEvents", duplicates: .fixedSize) } == false)
        try expectEveryGoal(reopened)
        #expect(try reopened.verify().isClean)
    }
}
