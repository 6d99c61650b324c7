import Foundation
import Testing

@testable import GoalLedger

/// Goals in the person's order: `moveGoal`, new goals last, and the order every device
/// converges to.
struct MoveGoalTests {
    let now = instant("2026-11-05T08:00:00Z")

    func order(_ s: LedgerStore, includingDeleted: Bool = false) throws -> [UUID] {
        try s.read { try $0.goals(now: now, includingDeleted: includingDeleted, includingEntries: false).map(\.id) }
    }

    func goalID(_ n: Int) -> UUID { UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))! }

    @Test func goalsListInCreationOrderThenAsMoved() throws {
        let t = try TemporaryStore()
        let s = t.store
        // Ids in the reverse of creation order: the list does not follow ids.
        let a = try s.createGoal(title: "A", id: goalID(3), now: now)
        let b = try s.createGoal(title: "B", id: goalID(2), now: now.adding(milliseconds: 1))
        let c = try s.createGoal(title: "C", id: goalID(1), now: now.adding(milliseconds: 2))
        #expect(try order(s) == [a, b, c])
        #expect(try s.goal(a)?.createdAt == now && s.goal(c)?.createdAt == now.adding(milliseconds: 2))
        #expect(try s.goal(a)?.position == nil)

        try s.writing { try $0.moveGoal(c, after: nil, now: now) }
        #expect(try order(s) == [c, a, b])
        try s.writing { try $0.moveGoal(c, before: nil, now: now) }
        #expect(try order(s) == [a, b, c])
        try s.writing { try $0.moveGoal(a, after: b, now: now) }
        #expect(try order(s) == [b, a, c])
        try s.writing { try $0.moveGoal(c, before: a, now: now) }
        #expect(try order(s) == [b, c, a])
        #expect(try s.goal(c)?.position != nil)

        // A goal created after a move to the end still goes after it.
        try s.writing { try $0.moveGoal(b, before: nil, now: now) }
        let d = try s.createGoal(title: "D", id: goalID(9), now: now.adding(milliseconds: 5))
        #expect(try order(s) == [c, a, b, d])
        #expect(try s.verify().isClean)
    }

    @Test func movesNamingAnUnknownOrDeletedGoalAreRefusedAndWriteNothing() throws {
        let t = try TemporaryStore()
        let s = t.store
        let a = try s.createGoal(title: "A", now: now)
        let b = try s.createGoal(title: "B", now: now)
        let gone = try s.createGoal(title: "Gone", now: now)
        try s.deleteGoal(gone, now: now)
        let unknown = goalID(77)
        let before = try s.read { try $0.lastPosition() }
        let cases: [(String, (borrowing LedgerWriter) throws -> Void)] = [
            ("after", { try $0.moveGoal(a, after: unknown, now: now) }),
            ("before", { try $0.moveGoal(a, before: gone, now: now) }),
            ("after", { try $0.moveGoal(a, after: a, now: now) }),
            ("goal", { try $0.moveGoal(gone, after: b, now: now) }),
            ("goal", { try $0.moveGoal(unknown, before: nil, now: now) }),
        ]
        for (field, call) in cases {
            let error = ledgerError { try s.writing { try call($0) } }
            #expect(error?.code == .invalidInput, "\(String(describing: error))")
            #expect(error?.message.hasPrefix("event 1 of the batch: field \"\(field)\"") == true, "\(error?.message ?? "")")
        }
        #expect(try s.read { try $0.lastPosition() } == before)
        #expect(try order(s) == [a, b])
    }

    @Test func aSchemaOneStoreRefusesAMoveNamingTheType() throws {
        let dir = TemporaryDirectory()
        let legacy = try LedgerStore.create(at: dir.path + "/s", device: "phone", schema: 1)
        let a = try legacy.createGoal(title: "A", now: now)
        let b = try legacy.createGoal(title: "B", now: now)
        let before = try legacy.read { try $0.lastPosition() }
        let error = ledgerError { _ = try legacy.writing { try $0.moveGoal(a, after: b, now: now) } }
        #expect(
            error?.message.hasPrefix("event 1 of the batch: field \"type\": goalMoved belongs to schema 2") == true,
            "\(String(describing: error))")
        #expect(try legacy.read { try $0.lastPosition() } == before)
    }

    @Test func concurrentMovesOnTwoDevicesConvergeWithoutLosingAGoal() throws {
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        let ids = (1...4).map(goalID)
        for (i, id) in ids.enumerated() { try phone.createGoal(title: "G\(i)", id: id, now: now.adding(milliseconds: Int64(i))) }
        let laptop = try phone.clone(to: dir.path + "/laptop", device: "laptop", now: now)
        // The same goal moved to two places, and two goals moved to the same place.
        try phone.writing { try $0.moveGoal(ids[0], before: nil, now: now.adding(milliseconds: 10)) }
        try phone.writing { try $0.moveGoal(ids[2], after: ids[1], now: now.adding(milliseconds: 11)) }
        try laptop.writing { try $0.moveGoal(ids[0], after: ids[1], now: now.adding(milliseconds: 12)) }
        try laptop.writing { try $0.moveGoal(ids[3], after: ids[1], now: now.adding(milliseconds: 13)) }
        _ = try laptop.sync(with: phone)
        _ = try phone.sync(with: laptop)
        let listed = try order(phone)
        #expect(listed == (try order(laptop)))
        #expect(listed.sorted { UUID.precedes($0, $1) } == ids.sorted { UUID.precedes($0, $1) })
        #expect(try phone.read { try $0.digest() } == laptop.read { try $0.digest() })
        // Both moves of the first goal replaced its creation: a conflict on `position`.
        let conflicts = try phone.read { try $0.conflicts(goal: ids[0]) }
        #expect(conflicts.map(\.field) == [.position])
        let reports = (try phone.verify(), try laptop.verify())
        #expect(reports.0.isClean && reports.1.isClean, "\(reports.0.findings) \(reports.1.findings)")
    }

    @Test func aMoveThatFindsNoRoomRenumbersTheLiveGoalsInTheSameBatch() throws {
        let t = try TemporaryStore()
        let s = t.store
        let a = try s.createGoal(title: "A", id: goalID(1), now: now)
        let b = try s.createGoal(title: "B", id: goalID(2), now: now)
        let c = try s.createGoal(title: "C", id: goalID(3), now: now)
        let gone = try s.createGoal(title: "Gone", id: goalID(4), now: now)
        try s.deleteGoal(gone, now: now)
        // Moving B and C in turn right after A halves the gap after A each time.
        var renumbering: [AppendResult]?
        for i in 0..<600 where renumbering == nil {
            let moved = i % 2 == 0 ? b : c
            let results = try s.writing { try $0.append([EventDraft(payload: .goalMoved(moved, to: .after(a)))], now: now) }
            #expect(try order(s) == [a, moved, moved == b ? c : b])
            if results.count > 1 { renumbering = results }
        }
        let results = try #require(renumbering, "the gap never ran out")
        // The move itself first, then one renumbering move for each other live goal.
        #expect(results.count == 3)
        let events = try s.read { snapshot in try results.map { try snapshot.event(at: $0.position)! } }
        #expect(Set(events.map { $0.payload.goal! }) == [a, b, c])
        for e in events {
            guard case .goalMoved(let m) = e.payload else {
                Issue.record("not a move")
                continue
            }
            #expect(m.key!.bytes.count <= 2)
        }
        #expect(try s.goal(gone, now: now) != nil && s.goal(gone)?.position == nil)
        #expect(try s.verify().isClean)
    }

    /// Random creations, moves, deletions and restores on three devices, delivered by random
    /// syncs: once every device holds every event, all list the same goals in the same order,
    /// each created goal exactly once, and each store's projection equals a fresh replay.
    @Test(arguments: [UInt64(1), 7, 42, 2026])
    func randomMovesOnThreeDevicesConverge(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        let laptop = try phone.clone(to: dir.path + "/laptop", device: "laptop", now: now)
        let tablet = try phone.clone(to: dir.path + "/tablet", device: "tablet", now: now)
        let devices = [phone, laptop, tablet]
        var created: Set<UUID> = []
        var clock = now
        for _ in 0..<36 {
            clock = clock.adding(milliseconds: Int64(random.next() % 5_000))
            let store = devices[Int(random.next() % 3)]
            let live = try order(store)
            let all = try order(store, includingDeleted: true)
            let roll = random.next() % 10
            if roll < 3 {
                let id = random.uuid()
                try store.createGoal(title: "G", id: id, now: clock)
                created.insert(id)
            } else if roll < 7, !live.isEmpty {
                let goal = live[Int(random.next() % UInt64(live.count))]
                let others = live.filter { $0 != goal }
                let anchor = others.isEmpty ? nil : others[Int(random.next() % UInt64(others.count))]
                let pick = random.next() % 4
                try store.writing { w in
                    switch pick {
                    case 0: try w.moveGoal(goal, after: nil, now: clock)
                    case 1: try w.moveGoal(goal, before: nil, now: clock)
                    case 2: try w.moveGoal(goal, after: anchor, now: clock)
                    default: try w.moveGoal(goal, before: anchor, now: clock)
                    }
                }
            } else if roll == 7, !live.isEmpty {
                try store.deleteGoal(live[Int(random.next() % UInt64(live.count))], now: clock)
            } else if roll == 8, all.count > live.count {
                let deleted = all.filter { !live.contains($0) }
                try store.restoreGoal(deleted[Int(random.next() % UInt64(deleted.count))], now: clock)
            } else {
                let x = devices[Int(random.next() % 3)]
                let y = devices[Int(random.next() % 3)]
                if x !== y { _ = try x.sync(with: y) }
            }
        }
        for (x, y) in [(phone, laptop), (phone, tablet), (laptop, phone)] { _ = try x.sync(with: y) }
        let expected = try order(phone, includingDeleted: true)
        #expect(Set(expected) == created && expected.count == created.count, "seed \(seed)")
        for store in devices {
            #expect(try order(store, includingDeleted: true) == expected, "seed \(seed), \(store.device)")
            #expect(try order(store) == (try order(phone)), "seed \(seed), \(store.device)")
            #expect(try store.read { try $0.digest() } == phone.read { try $0.digest() })
            #expect(try store.verify().isClean, "seed \(seed), \(store.device)")
        }
    }
}

extension Instant {
    func adding(milliseconds ms: Int64) -> Instant { Instant(milliseconds: milliseconds + ms) }
}
