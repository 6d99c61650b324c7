import Foundation

/// One local notification: what the planner wants a device to hold, and what a
/// ``ReminderCenter`` holds and hands back.
///
/// One type serves both sides. A request the planner made (``ReminderPlan/requests``,
/// `ledger pending`) always has its `goal` and its `nextFireAt`; a request read back from a
/// center has no `nextFireAt` (a center keeps only the trigger, from which the next fire time
/// follows), and has no `goal` when something else in the app scheduled it.
///
/// Texts compare by their UTF-8 bytes: a title a center holds in another Unicode form than the
/// ledger's (which Swift's `String` would call equal) is a different request, so a pass
/// replaces it.
public struct NotificationRequest: Hashable, Sendable {
    /// `goal-reminder-<GOAL UUID>` (repeating) or `goal-reminder-<GOAL UUID>-<YYYYMMDD>` (a
    /// window's day); any id for requests that are not goal reminders.
    public var id: String
    /// The goal the notification opens (`userInfo.goalId` on the device); nil for a request
    /// that is not a goal reminder.
    public var goal: UUID?
    /// The notification's title: the goal's title, or the app's wording of it.
    public var title: String
    /// The text under the title, in the device's language (``ReminderContent``).
    public var body: String
    /// The sound's name (`default`, the system's sound).
    public var sound: String
    /// When it fires.
    public var trigger: NotificationTrigger
    /// The next instant the request fires after the `now` it was planned for; nil for a request
    /// read back from a center (a calendar trigger's next fire time follows from its
    /// components).
    public var nextFireAt: Instant?

    /// A request with these values.
    public init(
        id: String, goal: UUID?, title: String, body: String, sound: String = "default", trigger: NotificationTrigger,
        nextFireAt: Instant? = nil
    ) {
        self.id = id
        self.goal = goal
        self.title = title
        self.body = body
        self.sound = sound
        self.trigger = trigger
        self.nextFireAt = nextFireAt
    }

    /// The request as a center holds it: the same, without the planner's `nextFireAt`.
    public var asHeld: NotificationRequest {
        var r = self
        r.nextFireAt = nil
        return r
    }

    public static func == (a: NotificationRequest, b: NotificationRequest) -> Bool {
        a.id.utf8.elementsEqual(b.id.utf8) && a.goal == b.goal && a.title.utf8.elementsEqual(b.title.utf8)
            && a.body.utf8.elementsEqual(b.body.utf8) && a.sound.utf8.elementsEqual(b.sound.utf8) && a.trigger == b.trigger
            && a.nextFireAt == b.nextFireAt
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(goal)
        hasher.combine(title)
        hasher.combine(body)
        hasher.combine(sound)
        hasher.combine(trigger)
        hasher.combine(nextFireAt)
    }

    /// `{"id","goal","title","body","sound","trigger","nextFireAt"}`: `goal` null when nil,
    /// `nextFireAt` left out when nil (the form a center holds).
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(id)),
            ("goal", goal.map { .string($0.uuidString) } ?? .null),
            ("title", .string(title)),
            ("body", .string(body)),
            ("sound", .string(sound)),
            ("trigger", trigger.json),
        ]
        if let nextFireAt { members.append(("nextFireAt", .string(nextFireAt.rfc3339))) }
        return .object(members)
    }
}

extension NotificationRequest {
    /// The goal of a request the planner made (which always has one).
    var plannedGoal: UUID {
        guard let goal else { preconditionFailure("a planned request names its goal") }
        return goal
    }

    /// The next fire time of a request the planner made (which always has one).
    var plannedFireAt: Instant {
        guard let nextFireAt else { preconditionFailure("a planned request has its next fire time") }
        return nextFireAt
    }
}
