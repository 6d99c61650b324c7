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
}

extension DeviceKeyStore {
    /// A key store that cannot replace a key: rotation is refused.
    public func replace(_ key: SigningKey, ledger: UUID, device: String) throws(LedgerError) {
        throw LedgerError(.invalidArgument, "this key store cannot replace the key of \(device): rotation needs a key store that can")
    }
}

/// The default key store: the file `device.key` in the store's directory, owner-only (0600).
public struct DirectoryKeyStore: DeviceKeyStore {
    /// The directory holding the key file (the store's).
    public let directory: String
    /// The key store of the file `device.key` in `directory`.
    public init(directory: String) { self.directory = directory }

    /// The key file's name, `device.key`.
    public static let fileName = "device.key"
    var file: String { directory + "/" + Self.fileName }

    public func key(ledger: UUID, device: String) throws(LedgerError) -> SigningKey? {
        guard let data = FileManager.default.contents(atPath: file) else { return nil }
        guard let key = SigningKey(secretBytes: Array(data)) else { throw LedgerError(.store, "\(file) does not hold a signing key") }
        return key
    }

    public func save(_ key: SigningKey, ledger: UUID, device: String) throws(LedgerError) {
        guard !FileManager.default.fileExists(atPath: file) else { throw LedgerError(.store, "\(file) already holds a key") }
        try write(key, to: file)
    }

    /// Writes the new key beside the old one, then renames it into place.
    public func replace(_ key: SigningKey, ledger: UUID, device: String) throws(LedgerError) {
        let next = file + ".next"
        try? FileManager.default.removeItem(atPath: next)
        try write(key, to: next)
        guard rename(next, file) == 0 else { throw LedgerError(.store, "cannot replace \(file): \(String(cString: strerror(errno)))") }
    }

    private func write(_ key: SigningKey, to file: String) throws(LedgerError) {
        // Created owner-only before the secret is written into it.
        guard FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forWritingAtPath: file)
        else { throw LedgerError(.store, "cannot write \(file)") }
        do {
            try handle.write(contentsOf: Data(key.secretBytes))
            try handle.synchronize()
            try handle.close()
        } catch {
            throw LedgerError(.store, "cannot write \(file): \(error.localizedDescription)")
        }
    }
}
