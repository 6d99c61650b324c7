import Foundation
import LMDB

extension LedgerStore {
    /// Writes a consistent, compacted copy of the store into `destination` (a new or empty
    /// directory). LMDB copies from one read snapshot, so appends may go on meanwhile: the copy
    /// holds every batch committed before it started and none after. Free pages are left out.
    ///
    /// The copy is owner-only: a new directory is created with mode 0700, an existing one that
    /// group or others can reach (or that belongs to another user) is refused, and every file is
    /// created with mode 0600 before anything is written into it, whatever the umask.
    ///
    /// The copy is marked as restored: opened as a store, it refuses to append until it has
    /// exchanged events with another store (it may be behind its own device's history, and
    /// appending would fork it). The device's secret key is left out unless `withKey` is set.
    public func backup(to destination: String, withKey: Bool = false) throws(LedgerError) {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: destination, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw LedgerError(.invalidInput, "\(destination) exists and is not a directory") }
            try Self.checkOwnerOnly(directory: destination, holding: "a backup (a person's whole history)")
            let contents = (try? fm.contentsOfDirectory(atPath: destination)) ?? []
            guard contents.isEmpty else {
                throw LedgerError(.invalidInput, "\(destination) is not empty; choose a new directory for the backup")
            }
        } else {
            do {
                try fm.createDirectory(atPath: destination, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw LedgerError(.invalidInput, "cannot create \(destination): \(error.localizedDescription)")
            }
        }
        do {
            // The data file is owner-only from its creation, like the store's own files.
            try env.copy(toFile: destination + "/data.mdb", compacting: true, mode: 0o600)
        } catch {
            try? fm.removeItem(atPath: destination + "/data.mdb")
            throw LedgerError(.store, "backing up \(path) to \(destination) failed: \(error.message)")
        }
        do {
            let copy = try Environment(path: destination)
            let meta = try copy.existingDatabase(named: "meta")
            try copy.write { txn in try txn.put(meta, key: MetaKey.restored, value: []) }
        } catch {
            throw LedgerError(.store, "marking the backup at \(destination) failed: \(error)")
        }
        _ = chmod(destination + "/lock.mdb", 0o600)
        if withKey, let key = try keys.key(ledger: ledgerID, device: device) {
            try DirectoryKeyStore(directory: destination).save(key, ledger: ledgerID, device: device)
        }
    }

    /// Refuses the existing directory `path` for `what` (a store or a backup, in words for the
    /// message) when group or others may read, write or enter it, or when it belongs to another
    /// user: what is written there would be theirs to read or replace.
    package static func checkOwnerOnly(directory path: String, holding what: String) throws(LedgerError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw LedgerError(.invalidInput, "cannot read the permissions of \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_uid == geteuid() else {
            throw LedgerError(
                .invalidInput, "\(path) belongs to another user (uid \(status.st_uid)) and would hold \(what): name a directory of your own")
        }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            let octal = String(mode, radix: 8)
            throw LedgerError(
                .invalidInput,
                "\(path) can be read or written by group or others (mode \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal)) and would hold \(what): make it owner-only (chmod 700 \(path)) or name a new directory"
            )
        }
    }
}

extension LedgerStore {
    /// Events at the end of the log checked before every write.
    static let tailCheck = 64

    /// Refuses to build on a damaged store: the last events' checksums and the projection's
    /// checkpoint are checked before a write (cheap; `verify` checks everything). Damage found
    /// while a write reads the log refuses that write too.
    func checkBeforeWriting(_ txn: borrowing StoreTransaction) throws {
        let last = try txn.lastPosition()
        let status = try txn.projectionStatus()
        guard status.checkpoint == last else {
            throw LedgerError(
                "the store at \(path) is inconsistent (projection at \(status.checkpoint), log at \(last)); nothing was written",
                reason: .indexDamaged(position: nil))
        }
        guard last > 0 else { return }
        let first = last > UInt64(Self.tailCheck) ? last - UInt64(Self.tailCheck) + 1 : 1
        var expected = first
        try txn.scan(layout.events, from: first.bigEndianBytes) { key, value in
            let position = UInt64(bigEndianBytes: key)
            guard position == expected else {
                throw LedgerError(
                    "the store at \(path) is missing position \(expected); nothing was written", reason: .storeDamaged(position: expected))
            }
            expected += 1
            do {
                _ = try EventCodec.decode(value)
            } catch {
                throw LedgerError(
                    "the store at \(path) is damaged at position \(position) (\(error)); nothing was written",
                    reason: .storeDamaged(position: position))
            }
            return true
        }
    }
}
