import Foundation
import GoalLedger

enum PendingCommand {
    static let device = Option.text("--device", "NAME", "the device (default: this store's)")

    static let spec = CommandSpec(
        name: "pending", summary: "a device's desired notification table at --now",
        options: [device.spec],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let now = try inv.now()
        let store = try inv.openStore()
        let name = try inv.value(Self.device) ?? store.device
        guard DeviceName.isValid(name) else { throw LedgerError(.invalidArgument, "invalid device name \"\(name)\"") }
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
            inv.printText("  \(r.nextFireAt?.rfc3339 ?? "-")  \(r.id)  \(r.title) — \(r.body)\(r.trigger.repeats ? " (repeats)" : "")")
        }
        for g in plan.overCapacity { inv.print("  over capacity: \(g.uuidString)") }
    }
}
