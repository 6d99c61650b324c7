import Foundation
import GoalLedger

/// A ledger store in a directory of its own under the system's temporary directory, removed
/// when the value is released: for an app's tests and previews, each with its own store, so
/// tests can run in parallel.
///
///     let ledger = try TemporaryLedger(device: "phone")
///     try ledger.store.write { try $0.createGoal(title: "Read", now: Instant(rfc3339: "2026-03-02T08:00:00Z")!) }
///
/// Further devices of the same ledger (``device(_:now:)``) are clones in the same directory, so
/// tests of several devices sync between them as an app's devices would.
public final class TemporaryLedger: Sendable {
    /// The directory holding the store (and the other devices' stores).
    public let directory: String
    /// The store of the first device.
    public let store: LedgerStore

    /// A new ledger founded by `device`, in a new temporary directory.
    public init(device: String = "phone") throws(LedgerError) {
        let base = FileManager.default.temporaryDirectory.path
        directory = base + "/goal-ledger-" + UUID().uuidString
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw LedgerError(.store, "cannot make the temporary directory \(directory): \(error.localizedDescription)")
        }
        do {
            store = try LedgerStore.create(at: directory + "/" + device, device: device)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// A store of another device of the same ledger, cloned from the first device's store at
    /// `now` (named `name`, in this ledger's directory).
    public func device(_ name: String, now: Instant = .systemNow) throws(LedgerError) -> LedgerStore {
        try store.clone(to: directory + "/" + name, device: name, now: now)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
