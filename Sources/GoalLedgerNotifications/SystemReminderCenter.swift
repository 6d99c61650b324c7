// The system's notification center as a `ReminderCenter`, for apps on Apple platforms. On
// other platforms this module is empty; its trigger mapping
// (`NotificationTrigger.dateMatching`, `NotificationTrigger(dateMatching:repeats:)`) is pure
// and lives, tested, in GoalLedger.
#if canImport(UserNotifications)
    import Foundation
    import GoalLedger
    import UserNotifications

    /// `UNUserNotificationCenter` as the reconciler sees it. Requests carry their goal in
    /// `userInfo["goalId"]`; a date trigger is a calendar trigger of UTC components (so it
    /// fires at its instant wherever the device is), a calendar trigger its local components.
    /// It never asks for permission: the app does, and reports the answer with
    /// `LedgerStore.reportAuthorization`.
    public struct SystemReminderCenter: ReminderCenter {
        /// The system's center; every request sounds the default sound.
        public init() {}

        public func pendingRequests() async throws -> [NotificationRequest] {
            await UNUserNotificationCenter.current().pendingNotificationRequests().compactMap { r in
                guard let calendar = r.trigger as? UNCalendarNotificationTrigger,
                    let trigger = NotificationTrigger(dateMatching: calendar.dateComponents, repeats: calendar.repeats)
                else { return nil }
                return NotificationRequest(
                    id: r.identifier, goal: Self.goal(r.content.userInfo), title: r.content.title, body: r.content.body,
                    sound: "default", trigger: trigger)
            }
        }

        public func add(_ request: NotificationRequest) async throws {
            let content = UNMutableNotificationContent()
            content.title = request.title
            content.body = request.body
            content.sound = .default
            if let goal = request.goal { content.userInfo = ["goalId": goal.uuidString] }
            let (components, repeats) = request.trigger.dateMatching
            let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: repeats)
            try await UNUserNotificationCenter.current().add(UNNotificationRequest(identifier: request.id, content: content, trigger: trigger))
        }

        public func removePendingRequests(withIdentifiers ids: [String]) async throws {
            UNUserNotificationCenter.current().removePendingNotificationRequests(withIdentifiers: ids)
        }

        public var supportsDeliveredNotifications: Bool { true }

        public func deliveredNotifications() async throws -> [DeliveredNotification] {
            await UNUserNotificationCenter.current().deliveredNotifications().map { n in
                DeliveredNotification(
                    id: n.request.identifier, goal: Self.goal(n.request.content.userInfo), title: n.request.content.title,
                    body: n.request.content.body, deliveredAt: Instant(n.date))
            }
        }

        public func removeDeliveredNotifications(withIdentifiers ids: [String]) async throws {
            UNUserNotificationCenter.current().removeDeliveredNotifications(withIdentifiers: ids)
        }

        static func goal(_ userInfo: [AnyHashable: Any]) -> UUID? {
            (userInfo["goalId"] as? String).flatMap(UUID.init(uuidString:))
        }
    }
#endif
