import Foundation
import LedgerTestSupport
import Testing

@testable import GoalLedger

/// `conflicts` reads the events the fold counts: a revoked device's events after its cutoff,
/// which a store may still hold, are in no conflict, so stores that count the same events print
/// the same conflicts whatever else they hold.
struct ConflictsFollowTheFoldTests {
    let now = instant("2026-11-05T12:00:00Z")

    @Test func aRevokedDevicesUncountedWriteIsInNoConflict() throws {
        let dir = TemporaryDirectory()
        let s = try TrustAttackTests.ledger(dir, [("tablet", "phone")], at: now)
        let (phone, tablet) = (s["phone"]!, s["tablet"]!)
        let goal = TrustAttackTests.goal
        try phone.setReminder(goal, at: try ReminderTime(hour: 8, minute: 0), now: now)
        _ = try phone.sync(with: tablet)
        // The phone revokes the tablet (which never wrote) and clears the reminder; the tablet,
        // not yet knowing, sets it.
        _ = try phone.revoke(device: "tablet", now: Instant(milliseconds: now.milliseconds + 1_000))
        _ = try phone.clearReminder(goal, now: Instant(milliseconds: now.milliseconds + 2_000))
        _ = try tablet.setReminder(goal, at: try ReminderTime(hour: 9, minute: 0), now: Instant(milliseconds: now.milliseconds + 3_000))
        try TrustAttackTests.meshSync([phone, tablet])
        #expect(try phone.goalState(goal).reminder?.value == nil && tablet.goalState(goal).reminder?.value == nil)
        let (a, b) = (try phone.conflicts(goal: goal), try tablet.conflicts(goal: goal))
        #expect(a == b, "phone: \(a)\ntablet: \(b)")
        #expect(!b.contains { $0.winner.device == "tablet" || $0.overwritten.contains { $0.device == "tablet" } })
        // Nor does the audit show it as a step.
        #expect(try tablet.read { try $0.audit(goal: goal) }.allSatisfy { $0.event.origin != "tablet" })
    }

    /// Random edits, reminder changes and revocations on three devices, delivered by random
    /// syncs: once every store counts the same events, every store prints the same conflicts.
    @Test(arguments: 0..<6)
    func storesThatCountTheSameEventsPrintTheSameConflicts(_ seed: Int) throws {
        let dir = TemporaryDirectory()
        var rng = SeededRandom(seed: UInt64(seed) &* 0x51ED &+ 3)
        let s = try TrustAttackTests.ledger(dir, [("laptop", "phone"), ("tablet", "phone")], at: now)
        let stores = ["phone", "laptop", "tablet"].map { s[$0]! }
        let goal = TrustAttackTests.goal
        func pick<T>(_ items: [T]) -> T { items[Int(rng.next() % UInt64(items.count))] }
        func attempt(_ body: () throws -> Void) throws {
            do { try body() } catch let e as LedgerError where e.code != .internal {}
        }
        var clock = now
        var revocations = 0
        for _ in 0..<50 {
            clock = Instant(milliseconds: clock.milliseconds + 1_000)
            let t = clock
            let store = pick(stores)
            switch rng.next() % 7 {
            case 0: try attempt { _ = try store.editGoal(goal, title: "Save \(rng.next() % 100)", now: t) }
            case 1: try attempt { _ = try store.setReminder(goal, at: try ReminderTime(hour: Int(rng.next() % 24), minute: 0), now: t) }
            case 2: try attempt { _ = try store.clearReminder(goal, now: t) }
            case 3:
                let b = pick(stores.filter { $0 !== store })
                _ = try store.sync(with: b)
            case 4 where revocations < 2:
                // The founder revokes a device below it, which may go on writing unaware.
                try attempt { _ = try s["phone"]!.revoke(device: pick(["laptop", "tablet"]), now: t) }
                revocations += 1
            default: try attempt { _ = try store.editGoal(goal, details: .some("note \(rng.next() % 10)"), now: t) }
            }
        }
        try TrustAttackTests.meshSync(stores)
        try TrustAttackTests.expectConverged(stores)
        let conflicts = try stores.map { try $0.conflicts() }
        #expect(conflicts[0] == conflicts[1] && conflicts[1] == conflicts[2], "seed \(seed): \(conflicts)")
        let audits = try stores.map { store in try store.read { try $0.audit(goal: goal) }.map { $0.event.id } }
        #expect(audits[0] == audits[1] && audits[1] == audits[2])
    }
}
