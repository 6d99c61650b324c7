import Foundation

/// What the ledger knows about one device: its settings and its notification authorization,
/// each the latest the device itself reported (in canonical order).
public struct DeviceState: Equatable, Sendable {
    /// The device's name.
    public let name: String
    /// The latest settings the device reported, and which event; nil before it reported any
    /// (``settings`` then gives the defaults).
    public internal(set) var configuration: Register<DeviceConfigured>?
    /// The latest notification permission the device reported, and which event; nil when it
    /// never reported one (the reconciler then leaves the device's center alone).
    public internal(set) var authorization: Register<AuthorizationStatus>?

    /// A device that has reported nothing yet.
    public init(name: String) { self.name = name }

    /// The settings in effect: the device's own, or the defaults (UTC, Sunday first) before it
    /// has reported any.
    public var settings: DeviceConfigured { configuration?.value ?? .defaults }

    /// The device's days and weeks: the time zone and first weekday of ``settings``.
    public var calendar: DeviceCalendar {
        DeviceCalendar(timeZoneIdentifier: settings.timeZone, firstWeekday: settings.firstWeekday)
    }

    /// Folds one of the device's own events, as its payload type says (`EventPayload.fold`).
    public mutating func apply(_ e: Event) {
        e.payload.fold(into: &self, Stamp(e))
    }
}
