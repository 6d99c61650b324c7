import Foundation
import Sodium

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

    /// The staged key's file, `device.key.next`.
    var nextFile: String { file + ".next" }

    /// Makes `key` current: the staged file when it holds `key` is renamed into place, else
    /// `key` is written beside the old one and renamed into place; the directory is synced.
    public func replace(_ key: SigningKey, ledger: UUID, device: String) throws(LedgerError) {
        if try stagedKey(ledger: ledger, device: device)?.publicKey != key.publicKey {
            try write(key, to: nextFile)
        }
        guard rename(nextFile, file) == 0 else {
            throw LedgerError(.store, "cannot replace \(file): \(String(cString: strerror(errno)))")
        }
        try syncDirectory()
    }

    /// Writes `key` to `device.key.next` and syncs the file and the directory.
    public func stage(_ key: SigningKey, ledger: UUID, device: String) throws(LedgerError) {
        try write(key, to: nextFile)
        try syncDirectory()
    }

    public func stagedKey(ledger: UUID, device: String) throws(LedgerError) -> SigningKey? {
        guard let data = FileManager.default.contents(atPath: nextFile) else { return nil }
        guard let key = SigningKey(secretBytes: Array(data)) else { throw LedgerError(.store, "\(nextFile) does not hold a signing key") }
        return key
    }

    public func discardStaged(ledger: UUID, device: String) throws(LedgerError) {
        guard unlink(nextFile) == 0 || errno == ENOENT else {
            throw LedgerError(.store, "cannot remove \(nextFile): \(String(cString: strerror(errno)))")
        }
        try syncDirectory()
    }

    /// Makes the directory's entries (a created or renamed key file) durable.
    private func syncDirectory() throws(LedgerError) {
        let fd = open(directory, O_RDONLY)
        guard fd >= 0, fsync(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            throw LedgerError(.store, "cannot sync \(directory): \(reason)")
        }
        close(fd)
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
