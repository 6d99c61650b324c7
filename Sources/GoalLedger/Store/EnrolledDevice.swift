import Foundation

/// A device enrolled in the ledger, as `status` shows it.
public struct EnrolledDevice: Equatable, Sendable {
    /// The device's name.
    public var device: String
    /// The Ed25519 public key it signs with now (32 bytes).
    public var publicKey: [UInt8]
    /// The first sequence of the device its key signs.
    public var from: UInt64
    /// Set when the device was revoked: its events after this sequence are refused.
    public var revokedAfter: UInt64?
    /// The device that enrolled it; nil for the founder (or, in a ledger founded before
    /// signing, a device that enrolled itself).
    public var enrolledBy: String?
    /// `publicKey` in short, for people to compare: four groups of four hex digits
    /// (``EventChain/fingerprint(_:)``).
    public var fingerprint: String { EventChain.fingerprint(publicKey) }
}
