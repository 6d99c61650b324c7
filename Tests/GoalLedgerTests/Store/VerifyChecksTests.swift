import Foundation
import LMDB
import Testing

@testable import GoalLedger

/// Each kind of damage is reported by the check that looks at that part of the store, naming the
/// position, origin, sequence or goal it concerns.
struct VerifyChecksTests {
    let now = instant("2026-11-05T12:00:00Z")

    /// A store holding `dayOne`, then three entries of the run goal, each appended on its own.
    func seededStore() throws -> TemporaryStore {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        for amount in 1...3 {
            try t.store.append([try draft(#"{"type":"progressRecorded","goal":"\#(runGoal)","amount":\#(amount)}"#)], now: now)
        }
        return t
    }

    func position(_ store: LedgerStore, _ origin: String, _ sequence: UInt64) throws -> UInt64 {
        try store.readTransaction { txn in
            try #require(try txn.position(origin: origin, sequence: sequence))
        }
    }

    /// The report's problems: the typed ones, whose messages are its lines.
    func findings(_ store: LedgerStore) throws -> [VerificationProblem] {
        let report = try store.verify()
        #expect(report.problems == report.findings.map(\.message))
        #expect(report.findings.map(\.description) == report.problems)
        #expect(report.isClean == report.findings.isEmpty)
        // The check that keeps no replay of the whole log finds the same damage (the full check
        // then names it), and agrees with the full check on a clean store.
        let streamed = try store.reading { try $0.streamingVerification() }
        #expect((streamed == nil) == !report.isClean)
        if let streamed { #expect(StreamingVerifyTests.same(streamed, try store.reading { try $0.fullVerification() })) }
        return report.findings
    }

    @Test func theChecksRunInOrder() {
        #expect(VerificationCheck.allCases == [.log, .indexes, .origins, .trust, .chains, .projections])
    }

    @Test func aCleanStoreHasNoProblems() throws {
        let t = try seededStore()
        let report = try t.store.verify()
        #expect(report.isClean)
        #expect(report.findings.isEmpty && report.problems.isEmpty)
        #expect(report.events == 10)
        #expect(report.goals == 3)  // the deleted goal was created
    }

    @Test func aDamagedRecordIsTheLogChecksAtItsPosition() throws {
        let t = try seededStore()
        try t.store.writeTransaction { txn in try txn.put(t.store.layout.events, key: UInt64(3).bigEndianBytes, value: [0, 1, 2, 3]) }
        let found = try findings(t.store)
        let log = found.filter { $0.check == .log }
        #expect(log.count == 1, "\(found)")
        #expect(log.first?.position == 3)
        #expect(log.first?.message.hasPrefix("event at position 3 is damaged: ") == true, "\(log)")
        // The figures a damaged record would only repeat are left out.
        #expect(!found.contains { $0.check == .trust || $0.check == .chains }, "\(found)")
    }

    @Test func aMissingRecordIsTheLogChecksAtThePositionItLeaves() throws {
        let t = try seededStore()
        try t.store.writeTransaction { txn in _ = try txn.delete(t.store.layout.events, key: UInt64(5).bigEndianBytes) }
        let found = try findings(t.store)
        let log = found.filter { $0.check == .log }
        #expect(log.map(\.message) == ["events: position 5 is missing (next is 6)"])
        #expect(log.map(\.position) == [5])
        // Its origin's sequences now have a gap, which the origins check names.
        let origins = found.filter { $0.check == .origins }
        #expect(origins.contains { $0.origin == "phone" && $0.message.hasPrefix("origin phone: sequences are not gapless") }, "\(found)")
    }

    @Test func eachIndexEntryThatDisagreesIsTheIndexChecks() throws {
        let t = try seededStore()
        let store = t.store
        let events = try (1...10).map { p in try #require(try store.event(at: UInt64(p))) }
        let last = events[9]
        let goal = UUID(uuidString: callGoal)!
        let goalPosition: UInt64 = 5  // callGoal's entry
        try store.writeTransaction { txn in
            try #require(try txn.deleteIDRow(last.id))
            try txn.putIDRow(last.id, at: 2)
            try #require(try txn.removeGoalPosition(goal, goalPosition))
            try txn.put(store.layout.origins, key: StoreLayout.originKey(last.origin, last.sequence),
                value: OriginRun(first: last.sequence, position: 1, count: 1).value)
            // The device's own event (its settings) at position 1.
            try txn.delete(store.layout.deviceEvents, key: UInt64(1).bigEndianBytes)
        }
        let found = try findings(store)
        #expect(Set(found.map(\.check)) == [.indexes], "\(found)")
        let eventID = try #require(found.first { $0.message.hasPrefix("ids:") })
        #expect(eventID.position == 10 && eventID.message == "ids: id \(last.id.uuidString) does not point to position 10")
        let goalEntry = try #require(found.first { $0.message.hasPrefix("goalPositions: position") })
        #expect(goalEntry.position == goalPosition && goalEntry.goal == goal, "\(goalEntry)")
        let origin = try #require(found.first { $0.message.hasPrefix("origins: phone/") })
        #expect(origin.position == 10 && origin.origin == "phone" && origin.sequence == last.sequence, "\(origin)")
        let device = try #require(found.first { $0.message.hasPrefix("deviceEvents: position") })
        #expect(device.position == 1 && device.origin == "phone", "\(device)")
        // The two smaller indexes are counted short, and the origin index holds a run too many,
        // with nothing to name but the table.
        let counts = found.filter { $0.message.hasSuffix("events") && $0.message.contains("entries for") }
        #expect(
            Set(counts.map(\.message)) == [
                "goalPositions: 8 entries for 9 events", "deviceEvents: 0 entries for 1 events",
                "origins: 2 entries for the 1 runs of the log's 10 events",
            ], "\(found)")
        #expect(counts.allSatisfy { $0.position == nil && $0.goal == nil && $0.origin == nil })
    }

    /// A record's index entries and its own damage are reported in the order the records were
    /// read: an index problem at position 1 before the damaged record at 3.
    @Test func problemsAtRecordsComeInTheOrderTheRecordsWereRead() throws {
        let t = try seededStore()
        let store = t.store
        try store.writeTransaction { txn in
            try txn.delete(store.layout.deviceEvents, key: UInt64(1).bigEndianBytes)
            try txn.put(store.layout.events, key: UInt64(3).bigEndianBytes, value: [0, 1, 2, 3])
        }
        let found = try findings(store)
        #expect(found.prefix(2).map(\.check) == [.indexes, .log], "\(found)")
        #expect(found.prefix(2).map(\.position) == [1, 3], "\(found)")
    }

    @Test func aWrongOriginHeadIsTheOriginsChecks() throws {
        let t = try seededStore()
        let store = t.store
        let head = try #require(try store.originHeads()["phone"])
        try store.writeTransaction { txn in try txn.put(store.layout.originHeads, key: Array("phone".utf8), value: (head - 1).bigEndianBytes) }
        let found = try findings(store)
        #expect(found.map(\.check) == [.origins], "\(found)")
        #expect(found.first?.origin == "phone")
        #expect(found.first?.message == "originHeads: phone is at \(head - 1), the log at \(head)")
    }

    /// Heads of origins with no events are reported in the order of the names' bytes, the
    /// same in every run (not in the order a dictionary happens to hold them).
    @Test func headsWithoutEventsAreReportedInNameOrder() throws {
        let t = try seededStore()
        let store = t.store
        let names = ["zeta", "alpha", "mid", "beta.2", "beta"]
        try store.writeTransaction { txn in
            for name in names { try txn.put(store.layout.originHeads, key: Array(name.utf8), value: UInt64(3).bigEndianBytes) }
        }
        for _ in 0..<3 {
            let found = try findings(store).filter { $0.check == .origins }
            #expect(found.map(\.message) == names.sorted().map { "originHeads: \($0) has no events" }, "\(found)")
        }
    }

    @Test func aTrustTableThatDisagreesWithTheLogIsTheTrustChecks() throws {
        let t = try seededStore()
        let store = t.store
        // The table says the phone was revoked after its third event; the log says nothing of it.
        try store.writeTransaction { txn in
            try txn.put(store.layout.trust, key: [UInt8(ascii: "r")] + Array("phone".utf8), value: UInt64(3).bigEndianBytes)
        }
        let found = try findings(store)
        #expect(!found.isEmpty)
        #expect(found.allSatisfy { $0.check == .trust && $0.origin == "phone" }, "\(found)")
        #expect(found.contains { $0.message.contains("revoked after 3 in the table") }, "\(found)")
    }

    @Test func aRewrittenEventIsTheChainsChecksAtItsSequence() throws {
        let t = try seededStore()
        let store = t.store
        let head = try #require(try store.originHeads()["phone"])
        let rewritten = try position(store, "phone", head - 1)
        let next = try position(store, "phone", head)
        var forged = try #require(try store.event(at: rewritten))
        guard case .progressRecorded(var payload) = forged.payload else {
            Issue.record("not an entry: \(forged.payload)")
            return
        }
        payload.amount = try! Amount("100")
        forged.payload = .progressRecorded(payload)
        try store.writeTransaction { txn in try txn.put(store.layout.events, key: rewritten.bigEndianBytes, value: EventCodec.encode(forged)) }
        let found = try findings(store)
        let chains = found.filter { $0.check == .chains }
        #expect(
            chains.map(\.message) == [
                "signature: phone/\(head - 1) does not verify", "chain: phone/\(head) does not follow phone/\(head - 1)",
            ], "\(found)")
        #expect(chains.map(\.sequence) == [head - 1, head])
        #expect(chains.map(\.position) == [rewritten, next])
        #expect(chains.allSatisfy { $0.origin == "phone" })
        // The forged amount reaches the fresh replay: the stored projection differs from it.
        #expect(found.contains { $0.check == .projections && $0.goal == UUID(uuidString: runGoal) }, "\(found)")
        #expect(!found.contains { $0.check == .log || $0.check == .indexes || $0.check == .trust }, "\(found)")
    }

    @Test func projectionRowsThatDifferAreTheProjectionsChecks() throws {
        let t = try seededStore()
        let store = t.store
        let run = UUID(uuidString: runGoal)!
        let stray = goalID(2)
        try store.writeTransaction { txn in
            let tables = try txn.activeProjection()
            try txn.put(tables.goals, key: run.bytes, value: [1, 2, 3])
            try txn.put(tables.pending, key: PendingTable.rowKey(device: "phone", goal: stray), value: [1])
            try txn.put(tables.setAside, key: UInt64(2).bigEndianBytes, value: Array("no reason".utf8))
            var ledger = try #require(try txn.get(tables.digest, key: ProjectionTables.ledgerKey))
            ledger[0] ^= 1
            try txn.put(tables.digest, key: ProjectionTables.ledgerKey, value: ledger)
            try txn.put(store.layout.meta, key: MetaKey.projectionCheckpoint, value: UInt64(9).bigEndianBytes)
        }
        let found = try findings(store)
        #expect(Set(found.map(\.check)) == [.projections], "\(found)")
        func one(_ prefix: String) throws -> VerificationProblem { try #require(found.first { $0.message.hasPrefix(prefix) }, "\(found)") }
        let checkpoint = try one("projection: checkpoint")
        #expect(checkpoint.message == "projection: checkpoint 9, the log ends at 10")
        #expect(checkpoint.position == nil && checkpoint.goal == nil)
        let goal = try one("projection goals:")
        #expect(goal.message == "projection goals: goal \(runGoal) differs from a fresh replay" && goal.goal == run)
        let pending = try one("projection pending: device")
        #expect(pending.origin == "phone" && pending.goal == stray, "\(pending)")
        let aside = try one("projection setAside:")
        #expect(aside.position == 2, "\(aside)")
        let digest = try one("projection digest:")
        #expect(digest.message == "projection digest: the ledger's row differs from a fresh replay" && digest.goal == nil)
    }
}
