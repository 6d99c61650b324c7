import Foundation
import Sodium

/// Where a device keeps its secret signing key. The key never leaves the device: it is not in
/// the LMDB environment, so exports, hub rows and backups (unless asked) never carry it.
///
/// An app keeps the key in the OS keychain by conforming its own type (a generic password item
/// under the ledger and device names); the ledger asks for the key when it signs an appended
/// batch and stores a new one when a device is created.
public protocol DeviceKeyStore: Sendable {
    /// The secret key of `device` in `ledger`, or nil when none is stored.
    func key(ledger: UUID, device: String) throws(LedgerError) -> SigningKey?
    /// Stores `key` for `device` in `ledger`, replacing none.
    func save(_ key: SigningKey, ledger: UUID, device: String) throws(LedgerError)
    /// Replaces the key of `device` in `ledger` with `key` (a rotation), at once: a reader sees
    /// the old key or the new one, never neither.
    func replace(_ key: SigningKey, ledger: UUID, device: String) throws(LedgerError)
    /// Keeps `key` durably beside the current key of `device`, as its next key: a rotation
    /// stages its new key before the rotation commits, and ``replace(_:ledger:device:)`` makes
    /// it current after. A process that dies in between leaves it staged, and the store adopts
    /// it when it opens (when the ledger enrols it), so the new key is never lost.
    func stage(_ key: SigningKey, ledger: UUID, device: String) throws(LedgerError)
    /// The key staged for `device` and not yet made current, or nil.
    func stagedKey(ledger: UUID, device: String) throws(LedgerError) -> SigningKey?
    /// Forgets the staged key of `device` (a rotation that never committed staged it).
    func discardStaged(ledger: UUID, device: String) throws(LedgerError)
}

extension DeviceKeyStore {
    /// A key store that cannot replace a key: rotation is refused.
    public func replace(_ key: SigningKey, ledger: UUID, device: String) throws(LedgerError) {
        throw LedgerError(.invalidArgument, "this key store cannot replace the key of \(device): rotation needs a key store that can")
    }
    /// A key store that cannot stage a key keeps nothing: a rotation's new key then lives only
    /// in memory until ``replace(_:ledger:device:)`` runs after the commit.
    public func stage(_ key: SigningKey, ledger: UUID, device: String) throws(LedgerError) {}
    /// No key is staged.
    public func stagedKey(ledger: UUID, device: String) throws(LedgerError) -> SigningKey? { nil }
    /// Nothing to forget.
    public func discardStaged(ledger: UUID, device: String) throws(LedgerError) {}
}
