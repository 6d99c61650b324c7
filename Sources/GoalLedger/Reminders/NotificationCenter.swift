import Foundation

/// A device's notification center as the reconciler sees it: a narrow backend contract, in the
/// manner of swift-log's `LogHandler`. On a phone an app adapts the system's center to it (see
/// the README); the command line uses `FileNotificationCenter`; tests use
/// `InMemoryNotificationCenter`. The reconciler depends on nothing else. (Where Foundation is
/// imported too, write `GoalLedger.NotificationCenter`.)
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
public protocol NotificationCenter: Sendable {
    func pendingRequests() async throws -> [PendingRequest]
    func add(_ request: PendingRequest) async throws
    func removePendingRequests(withIdentifiers ids: [String]) async throws
    var supportsDeliveredNotifications: Bool { get }
    func deliveredNotifications() async throws -> [DeliveredNotification]
    func removeDeliveredNotifications(withIdentifiers ids: [String]) async throws
}

extension NotificationCenter {
    public var supportsDeliveredNotifications: Bool { false }
    public func deliveredNotifications() async throws -> [DeliveredNotification] { [] }
    public func removeDeliveredNotifications(withIdentifiers ids: [String]) async throws {}
}

/// A notification that has fired and is still shown in the device's notification center.
public struct DeliveredNotification: Equatable, Sendable {
    public var id: String
    /// The goal in the payload; nil for notifications that are not goal reminders.
    public var goal: UUID?
    public var title: String
    public var body: String
    public var deliveredAt: Instant

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
    public var id: String
    public var reason: String

    public init(id: String, reason: String) {
        self.id = id
        self.reason = reason
    }
}
