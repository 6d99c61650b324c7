import Foundation
import LMDB
import Testing

@testable import GoalLedger

struct ProjectionStoreTests {
    let now = instant("2026-11-05T12:00:00Z")

    func seededStore() throws -> TemporaryStore {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        return t
    }

    @Test func rebuildSwitchesGenerationsAndKeepsTheSameState() throws {
        let t = try seededStore()
        let before = try t.store.projection()
        var reports: [(UInt64, UInt64)] = []
        try t.store.rebuild { reports.append(($0, $1)) }
        #expect(try t.store.projection() == before)
        #expect(reports.last.map { $0 == (7, 7) } == true)
        #expect(try t.store.verify().isClean)
        let generation = try t.store.readTransaction { txn in try txn.projectionStatus().generation }
        #expect(generation == 1)
        // The old generation's tables are emptied after the switch.
        let leftover = try t.store.readTransaction { txn in try txn.count(t.store.layout.projections[0].goals) }
        #expect(leftover == 0)
    }

    @Test func aProjectionFromAnOlderVersionIsRebuiltOnOpenNeverServedStale() throws {
        let t = try seededStore()
        let path = t.store.path
        let expected = try t.store.replay()
        // Simulate a store written by an older fold: wrong rows and an older version stamp.
        try t.store.writeTransaction { txn in
            let tables = try txn.activeProjection()
            try tables.clear(txn)
            try txn.put(t.store.layout.meta, key: MetaKey.projectionVersion, value: UInt64(0).bigEndianBytes)
        }
        var notices: [String] = []
        let reopened = try LedgerStore.open(at: path, onRebuild: { notices.append($0) })
        #expect(notices.count == 1 && notices[0].contains("older"), "\(notices)")
        #expect(try reopened.projection() == expected)
        #expect(try reopened.verify().isClean)
        // A projection newer than the code is refused, and the store is left as it was.
        try reopened.writeTransaction { txn in
            try txn.put(reopened.layout.meta, key: MetaKey.projectionVersion, value: (StoredProjection.version + 1).bigEndianBytes)
        }
        let before = try reopened.snapshot()
        #expect(ledgerError { _ = try LedgerStore.open(at: path) }?.code == .store)
        #expect(try reopened.snapshot() == before)
    }

    /// A store whose projection version 4 kept a day index of 20-byte duplicates (`entryDays`)
    /// and no `entries` table: it opens, rebuilds, reads the same goals, and the old tables are
    /// gone.
    @Test func aStoreWithTheOldDayIndexAndEntryRowsIsRebuiltAndTheOldTablesDropped() throws {
        let t = try seededStore()
        let path = t.store.path
        let expected = try t.store.replay()
        let goal = try #require(expected.existingGoals.first?.id)
        try t.store.writeTransaction { txn in
            for g in [0, 1] {
                // The tables of earlier versions in place of today's entries: the day index, and
                // the entries kept a row each.
                try txn.dropDatabase(named: "p\(g).goalEntries", duplicates: .anySize)
                let old = try txn.openDatabase(named: "p\(g).entryDays", create: true, duplicates: .fixedSize)
                try txn.put(old, key: goal.bytes, value: [UInt8](repeating: 1, count: 20))
                let rows = try txn.openDatabase(named: "p\(g).entries", create: true)
                try txn.put(rows, key: goal.bytes + [UInt8](repeating: 0, count: 20), value: [1, 2, 3])
            }
            try txn.put(t.store.layout.meta, key: MetaKey.projectionVersion, value: UInt64(4).bigEndianBytes)
        }
        var notices: [String] = []
        let reopened = try LedgerStore.open(at: path, onRebuild: { notices.append($0) })
        #expect(notices.count == 1, "\(notices)")
        #expect(try reopened.projection() == expected)
        #expect(try reopened.verify().isClean)
        let left = try reopened.writeTransaction { txn in
            try [0, 1].filter { g in try txn.dropDatabase(named: "p\(g).entryDays", duplicates: .fixedSize) }
                + [0, 1].filter { g in try txn.dropDatabase(named: "p\(g).entries") }
        }
        #expect(left.isEmpty, "old tables still present: \(left)")
    }

