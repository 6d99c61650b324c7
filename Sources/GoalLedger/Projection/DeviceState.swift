import Foundation

/// What the ledger knows about one device: its settings and its notification authorization,
/// each the latest the device itself reported (in canonical order).
public struct DeviceState: Equatable, Sendable {
    public let name: String
    public internal(set) var configuration: Register<DeviceConfigured>?
    public internal(set) var authorization: Register<AuthorizationStatus>?

    public init(name: String) { self.name = name }

    /// The settings in effect: the device's own, or the defaults (UTC, Sunday first) before it
    /// has reported any.
    public var settings: DeviceConfigured { configuration?.value ?? .defaults }

    public var calendar: DeviceCalendar {
        DeviceCalendar(timeZoneIdentifier: settings.timeZone, firstWeekday: settings.firstWeekday)
    }

    /// Folds one of the device's own events, as its payload type says (`EventPayload.fold`).
    public mutating func apply(_ e: Event) {
        e.payload.fold(into: &self, Stamp(e))
    }
}
