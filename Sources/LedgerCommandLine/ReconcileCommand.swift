import Foundation
import LedgerFileCenter
import GoalLedger

enum ReconcileCommand {
    static let full = Flag("--full", "plan every goal (time passing, device changes), not only changed ones")
    static let dryRun = Flag("--dry-run", "report what would change, change nothing")
    static let center = Option.text("--center", "FILE", "the notification center file (default: inside the store)")

    static let spec = CommandSpec(
        name: "reconcile", summary: "bring this device's notification center in line with the ledger",
        options: [
            full.spec,
            dryRun.spec,
            center.spec,
        ],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let now = try inv.now()
        let store = try inv.openStore()
        let reconciler = FileCenterReconciler(store: store, centerPath: (try inv.value(Self.center)))
        let r = try reconciler.reconcile(now: now, full: inv.isSet(Self.full), dryRun: inv.isSet(Self.dryRun))
        if inv.json {
            try inv.printJSON(r.json)
            return
        }
        let what = inv.isSet(Self.dryRun) ? "would schedule" : "scheduled"
        inv.print(
            "\(r.device) (\(r.authorization?.rawValue ?? "unknown")), \(r.full ? "full" : "incremental") pass to position \(r.checkpoint): \(what) \(r.scheduled.count), cancelled \(r.cancelled.count), unchanged \(r.unchanged)"
        )
        for id in r.scheduled { inv.print("  + \(id)") }
        for id in r.cancelled { inv.print("  - \(id)") }
        for i in r.issues { inv.print("  ! \(i.kind.rawValue) \(i.goal.uuidString)") }
        for id in r.removedDelivered { inv.print("  x \(id) (delivered)") }
    }
}
