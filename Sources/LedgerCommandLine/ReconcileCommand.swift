import Foundation
import GoalLedger

enum ReconcileCommand {
    static let spec = CommandSpec(
        name: "reconcile", summary: "bring this device's notification center in line with the ledger",
        options: [
            OptionSpec(name: "--full", value: nil, help: "plan every goal (time passing, device changes), not only changed ones"),
            OptionSpec(name: "--dry-run", value: nil, help: "report what would change, change nothing"),
            OptionSpec(name: "--center", value: "FILE", help: "the notification center file (default: inside the store)"),
        ],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let now = try inv.now()
        let store = try inv.openStore()
        let reconciler = Reconciler(store: store, centerPath: inv.options["--center"])
        let r = try reconciler.reconcile(now: now, full: inv.flags.contains("--full"), dryRun: inv.flags.contains("--dry-run"))
        if inv.json {
            try inv.printJSON(r.json)
            return
        }
        let what = inv.flags.contains("--dry-run") ? "would schedule" : "scheduled"
        inv.print(
            "\(r.device) (\(r.authorization?.rawValue ?? "unknown")), \(r.full ? "full" : "incremental") pass to position \(r.checkpoint): \(what) \(r.scheduled.count), cancelled \(r.cancelled.count), unchanged \(r.unchanged)"
        )
        for id in r.scheduled { inv.print("  + \(id)") }
        for id in r.cancelled { inv.print("  - \(id)") }
        for i in r.issues { inv.print("  ! \(i.kind.rawValue) \(i.goal.uuidString)") }
        for id in r.removedDelivered { inv.print("  x \(id) (delivered)") }
    }
}
