import Foundation

/// How a device schedules goal reminders: one repeating request per goal, or dated requests
/// for the next `windowDays` days.
public enum NotificationStrategy: String, CaseIterable, Sendable {
    /// One calendar request per goal that repeats at the start of each period (a one-time goal:
    /// on its target date), at the reminder time.
    case repeating
    /// Dated one-time requests for the period starts in the next ``DeviceConfigured/windowDays``
    /// days (a one-time goal: its target date), none for a period already completed.
    case window
}

/// What a device reported of its notification permission (as the OS names it).
public enum AuthorizationStatus: String, CaseIterable, Sendable {
    /// The user has not been asked yet: the device schedules nothing.
    case notDetermined
    /// The user refused: the device schedules nothing, and its goal reminders are reported as
    /// `permissionDenied`.
    case denied
    /// The user allowed notifications.
    case authorized
    /// Allowed to deliver quietly, until the user decides: schedules as `authorized` does.
    case provisional
    /// Allowed for a limited time (an App Clip): schedules as `authorized` does.
    case ephemeral
}
