import Foundation
import Testing

@testable import GoalLedger

/// Builds a goal's state by folding events, for reminder tests.
struct ReminderGoal {
    var state: GoalState
    private var clock: Int64 = 1_700_000_000_000

    init(
        _ id: UUID = UUID(), title: String = "Read", cadence: Cadence, targetDate: String? = nil,
        reminder: ReminderTime? = .default, measurable target: Amount? = nil
    ) {
        state = GoalState(id: id)
        apply(
            .goalCreated(
                GoalCreated(
                    goal: id, title: title, details: nil, cadence: cadence, targetDate: targetDate.map(day),
                    progressKind: target == nil ? .outcome : .measurable, target: target, unit: nil, reminder: reminder, tags: [])))
    }

    var id: UUID { state.id }

    mutating func apply(_ payload: Payload) {
        clock += 1000
        state.apply(
            Event(
                id: UUID(), origin: "phone", sequence: 1, hlc: HLC(milliseconds: clock, counter: 0),
                at: Instant(milliseconds: clock), schema: 2, payload: payload))
    }

    mutating func complete(_ done: Bool = true, on d: String) {
        apply(
            .progressRecorded(
                ProgressRecorded(
                    goal: id, amount: nil, completed: done, occurredAt: instant(d + "T12:00:00Z"), day: day(d))))
    }

    mutating func record(_ amount: Amount, on d: String) {
        apply(
            .progressRecorded(
                ProgressRecorded(
                    goal: id, amount: amount, completed: nil, occurredAt: instant(d + "T12:00:00Z"), day: day(d))))
    }

    mutating func delete() { apply(.goalDeleted(GoalRegisterWrite(goal: id, replaces: nil))) }
    mutating func restore() { apply(.goalRestored(GoalRegisterWrite(goal: id, replaces: nil))) }
    mutating func clearReminder() { apply(.reminderCleared(GoalRegisterWrite(goal: id, replaces: nil))) }
    mutating func setReminder(hour: Int, minute: Int) {
        apply(.reminderSet(ReminderSet(goal: id, hour: hour, minute: minute, replaces: nil)))
    }
}

/// A device that reported these settings with a `deviceConfigured` event.
func device(
    _ timeZone: String, firstWeekday: Int = 1, locale: String = "en_US", strategy: NotificationStrategy = .repeating,
    windowDays: Int = 7, capacity: Int = 64
) -> DeviceState {
    var state = DeviceState(name: "phone")
    let settings = DeviceConfigured(
        timeZone: timeZone, firstWeekday: firstWeekday, locale: locale, strategy: strategy, windowDays: windowDays,
        capacity: capacity)
    state.apply(
        Event(
            id: UUID(), origin: "phone", sequence: 1, hlc: HLC(milliseconds: 1_600_000_000_000, counter: 0),
            at: Instant(milliseconds: 1_600_000_000_000), schema: 2, payload: .deviceConfigured(settings)))
    return state
}

/// A fixed goal id whose last twelve hex digits are `n` in decimal, so tests can order ids.
func goalID(_ n: Int) -> UUID {
    let digits = String(n)
    return UUID(uuidString: "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits)!
}

func hm(_ hour: Int, _ minute: Int) -> ReminderTime { ReminderTime(unchecked: hour, minute) }

/// The error reading `json` as a trigger gives, or nil when it reads.
func triggerError(_ json: JSONValue) -> FieldError? {
    do throws(FieldError) {
        _ = try NotificationTrigger(json: json)
        return nil
    } catch {
        return error
    }
}

func calendarTrigger(
    year: Int? = nil, month: Int? = nil, day: Int? = nil, weekday: Int? = nil, _ hour: Int, _ minute: Int, repeats: Bool
) -> NotificationTrigger {
    NotificationTrigger(
        kind: .calendar(year: year, month: month, day: day, weekday: weekday, hour: hour, minute: minute), repeats: repeats)
}
