import Foundation

/// One change of the stored projection: the event at `position` changed a goal, or the settings
/// of a device.
public struct ProjectionChange: Equatable, Hashable, Sendable {
    /// The log position of the event (1 for the first event of the store).
    public var position: UInt64
    /// The goal the event changed; nil when it changed a device.
    public var goal: UUID?
    /// For an event about devices (settings, authorization, enrolment, revocation): the device
    /// that wrote it, its origin; nil when it changed a goal.
    public var device: String?
    /// The type of the event that made the change.
    public var type: EventType
}
