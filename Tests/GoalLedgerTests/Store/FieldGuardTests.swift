import Foundation
import Testing

@testable import GoalLedger

/// Guards on writes: the goal's version (`expectedVersion`) on every typed call, and a version
/// per field that only writes of that field move.
struct FieldGuardTests {
    let now = instant("2026-11-05T08:00:00Z")

    @Test func aTitleGuardHoldsAfterProgressADetailsEditAndATag() throws {
        let t = try TemporaryStore()
        let s = t.store
        let water = try s.createGoal(title: "Water", cadence: .daily, progress: .measurable(target: try .target(2)), now: now)
        let read = try #require(try s.goals(now: now, includingEntries: false).first)
        let title = read.goal.version(of: .title)
        #expect(title != .neverWritten)

        // A widget logs a glass, another screen edits the details and tags the goal: the goal's
        // version moves, the title's does not.
        try s.recordProgress(water, amount: Amount(0.25), now: now)
        try s.editGoal(water, details: "8 glasses", now: now)
        try s.addTag("health", to: water, now: now)
        #expect(try s.goal(water, now: now)?.goal.version(of: .title) == title)
        #expect(try s.goal(water, now: now)?.goal.version(of: .details) != read.goal.version(of: .details))

        let edit = try s.writing { w in try w.editGoal(water, title: "Drink water", ifUnchangedSince: [.title: title], now: now) }
        let after = try #require(try s.goal(water, now: now))
        #expect(after.goal.title == "Drink water" && after.goal.details == "8 glasses")
        #expect(after.goal.version(of: .title) == FieldVersion(event: edit.id))
        #expect(after.goal.version(of: .title) == (try s.goalState(water)).version(of: .title))
        // The old version no longer passes.
        #expect(
            ledgerError { _ = try s.writing { w in try w.editGoal(water, title: "Again", ifUnchangedSince: [.title: title], now: now) } }?
                .code == .versionConflict)
    }

    @Test func aTitleEditSyncedFromAnotherDeviceRefusesTheGuardedEditAndWritesNothing() throws {
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        let run = try phone.createGoal(title: "Run", cadence: .weekly, now: now)
        let tablet = try phone.clone(to: dir.path + "/tablet", device: "tablet", now: now)
        let seen = try #require(try phone.goal(run, now: now)).goal.version(of: .title)

        try tablet.editGoal(run, title: "Run 5 km", now: instant("2026-11-05T09:00:00Z"))
        _ = try phone.sync(with: tablet)
        let position = try phone.lastPosition()
        let digest = try phone.digest()

        let error = try #require(
            ledgerError {
                try phone.writing { w in
                    try w.recordCompletion(run, now: instant("2026-11-05T10:00:00Z"))
                    try w.editGoal(run, title: "Run 10 km", ifUnchangedSince: [.title: seen], now: instant("2026-11-05T10:00:00Z"))
                }
            })
        #expect(error.code == .versionConflict)
        #expect(error.reason == .fieldVersionConflict(goal: run, field: .title))
        #expect(error.message.contains(run.uuidString) && error.message.contains("title") && error.message.contains("nothing was written"))
        // Nothing of the write, the completion before the edit included.
        #expect(try phone.lastPosition() == position && phone.digest() == digest)
        #expect(try phone.goal(run)?.title == "Run 5 km")

        // Guarding another field, or reading the title again, lets the edit through.
        let fresh = try #require(try phone.goal(run, now: now)).goal
        try phone.writing { w in
            try w.editGoal(
                run, title: "Run 10 km", ifUnchangedSince: [.title: fresh.version(of: .title), .unit: fresh.version(of: .unit)], now: now)
        }
        #expect(try phone.goal(run)?.title == "Run 10 km")
    }

    @Test func aGuardOnAGoalTheStoreDoesNotHoldLeavesTheRefusalToTheEdit() throws {
        let t = try TemporaryStore()
        let unknown = UUID()
        let error = try #require(
            ledgerError {
                _ = try t.store.writing { w in try w.editGoal(unknown, title: "X", ifUnchangedSince: [.title: .neverWritten], now: now) }
            })
        #expect(error.reason == .unknownGoal(goal: unknown, index: 1, line: nil))
    }

    @Test func everyTypedCallAboutAGoalChecksTheExpectedVersion() throws {
        let t = try TemporaryStore()
        let s = t.store
        let water = try s.createGoal(title: "Water", cadence: .daily, progress: .measurable(target: try .target(2)), now: now)
        let call = try s.createGoal(title: "Call", cadence: .weekly, now: now)
        let entry = try s.recordProgress(water, amount: Amount(1), now: now).id
        let time = try ReminderTime(hour: 9, minute: 0)
        let calls: [(name: String, goal: UUID, write: (borrowing LedgerWriter, Int) throws(LedgerError) -> AppendResult)] = [
            (
                "recordProgress", water,
                { w, v throws(LedgerError) in try w.recordProgress(water, amount: Amount(1), expectedVersion: v, now: now) }
            ),
            ("recordCompletion", call, { w, v throws(LedgerError) in try w.recordCompletion(call, expectedVersion: v, now: now) }),
            ("removeEntry", water, { w, v throws(LedgerError) in try w.removeEntry(entry, of: water, expectedVersion: v, now: now) }),
            ("editGoal", water, { w, v throws(LedgerError) in try w.editGoal(water, title: "Drink", expectedVersion: v, now: now) }),
            ("setReminder", water, { w, v throws(LedgerError) in try w.setReminder(water, at: time, expectedVersion: v, now: now) }),
            ("clearReminder", water, { w, v throws(LedgerError) in try w.clearReminder(water, expectedVersion: v, now: now) }),
            ("addTag", water, { w, v throws(LedgerError) in try w.addTag("health", to: water, expectedVersion: v, now: now) }),
            ("removeTag", water, { w, v throws(LedgerError) in try w.removeTag("health", from: water, expectedVersion: v, now: now) }),
            ("deleteGoal", call, { w, v throws(LedgerError) in try w.deleteGoal(call, expectedVersion: v, now: now) }),
            ("restoreGoal", call, { w, v throws(LedgerError) in try w.restoreGoal(call, expectedVersion: v, now: now) }),
        ]
        for c in calls {
            let version = try s.reading { try $0.version(ofGoal: c.goal) }
            #expect(version == (try s.goalState(c.goal)).version, "\(c.name)")
            let position = try s.lastPosition()
            let stale = try #require(ledgerError { _ = try s.writing { w in try c.write(w, version - 1) } }, "\(c.name)")
            #expect(stale.code == .versionConflict, "\(c.name)")
            #expect(stale.reason == .versionConflict(goal: c.goal, expected: version - 1, actual: version), "\(c.name)")
            #expect(try s.lastPosition() == position, "\(c.name) wrote despite the conflict")
            let written = try s.writing { w in try c.write(w, version) }
            #expect(written.position == position + 1, "\(c.name)")
            #expect(try s.reading { try $0.version(ofGoal: c.goal) } == version + 1, "\(c.name)")
        }
        #expect(try s.verify().isClean)
    }

    @Test func fieldVersionsTravelWithACachedGoal() throws {
        let t = try TemporaryStore()
        let s = t.store
        let water = try s.createGoal(title: "Water", cadence: .daily, progress: .measurable(target: try .target(2)), now: now)
        try s.editGoal(water, unit: "l", now: now)
        let goal = try #require(try s.goal(water, now: now)).goal
        let decoded = try JSONDecoder().decode(Goal.self, from: try JSONEncoder().encode(goal))
        #expect(decoded == goal)
        for field in GoalField.allCases { #expect(decoded.version(of: field) == goal.version(of: field)) }
        // Without `versions` (an older cache), a goal has none, and a guard from it conflicts.
        guard case .object(let members) = try JSONParser.parse(Array(try JSONEncoder().encode(goal))) else {
            throw LedgerError(.internal, "a goal is not an object")
        }
        let old = try JSONDecoder().decode(
            Goal.self, from: Data(try JSONWriter.string(.object(members.filter { $0.0 != "versions" })).utf8))
        #expect(old.version(of: .title) == .neverWritten)
        #expect(
            ledgerError {
                _ = try s.writing { w in try w.editGoal(water, title: "X", ifUnchangedSince: [.title: old.version(of: .title)], now: now) }
            }?
            .reason == .fieldVersionConflict(goal: water, field: .title))
        // A version that is no event id is refused, naming where it is.
        let bad = Data(
            try JSONWriter.string(.object(members.map { $0.0 == "versions" ? ($0.0, .object([("title", .string("yesterday"))])) : $0 }))
                .utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Goal.self, from: bad) }
        do {
            _ = try JSONDecoder().decode(Goal.self, from: bad)
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription.contains("versions.title") && context.debugDescription.contains("yesterday"))
        }
    }
}
