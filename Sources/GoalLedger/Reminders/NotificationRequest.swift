import Foundation

/// One local notification a device should have pending.
public struct NotificationRequest: Equatable, Hashable, Sendable {
    /// `goal-reminder-<GOAL UUID>` (repeating) or `goal-reminder-<GOAL UUID>-<YYYYMMDD>` (window).
    public var id: String
    /// The goal the notification opens (`userInfo.goalId` on the device).
    public var goal: UUID
    /// The notification's title: the goal's title.
    public var title: String
    /// The text under the title, in the device's language (``ReminderContent``).
    public var body: String
    /// The sound's name (`default`, the system's sound).
    public var sound: String
    /// When it fires.
    public var trigger: NotificationTrigger
    /// The next instant the request fires, after the `now` it was planned for. Not part of what
    /// the device holds: a calendar trigger's next fire time follows from its components.
    public var nextFireAt: Instant

    /// A request with these values.
    public init(
        id: String, goal: UUID, title: String, body: String, sound: String, trigger: NotificationTrigger,
        nextFireAt: Instant
    ) {
        self.id = id
        self.goal = goal
        self.title = title
        self.body = body
        self.sound = sound
        self.trigger = trigger
        self.nextFireAt = nextFireAt
    }

    /// `{"id","goal","title","body","sound","trigger","nextFireAt"}`.
    public var json: JSONValue {
        .object([
            ("id", .string(id)),
            ("goal", .string(goal.uuidString)),
            ("title", .string(title)),
            ("body", .string(body)),
            ("sound", .string(sound)),
            ("trigger", trigger.json),
            ("nextFireAt", .string(nextFireAt.rfc3339)),
        ])
    }
}
