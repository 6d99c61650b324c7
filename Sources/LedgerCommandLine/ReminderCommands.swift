import Foundation
import GoalLedger

enum PendingCommand {
    static let spec = CommandSpec(
        name: "pending", summary: "a device's desired notification table at --now",
        options: [OptionSpec(name: "--device", value: "NAME", help: "the device (default: this store's)")],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let now = try inv.now()
        let store = try inv.openStore()
        let name = inv.options["--device"] ?? store.device
        guard DeviceName.isValid(name) else { throw LedgerError(.usage, "invalid device name \"\(name)\"") }
        let (device, plan) = try Reconciler.pending(store: store, device: name, now: now)
        let authorization = device.authorization?.value.rawValue ?? "unknown"
        if inv.json {
            try inv.printJSON(
                .object([
                    ("device", .string(name)), ("authorization", .string(authorization)),
                    ("strategy", .string(device.settings.strategy.rawValue)),
                    ("requests", .array(plan.requests.map(\.json))),
                    ("overCapacity", .array(plan.overCapacity.map { .string($0.uuidString) })),
                ]))
            return
        }
        inv.print(
            "\(name): \(plan.requests.count) request\(plan.requests.count == 1 ? "" : "s") (\(device.settings.strategy.rawValue), authorization \(authorization))"
        )
        for r in plan.requests {
            inv.print("  \(r.nextFireAt.rfc3339)  \(r.id)  \(r.title) — \(r.body)\(r.trigger.repeats ? " (repeats)" : "")")
        }
        for g in plan.overCapacity { inv.print("  over capacity: \(g.uuidString)") }
    }
}

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
            "\(r.device) (\(r.authorization)), \(r.full ? "full" : "incremental") pass to position \(r.checkpoint): \(what) \(r.scheduled.count), cancelled \(r.cancelled.count), unchanged \(r.unchanged)"
        )
        for id in r.scheduled { inv.print("  + \(id)") }
        for id in r.cancelled { inv.print("  - \(id)") }
        for i in r.issues { inv.print("  ! \(i.kind.rawValue) \(i.goal.uuidString)") }
        for id in r.removedDelivered { inv.print("  x \(id) (delivered)") }
    }
}
