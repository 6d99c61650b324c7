import Foundation
import Testing

@testable import GoalLedger

struct GoalProjectionTests {
    /// The same events in any order give byte-identical projections.
    @Test(arguments: 0..<60)
    func foldIsIndependentOfArrivalOrder(_ seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 7919)
        let events = RandomHistory.events(seed: UInt64(seed), count: 80)
        var reference = GoalProjection()
        for e in events { reference.apply(e) }
        let bytes = try JSONWriter.string(reference.canonicalJSON)
        // The digest is the documented construction over the canonical JSON, whose text the
        // direct writer (no JSON values built for the entries) reproduces byte for byte.
        #expect(try reference.digest == DigestTests.reference(reference))
        var written: [UInt8] = []
        try reference.writeCanonicalJSON { written += $0 }
        #expect(String(decoding: written, as: UTF8.self) == bytes)
        for _ in 0..<5 {
            var shuffled = GoalProjection()
            for e in events.shuffled(using: &rng) { shuffled.apply(e) }
            #expect(try JSONWriter.string(shuffled.canonicalJSON) == bytes)
            #expect(try shuffled.digest == reference.digest)
            #expect(shuffled.goals == reference.goals)
            #expect(shuffled.devices == reference.devices)
        }
    }

    /// Folding each appended batch into a running projection, and into the stored projection,
    /// equals replaying the log from scratch.
    @Test(arguments: 0..<200)
    func incrementalApplicationEqualsReplay(_ seed: Int) throws {
        let t = try TemporaryStore()
        var rng = SeededRandom(seed: UInt64(seed) + 1000)
        var incremental = GoalProjection()
        for step in 0..<6 {
            let batch = try RandomHistory.validBatch(for: t.store, rng: &rng, size: 1 + Int(rng.next() % 8), step: step)
            let results = try t.store.append(batch, now: Instant(milliseconds: 1_793_602_800_000))
            for r in results where !r.duplicate {
                incremental.apply(try #require(try t.store.event(at: r.position)))
                incremental.position = r.position
            }
            let replayed = try t.store.replay()
            #expect(incremental == replayed)
            #expect(try t.store.projection() == replayed)
            for (id, state) in replayed.goals {
                #expect(try t.store.goalState(id) == state)
            }
        }
        let report = try t.store.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(try t.store.lastPosition() > 5)
    }

    @Test func concurrentRulesOfSection4() throws {
        let goal = UUID()
        func event(_ device: String, _ ms: Int64, _ payload: Payload, id: UUID = UUID()) -> Event {
            Event(
                id: id, origin: device, sequence: 1, hlc: HLC(milliseconds: ms, counter: 0), at: Instant(milliseconds: ms), schema: 2,
                payload: payload)
        }
        let created = event(
            "phone", 1000,
            .goalCreated(
                GoalCreated(
                    goal: goal, title: "T", details: nil, cadence: .daily, targetDate: nil, progressKind: .measurable, target: try! Amount("5"),
                    unit: nil, reminder: nil, tags: ["x"])))
        var titleA = GoalEdited(goal: goal, replaces: [.title: created.id])
        titleA.title = "A"
        var titleB = GoalEdited(goal: goal, replaces: [.title: created.id])
        titleB.title = "B"
        var target = GoalEdited(goal: goal, replaces: [.target: created.id])
        target.target = try! Amount("9")
        let entryID = UUID()
        let events = [
            created,
            event("phone", 2000, .goalEdited(titleA)),
            event("tablet", 2000, .goalEdited(titleB)),  // same millisecond: "tablet" sorts after "phone" and wins
            event("tablet", 2100, .goalEdited(target)),  // a different field: both edits apply
            event("phone", 3000, .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("1"), occurredAt: Instant(milliseconds: 3000), day: Day(daysSinceEpoch: 0)))),
            event(
                "tablet", 3000, .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("2"), occurredAt: Instant(milliseconds: 3000), day: Day(daysSinceEpoch: 0))),
                id: entryID),
            event("phone", 3500, .progressRemoved(ProgressRemoved(goal: goal, entry: entryID))),
            event("tablet", 3600, .tagRemoved(TagRemoved(goal: goal, tag: "x", observed: [created.id]))),
            event("phone", 3600, .tagAdded(TagAdded(goal: goal, tag: "x"))),  // concurrent add: the tag stays
            event("phone", 4000, .reminderSet(ReminderSet(goal: goal, hour: 7, minute: 0))),
            event("tablet", 4001, .reminderCleared(GoalRegisterWrite(goal: goal))),  // later in canonical order
        ]
        for order in [events, events.reversed()] {
            var p = GoalProjection()
            for e in order { p.apply(e) }
            let g = try #require(p.goals[goal])
            #expect(g.title?.value == "B")
            #expect(g.target?.value?.description == "9")
            #expect(g.entries.map { $0.amount } == [1])
            #expect(g.tags == ["x"])
            #expect(g.reminder?.value == nil)
        }
    }
}
