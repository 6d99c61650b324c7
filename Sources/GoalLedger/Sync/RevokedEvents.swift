import Foundation

/// Events of one revoked device that an import left out: `count` of them, after sequence `after`.
public struct RevokedEvents: Equatable, Sendable {
    /// The revoked device.
    public var origin: String
    /// How many of its events were left out.
    public var count: Int
    /// The last sequence of the device that is kept: its events after it are refused.
    public var after: UInt64
}
