import Foundation

extension AuthorizationStatus {
    /// Whether a device with this status schedules notifications (provisional and ephemeral
    /// count as authorized).
    public var allowsScheduling: Bool {
        switch self {
        case .authorized, .provisional, .ephemeral: return true
        case .notDetermined, .denied: return false
        }
    }
}

/// Which devices notify for a goal's reminder (docs/reminders.md, routing).
///
/// A reminder without `devices` notifies on every device. One that names devices notifies on
/// those only; so that it is never silently lost, when none of the named devices is authorized
/// (by the latest authorization each reported), every authorized device notifies instead.
public struct ReminderRouting: Equatable, Sendable {
    /// The devices whose latest authorization allows scheduling.
    public var authorizedDevices: Set<String>

    /// A routing in which these devices are authorized.
    public init(authorizedDevices: Set<String>) { self.authorizedDevices = authorizedDevices }

    /// The routing the authorizations of these devices give.
    public init(devices: some Sequence<DeviceState>) {
        authorizedDevices = Set(devices.compactMap { $0.authorization?.value.allowsScheduling == true ? $0.name : nil })
    }

    /// Whether `device` should notify for a reminder routed to `devices` (nil: every device).
    public func routes(_ devices: [String]?, to device: String) -> Bool {
        guard let devices else { return true }
        if devices.contains(device) { return true }
        return authorizedDevices.contains(device) && !devices.contains(where: authorizedDevices.contains)
    }
}
