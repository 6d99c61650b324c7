import Foundation
import GoalLedger
import Synchronization

/// A notification center in memory: the test double of `ReminderCenter`, for an app's tests and
/// previews. It keeps pending
/// requests (in the order added), delivered notifications, a capacity, ids it refuses, and the
/// calls it received, so tests can change it behind the reconciler's back and check what a pass
/// did.
public final class InMemoryReminderCenter: ReminderCenter {
    /// What the center holds, and the calls it received, for tests to read and change.
    public struct State: Sendable {
        /// The pending requests, in the order added.
        public var requests: [NotificationRequest] = []
        /// The notifications that have fired.
        public var delivered: [DeliveredNotification] = []
        /// How many requests the center holds at most; `add` of a new id beyond it throws.
        public var capacity: Int
        /// Ids whose `add` throws.
        public var refuse: Set<String> = []
        /// What `supportsDeliveredNotifications` answers.
        public var supportsDelivered = true
        /// `add <id>`, `remove <ids>`, `removeDelivered <ids>`, in the order received.
        public var calls: [String] = []
    }

    private let state: Mutex<State>

    /// A center holding at most `capacity` requests, with these pending requests and delivered
    /// notifications.
    public init(capacity: Int = 64, requests: [NotificationRequest] = [], delivered: [DeliveredNotification] = []) {
        state = Mutex(State(requests: requests, delivered: delivered, capacity: capacity))
    }

    /// Reads or changes the state (as the OS or the user would).
    public func withState<R: Sendable>(_ body: (inout State) -> R) -> R { state.withLock { body(&$0) } }

    /// The pending requests, in the order added.
    public var requests: [NotificationRequest] { withState { $0.requests } }

    public func pendingRequests() async throws -> [NotificationRequest] { requests }

    public func add(_ request: NotificationRequest) async throws {
        try state.withLock { s throws(NotificationRefused) in
            s.calls.append("add \(request.id)")
            if s.refuse.contains(request.id) { throw NotificationRefused(id: request.id, reason: "refused") }
            if let i = s.requests.firstIndex(where: { $0.id == request.id }) {
                s.requests[i] = request
                return
            }
            guard s.requests.count < s.capacity else { throw NotificationRefused(id: request.id, reason: "the center is full") }
            s.requests.append(request)
        }
    }

    public func removePendingRequests(withIdentifiers ids: [String]) async throws {
        state.withLock { s in
            s.calls.append("remove \(ids.joined(separator: ","))")
            let gone = Set(ids)
            s.requests.removeAll { gone.contains($0.id) }
        }
    }

    public var supportsDeliveredNotifications: Bool { withState { $0.supportsDelivered } }

    public func deliveredNotifications() async throws -> [DeliveredNotification] { withState { $0.delivered } }

    public func removeDeliveredNotifications(withIdentifiers ids: [String]) async throws {
        state.withLock { s in
            s.calls.append("removeDelivered \(ids.joined(separator: ","))")
            let gone = Set(ids)
            s.delivered.removeAll { gone.contains($0.id) }
        }
    }
}
