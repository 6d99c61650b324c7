import Foundation

/// A device's notification center as the reconciler sees it: a narrow backend contract, in the
/// manner of swift-log's `LogHandler`. On a phone the `GoalLedgerNotifications` product adapts
/// the system's center to it (`SystemReminderCenter`); the command line uses one kept in a JSON
/// file; an app's tests use the `GoalLedgerTesting` product's `InMemoryReminderCenter`. The reconciler depends on nothing else. (The name does not
/// collide with Foundation's `NotificationCenter`.)
///
/// The contract:
/// - `pendingRequests()` returns every request the center holds that is still to fire, whatever
///   its id. A one-time request that has fired is no longer pending (it may be delivered). The
///   reconciler reads this at the start of every pass and trusts nothing it did before.
/// - `add(_:)` adds a request, or replaces the pending one with the same id, as one step. It
///   throws when the center refuses the request (full, not permitted, invalid): the reconciler
///   reports `schedulingFailure` for the goal and tries again on its next pass. It never
///   prompts for permission.
/// - `removePendingRequests(withIdentifiers:)` removes the pending requests with these ids;
///   ids the center does not hold are ignored. The reconciler only ever passes `goal-reminder-`
///   ids, after it has added what it adds in the same pass.
/// - Delivered notifications are optional: a center that keeps them says so with
///   `supportsDeliveredNotifications`, lists them with `deliveredNotifications()` and removes
///   them by id. The defaults say "not supported".
/// - Calls of one pass come one after another, never concurrently. Errors other than a refused
///   `add` end the pass with a `LedgerError` (nothing is recorded as done).
public protocol ReminderCenter: Sendable {
    /// Every request the center holds that is still to fire, whatever its id.
    func pendingRequests() async throws -> [NotificationRequest]
    /// Adds `request`, or replaces the pending one with the same id, as one step; throws when
    /// the center refuses it (``NotificationRefused`` or the system's error).
    func add(_ request: NotificationRequest) async throws
    /// Removes the pending requests with these ids; ids the center does not hold are ignored.
    func removePendingRequests(withIdentifiers ids: [String]) async throws
    /// Whether the center keeps the notifications that have fired (then a pass removes the
    /// delivered reminders of goals deleted, whose reminder was cleared, or completed once).
    var supportsDeliveredNotifications: Bool { get }
    /// The notifications that have fired and are still shown; empty if not supported.
    func deliveredNotifications() async throws -> [DeliveredNotification]
    /// Removes the delivered notifications with these ids; ids it does not hold are ignored.
    func removeDeliveredNotifications(withIdentifiers ids: [String]) async throws
}

extension ReminderCenter {
    /// False: a center keeps no delivered notifications unless it says so.
    public var supportsDeliveredNotifications: Bool { false }
    /// None.
    public func deliveredNotifications() async throws -> [DeliveredNotification] { [] }
    /// Does nothing.
    public func removeDeliveredNotifications(withIdentifiers ids: [String]) async throws {}
}

/// A notification that has fired and is still shown in the device's notification center.
public struct DeliveredNotification: Equatable, Sendable {
    /// The id of the request that fired (`goal-reminder-…` for goal reminders).
    public var id: String
    /// The goal in the payload; nil for notifications that are not goal reminders.
    public var goal: UUID?
    /// The title shown.
    public var title: String
    /// The text shown under the title.
    public var body: String
    /// When it fired.
    public var deliveredAt: Instant

    /// A delivered notification with these values.
    public init(id: String, goal: UUID?, title: String, body: String, deliveredAt: Instant) {
        self.id = id
        self.goal = goal
        self.title = title
        self.body = body
        self.deliveredAt = deliveredAt
    }

    /// `{"id","goal","title","body","deliveredAt"}`.
    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("goal", goal.map { .string($0.uuidString) } ?? .null), ("title", .string(title)),
            ("body", .string(body)), ("deliveredAt", .string(deliveredAt.rfc3339)),
        ])
    }
}

/// Why a center refused a request.
public struct NotificationRefused: Error, Equatable, Sendable {
    /// The id of the refused request.
    public var id: String
    /// Why, in a few words ("the center is full").
    public var reason: String

    /// The refusal of request `id` for `reason`.
    public init(id: String, reason: String) {
        self.id = id
        self.reason = reason
    }
}
