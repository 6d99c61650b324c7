import Foundation
import GoalLedger

/// The reconciler against a notification center kept in a JSON file (`NotificationCenterFile`),
/// from synchronous code: the command line's `reconcile`, the scenario runner, the benchmark.
/// Its checkpoint is kept per file (the standardized path).
package struct FileCenterReconciler: Sendable {
    /// The store whose device's pending table is reconciled.
    package let store: LedgerStore
    /// The center's file (default: `notification-center.json` inside the store).
    package let centerPath: String

    /// A reconciler for the center file at `centerPath` (default: inside the store).
    package init(store: LedgerStore, centerPath: String? = nil) {
        self.store = store
        self.centerPath = centerPath ?? store.path + "/notification-center.json"
    }

    /// One pass: the center is read, time is let pass in it (due one-time requests become
    /// delivered), the pass runs, and unless `dryRun` the center file and the checkpoint are
    /// written.
    package func reconcile(now: Instant, full: Bool = false, dryRun: Bool = false) throws(LedgerError) -> ReconcileReport {
        let device = try store.reading { try $0.deviceState(store.device) }
        let center = try FileReminderCenter(
            path: centerPath, defaultCapacity: device.settings.capacity, now: now, timeZone: device.calendar.timeZone)
        let reconciler = Reconciler(store: store, rawCenterID: URL(fileURLWithPath: centerPath).standardizedFileURL.path)
        let report = try BlockingBridge.run { () async throws(LedgerError) -> ReconcileReport in
            try await reconciler.pass(center: center, now: now, full: full, saveState: !dryRun)
        }
        if !dryRun { try center.save() }
        return report
    }
}