    /// A goal's entry rows are kept by day, then clock: an entry that arrives after later ones
    /// (another device's, synced late) goes among them, the goal reads every one, and the
    /// table is what a rebuild writes.
    @Test func anEntryArrivingAfterLaterOnesGoesAmongThemAndReadsBack() throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        let goal = UUID()
        try t.store.append(
            [try draft(#"{"type":"goalCreated","goal":"\#(goal)","title":"Run","progress":{"kind":"measurable","target":50}}"#)],
            now: now)
        let phoneDirectory = TemporaryDirectory()
        let phone = try LedgerStore.create(at: phoneDirectory.path + "/store", device: "phone", ledger: t.store.ledgerID, signed: false)
        func record(_ store: LedgerStore, minutes: Int64, amount: Int) throws {
            try store.append(
                [try draft(#"{"type":"progressRecorded","goal":"\#(goal)","amount":\#(amount)}"#)],
                now: Instant(milliseconds: now.milliseconds + minutes * 60_000))
        }
        _ = try phone.importEvents(try t.store.reading { try $0.events(missingFrom: [:]) }, from: "laptop")
        // The laptop's own entries at 13:00 and 13:30, then the phone's of 13:05 and 13:20 arrive.
        try record(t.store, minutes: 60, amount: 1)
        try record(t.store, minutes: 90, amount: 1)
        try record(phone, minutes: 65, amount: 2)
        try record(phone, minutes: 80, amount: 3)
        let imported = try t.store.importEvents(try phone.reading { try $0.events(missingFrom: try t.store.originHeads()) }, from: "phone")
        #expect(imported.setAside == 0 && imported.imported >= 2, "\(imported)")
        let clocks = try t.store.readTransaction { txn in
            var clocks: [UInt64] = []
            try txn.scanEntries(try txn.activeProjection().entries, from: goal.bytes) { _, v in
                clocks.append(UInt64(bigEndian: v.loadUnaligned(as: UInt64.self)))
                return true
            }
            return clocks
        }
        #expect(clocks.count == 4 && clocks == clocks.sorted(), "\(clocks)")
        #expect(try t.store.goal(goal)?.entries.map(\.amount).compactMap { $0?.description }.sorted() == ["1", "1", "2", "3"])
        #expect(try t.store.verify().isClean)
        let before = try t.store.replay()
        try t.store.rebuild()
        #expect(try t.store.replay() == before)
        #expect(try t.store.verify().isClean)
    }

    /// A changed, a stray and a missing row of the entries table are each reported, naming the
    /// goal and the entry.
    @Test func verifyComparesTheEntryRowsWithAFreshReplay() throws {
        let t = try TemporaryStore()
        let goal = UUID()
        try t.store.append(
            [try draft(#"{"type":"goalCreated","goal":"\#(goal)","title":"Run","progress":{"kind":"measurable","target":5}}"#)]
                + (1...4).map { i in try draft(#"{"type":"progressRecorded","goal":"\#(goal)","amount":\#(i)}"#) }, now: now)
        #expect(try t.store.verify().isClean)
        let rows = try t.store.readTransaction { txn in
            var rows: [([UInt8], [UInt8])] = []
            try txn.scanAllEntries(try txn.activeProjection().entries) { k, v in
                rows.append((Array(k), Array(v)))
                return true
            }
            return rows
        }
        #expect(rows.count == 4)
        let entry = { (k: [UInt8]) in k.withUnsafeBytes { StoredProjection.uuid(UnsafeRawBufferPointer(rebasing: $0[20...])).uuidString } }
        let table = { (txn: borrowing StoreTransaction) throws in try txn.activeProjection().entries }
        // A value changed after its clock reading (the rows are kept in clock order within a day).
        var changed = rows[1].1
        changed[changed.count - 1] ^= 1
        try t.store.writeTransaction { txn in try txn.putEntry(try table(txn), key: rows[1].0, value: changed) }
        var problems = try t.store.verify().problems
        #expect(problems == ["projection entries: goal \(goal.uuidString) entry \(entry(rows[1].0)) differs from a fresh replay"])
        // Its clock reading changed: the row is out of its place, missing there and stray here.
        changed = rows[1].1
        changed[0] ^= 1
        try t.store.writeTransaction { txn in try txn.putEntry(try table(txn), key: rows[1].0, value: changed) }
        problems = try t.store.verify().problems
        #expect(
            Set(problems) == [
                "projection entries: goal \(goal.uuidString) entry \(entry(rows[1].0)) is missing (a fresh replay has it)",
                "projection entries: goal \(goal.uuidString) entry \(entry(rows[1].0)) is not in a fresh replay",
            ], "\(problems)")
        // A stray row and a missing one.
        try t.store.writeTransaction { txn in
            try txn.putEntry(try table(txn), key: rows[1].0, value: rows[1].1)
            try txn.deleteEntry(try table(txn), key: rows[2].0)
            var stray = rows[3].0
            stray[35] ^= 0xFF
            try txn.putEntry(try table(txn), key: stray, value: rows[3].1)
        }
        problems = try t.store.verify().problems
        var stray = rows[3].0
        stray[35] ^= 0xFF
        #expect(
            Set(problems) == [
                "projection entries: goal \(goal.uuidString) entry \(entry(rows[2].0)) is missing (a fresh replay has it)",
                "projection entries: goal \(goal.uuidString) entry \(entry(stray)) is not in a fresh replay",
            ], "\(problems)")
        // A missing row at the end is named too, with the count.
        try t.store.writeTransaction { txn in
            try txn.deleteEntry(try table(txn), key: stray)
            try txn.putEntry(try table(txn), key: rows[2].0, value: rows[2].1)
            try txn.deleteEntry(try table(txn), key: rows[3].0)
        }
        problems = try t.store.verify().problems
        #expect(
            problems == [
                "projection entries: goal \(goal.uuidString) entry \(entry(rows[3].0)) is missing (a fresh replay has it)",
                "projection entries: 3 rows stored, a fresh replay has 4",
            ], "\(problems)")
    }

    /// An event rewritten in place with a valid checksum breaks its origin's chain: its
    /// successor no longer follows it, and a signature over it no longer verifies.
    @Test func verifyFindsARewrittenEventByItsChain() throws {
        let t = try TemporaryStore()
        let goal = UUID()
        try t.store.append(
            [try draft(#"{"type":"goalCreated","goal":"\#(goal)","title":"Run","progress":{"kind":"measurable","target":5}}"#)],
            now: now)
        for amount in 1...3 {
            try t.store.append([try draft(#"{"type":"progressRecorded","goal":"\#(goal)","amount":\#(amount)}"#)], now: now)
        }
        #expect(try t.store.verify().isClean)
        let head = try t.store.originHeads()["phone"] ?? 0
        let (position, original) = try t.store.readTransaction { txn in
            let position = try #require(try txn.position(origin: "phone", sequence: head - 1))
            return (position, try #require(try txn.event(at: position)))
        }
        guard case .progressRecorded(var payload) = original.payload else {
            Issue.record("not an entry: \(original.payload)")
            return
        }
        payload.amount = try! Amount("100")
        var forged = original
        forged.payload = .progressRecorded(payload)
        try t.store.writeTransaction { txn in try txn.put(t.store.layout.events, key: position.bigEndianBytes, value: EventCodec.encode(forged)) }
        let problems = try t.store.verify().problems
        #expect(problems.contains("chain: phone/\(head) does not follow phone/\(head - 1)"), "\(problems)")
        #expect(problems.contains("signature: phone/\(head - 1) does not verify"), "\(problems)")
    }

    @Test func verifyNamesTheDamagedEventByPosition() throws {
        let t = try seededStore()
        #expect(try t.store.verify().isClean)
        let record = try #require(try t.store.readTransaction { txn in try txn.get(t.store.layout.events, key: UInt64(3).bigEndianBytes) })
        let file = t.store.path + "/data.mdb"
        var data = try Data(contentsOf: URL(fileURLWithPath: file))
        let range = try #require(data.range(of: Data(record)))
        // Flip one byte inside the title of the third event.
        data[range.lowerBound + record.count - 20] ^= 0x01
        try data.write(to: URL(fileURLWithPath: file))
        let damaged = try LedgerStore.open(at: t.store.path)
        let report = try damaged.verify()
        #expect(!report.isClean)
        #expect(report.problems.contains { $0.contains("position 3 is damaged") }, "\(report.problems)")
    }

    @Test func verifyFindsIndexesAndProjectionsThatDisagreeWithTheLog() throws {
        let t = try seededStore()
        try t.store.writeTransaction { txn in
            try #require(try txn.deleteIDRow(UUID(uuidString: "10000000-0000-4000-8000-000000000004")!))
            let tables = try txn.activeProjection()
            try txn.put(tables.goals, key: UUID(uuidString: runGoal)!.bytes, value: [1, 2, 3])
        }
        let report = try t.store.verify()
        #expect(report.problems.contains { $0.hasPrefix("ids: id 10000000-0000-4000-8000-000000000004") }, "\(report.problems)")
        #expect(report.problems.contains { $0.contains("projection goals: goal \(runGoal) differs") }, "\(report.problems)")
    }

    /// An id pointing elsewhere, a goal missing one of its positions, and an origin pointing
    /// elsewhere are each named, whichever place of the index they are in.
    @Test func verifyNamesEachIndexEntryThatDisagrees() throws {
        let t = try seededStore()
        let events = try (1...7).map { p in try #require(try t.store.event(at: UInt64(p))) }
        let last = events[6]
        let goal = try #require(events.compactMap(\.payload.goal).first)
        let goalPositions = events.enumerated().filter { $0.element.payload.goal == goal }.map { UInt64($0.offset + 1) }
        try t.store.writeTransaction { txn in
            try #require(try txn.deleteIDRow(last.id))
            try txn.putIDRow(last.id, at: 2)
            try #require(try txn.removeGoalPosition(goal, goalPositions[0]))
            try txn.put(t.store.layout.origins, key: StoreLayout.originKey(last.origin, last.sequence),
                value: OriginRun(first: last.sequence, position: 1, count: 1).value)
        }
        let problems = try t.store.verify().problems
        #expect(problems.contains("ids: id \(last.id.uuidString) does not point to position 7"), "\(problems)")
        #expect(problems.contains("goalPositions: position \(goalPositions[0]) is missing for goal \(goal.uuidString)"), "\(problems)")
        #expect(problems.contains("origins: \(last.origin)/\(last.sequence) does not point to position 7"), "\(problems)")
    }

    @Test func auditShowsEachStepWithBeforeAndAfter() throws {
        let t = try seededStore()
        try t.store.append(
            try drafts([
                #"{"type":"goalEdited","goal":"\#(runGoal)","title":"Run 6 km"}"#,
                #"{"type":"goalEdited","goal":"\#(runGoal)","title":"Run 7 km","details":"longer"}"#,
                #"{"type":"progressRemoved","goal":"\#(runGoal)","entry":"10000000-0000-4000-8000-000000000004"}"#,
            ]), now: now)
        let steps = try t.store.audit(goal: UUID(uuidString: runGoal)!)
        #expect(steps.map(\.event.type) == [.goalCreated, .progressRecorded, .goalEdited, .goalEdited, .progressRemoved])
        #expect(steps.map(\.position) == [2, 4, 8, 9, 10])
        #expect(steps[0].changes.first { $0.field == "title" } == AuditChange(field: "title", before: .null, after: .string("Run 5 km")))
        #expect(steps[2].changes == [AuditChange(field: "title", before: .string("Run 5 km"), after: .string("Run 6 km"))])
        #expect(
            steps[3].changes == [
                AuditChange(field: "title", before: .string("Run 6 km"), after: .string("Run 7 km")),
                AuditChange(field: "details", before: .null, after: .string("longer")),
            ])
        #expect(steps[1].changes[0].after["amount"] == .number(2.5))
        #expect(steps[4].changes[0].before["amount"] == .number(2.5))
        #expect(steps[4].changes[0].after == .null)
        #expect(steps.allSatisfy { $0.overwrote.isEmpty && $0.supersededBy.isEmpty })
    }

    @Test func auditMarksConcurrentOverwrites() {
        let goal = UUID()
        let created = Event(
            id: UUID(), origin: "phone", sequence: 1, hlc: HLC(milliseconds: 1000, counter: 0), at: Instant(milliseconds: 1000), schema: 2,
            payload: .goalCreated(
                GoalCreated(
                    goal: goal, title: "T", details: nil, cadence: .daily, targetDate: nil,
                    progressKind: .outcome, target: nil, unit: nil, reminder: nil, tags: [])))
        var a = GoalEdited(goal: goal, replaces: [.title: created.id])
        a.title = "phone's"
        var b = GoalEdited(goal: goal, replaces: [.title: created.id])
        b.title = "tablet's"
        let ea = Event(
            id: UUID(), origin: "phone", sequence: 2, hlc: HLC(milliseconds: 2000, counter: 0), at: Instant(milliseconds: 2000), schema: 2,
            payload: .goalEdited(a))
        let eb = Event(
            id: UUID(), origin: "tablet", sequence: 1, hlc: HLC(milliseconds: 2500, counter: 0), at: Instant(milliseconds: 2500), schema: 2,
            payload: .goalEdited(b))
        let steps = GoalAudit.steps([(3, eb), (1, created), (2, ea)])
        #expect(steps.map(\.event.id) == [created.id, ea.id, eb.id])
        #expect(steps[2].overwrote == [AuditOverwrite(field: "title", event: ea.id, device: "phone", value: .string("phone's"))])
        #expect(steps[1].supersededBy == [AuditOverwrite(field: "title", event: eb.id, device: "tablet", value: .string("tablet's"))])
        #expect(steps[1].overwrote.isEmpty)
    }

    @Test func aFeedDeliversEveryChangeOnceInOrderThenLiveChanges() async throws {
        let t = try seededStore()
        var feed = ChangeFeed(store: t.store, after: 0)
        var caught: [ProjectionChange] = []
        while case let batch = try feed.next(limit: 3), !batch.isEmpty { caught += batch }
        #expect(caught.map(\.position) == Array(1...7))
        #expect(caught[0].device == "phone" && caught[0].goal == nil)
        #expect(caught[1].goal == UUID(uuidString: runGoal))
        #expect(try feed.next().isEmpty)
        #expect(feed.checkpoint == 7)

        // A rolled-back batch is never seen; a committed one is seen whole.
        _ = ledgerError { try t.store.append(try drafts([#"{"type":"tagAdded","goal":"\#(runGoal)","tag":"x"}"#, "{"]), now: now) }
        #expect(try feed.next().isEmpty)

        let live = ChangeFeed(store: t.store, after: 5)
        var received: [UInt64] = []
        // Woken by the commit, not the timer: other processes are looked for once an hour here.
        let stream = live.changes(pollInterval: .seconds(3600))
        var iterator = stream.makeAsyncIterator()
        for _ in 0..<2 { received.append(try #require(try await iterator.next()).position) }
        try t.store.append(
            try drafts([
                #"{"type":"tagAdded","goal":"\#(runGoal)","tag":"x"}"#, #"{"type":"tagAdded","goal":"\#(meditateGoal)","tag":"y"}"#,
            ]), now: now)
        for _ in 0..<2 { received.append(try #require(try await iterator.next()).position) }
        #expect(received == [6, 7, 8, 9])
        var fromSeven = ChangeFeed(store: t.store, after: 7)
        let copy = fromSeven
        let lastTwo = try fromSeven.next()
        // A feed is a value: the copy keeps its own checkpoint.
        #expect(fromSeven.checkpoint == 9 && copy.checkpoint == 7)
        #expect(lastTwo.map(\.goal) == [UUID(uuidString: runGoal), UUID(uuidString: meditateGoal)])
    }
}
