import Foundation
import Testing

@testable import GoalLedger

/// The typed calls an app makes: each is one checked event, as `append` of its draft.
struct TypedCallsTests {
    let now = instant("2026-11-05T08:00:00Z")

    @Test func eachCallWritesItsEventAndTheGoalFollows() throws {
        let t = try TemporaryStore()
        let s = t.store
        try s.configureDevice(try DeviceConfigured(timeZone: TimeZone(identifier: "America/New_York")!, firstWeekday: 1), now: now)
        try s.reportAuthorization(.authorized, now: now)
        #expect(try s.deviceState("phone").calendar.timeZoneIdentifier == "America/New_York")
        #expect(try s.deviceState("phone").authorization?.value == .authorized)

        let water = try s.createGoal(
            title: "Drink water", cadence: .daily, progress: .measurable(target: try .target(2), unit: "l"), details: "8 glasses",
            tags: ["health"], now: now)
        let call = try s.createGoal(title: "Call grandma", cadence: .weekly, now: now)
        #expect(try s.goal(water)?.target?.description == "2" && s.goal(water)?.unit == "l" && s.goal(call)?.progressKind == .outcome)

        let first = try s.recordProgress(water, amount: Amount(0.5), now: now)
        try s.recordProgress(water, amount: Amount(1), now: now)
        try s.recordCompletion(call, now: now)
        #expect(try s.goal(water, now: now)?.view.value?.description == "1.5")
        #expect(try s.goal(call, now: now)?.view.completed == true)
        try s.removeEntry(first.id, of: water, now: now)
        #expect(try s.goal(water, now: now)?.view.value?.description == "1")

        try s.editGoal(water, title: "Water", details: .some(nil), target: try .target(3), now: now)
        let edited = try #require(try s.goal(water))
        #expect(edited.title == "Water" && edited.details == nil && edited.target?.description == "3")

        try s.setReminder(water, at: try ReminderTime(hour: 9, minute: 30), now: now)
        #expect(try s.goal(water)?.reminder == (try ReminderTime(hour: 9, minute: 30)))
        try s.clearReminder(water, now: now)
        #expect(try s.goal(water)?.reminder == nil)

        try s.addTag("daily", to: water, now: now)
        try s.removeTag("health", from: water, now: now)
        #expect(try s.goal(water)?.tags == ["daily"])

        try s.deleteGoal(call, now: now)
        #expect(try s.goals(now: now).map(\.id) == [water])
        try s.restoreGoal(call, now: now)
        #expect(try s.goals(now: now).count == 2)
        #expect(try s.verify().isClean)
    }

    @Test func aCallThatBreaksARuleIsRefusedNamingTheFieldAndWritesNothing() throws {
        let t = try TemporaryStore()
        let call = try t.store.createGoal(title: "Call grandma", cadence: .weekly, now: now)
        let before = try t.store.lastPosition()
        do {
            try t.store.recordProgress(call, amount: Amount(1), now: now)
            Issue.record("an amount on an outcome goal was accepted")
        } catch {
            #expect(error.code == .invalidInput && error.message.hasPrefix("event 1 of the batch"), "\(error.message)")
        }
        do {
            try t.store.addTag("x", to: UUID(), now: now)
            Issue.record("a tag on an unknown goal was accepted")
        } catch {
            #expect(error.code == .invalidInput)
        }
        #expect(try t.store.lastPosition() == before)
    }
}
