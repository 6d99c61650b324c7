import Foundation
import Testing

@testable import GoalLedger

/// `LedgerStore.write`: the calls of one closure compose in one transaction, and commit together
/// or not at all.
struct WriterTests {
    let now = instant("2026-11-05T12:00:00Z")
    struct AppStopped: Error, Equatable {}

    @Test func callsOfOneWriteSeeEachOtherAndCommitTogether() throws {
        let t = try TemporaryStore()
        let (goal, entry) = try t.store.write { w in
            let goal = try w.createGoal(title: "Water", cadence: .daily, progress: .measurable(target: try Amount(2)), now: now)
            // The goal created above is there for the next call of the same write.
            let entry = try w.recordProgress(goal, amount: try Amount(0.5), now: now)
            try w.addTag("health", to: goal, now: now)
            return (goal, entry)
        }
        let (state, events, verified) = try t.store.read { s in (try s.goalState(goal), try s.lastPosition(), try s.verify()) }
        #expect(events == 3 && entry.position == 2)
        #expect(state.tags == ["health"] && state.entries.map(\.id) == [entry.id])
        #expect(verified.isClean, "\(verified.findings)")
    }

    @Test func anErrorOfTheClosureRollsEveryCallBackAndPassesAsItIs() throws {
        let t = try TemporaryStore()
        let before = try t.store.read { try $0.status() }
        #expect(throws: AppStopped()) {
            try t.store.write { w in
                _ = try w.createGoal(title: "Half", now: now)
                throw AppStopped()
            }
        }
        let after = try t.store.read { try $0.status() }
        #expect(after.events == before.events && after.digest == before.digest && after.originHeads == before.originHeads)
    }

    @Test func aCallThatFailsEndsTheWriteEvenWhenItsErrorIsCaught() throws {
        let t = try TemporaryStore()
        let first = try t.store.write { try $0.createGoal(title: "Kept", now: now) }
        var later: LedgerError?
        let thrown = #expect(throws: LedgerError.self) {
            try t.store.write { w in
                _ = try w.createGoal(title: "Not kept", now: now)
                // Two events, the second refused by the rules: the call throws.
                do {
                    try w.append(
                        [
                            EventDraft(payload: .tagAdded(TagAdded(goal: first, tag: "ok"))),
                            EventDraft(payload: .progressRecorded(ProgressRecorded(goal: UUID(), completed: true))),
                        ], now: now)
                } catch {}
                // The app swallowed the error; the writer refuses to go on.
                do {
                    try w.addTag("late", to: first, now: now)
                } catch {
                    later = error as? LedgerError
                }
            }
        }
        if case .unknownGoal(_, let index, _)? = thrown?.reason {
            #expect(index == 2, "the refused event is named by its place in the batch")
        } else {
            Issue.record("the append's own error reaches the caller: \(String(describing: thrown))")
        }
        #expect(later?.message.contains("this write already failed") == true)
        let (events, state) = try t.store.read { s in (try s.lastPosition(), try s.goalState(first)) }
        #expect(events == 1 && state.tags.isEmpty, "nothing of the failed write was committed")
    }

    @Test func aKeyRotatedInAWriteSignsItsLaterCallsAndIsKeptOnlyOnCommit() throws {
        let t = try TemporaryStore()
        let original = try #require(try t.store.read { try $0.publicKey() })
        // Rolled back: the key store still holds the original key, and the store can append.
        #expect(throws: AppStopped()) {
            try t.store.write { w in
                try w.rotateKey(now: now)
                throw AppStopped()
            }
        }
        #expect(try t.store.read { try $0.publicKey() } == original)
        _ = try t.store.write { try $0.createGoal(title: "After the rollback", now: now) }
        // Committed: the event after the rotation, in the same write, is signed by the new key.
        try t.store.write { w in
            try w.rotateKey(now: now)
            _ = try w.createGoal(title: "Signed by the new key", now: now)
        }
        let rotated = try #require(try t.store.read { try $0.publicKey() })
        #expect(rotated != original)
        let report = try t.store.read { try $0.verify() }
        #expect(report.isClean, "\(report.findings)")
        let enrolled = try t.store.read { try $0.enrolledDevices() }
        #expect(enrolled.first { $0.device == t.store.device }?.publicKey == rotated)
    }
}
