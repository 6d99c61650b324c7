import Foundation
import GoalLedger
import LedgerHub
import LedgerSync

enum CloneCommand {
    static let device = Option.text("--device", "NAME", "this new store's device (required, new to the ledger)")
    static let ledger = Option.uuid("--ledger", "ID", "the ledger to clone from a hub or a sync service (required with a URL)")

    static let spec = CommandSpec(
        name: "clone", arguments: "SOURCE",
        summary:
            "create a store for the same ledger as SOURCE (a store, or a postgresql:// or https:// hub URL with --ledger), with all of its events",
        options: [
            device.spec,
            ledger.spec,
        ],
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let device = try inv.required(Self.device, by: "clone")
        // As for `init`: a new directory is created owner-only; an existing one must already be.
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: inv.storePath, isDirectory: &isDirectory), isDirectory.boolValue {
            try LedgerStore.checkOwnerOnly(
                directory: inv.storePath, holding: "a store (a person's whole history and the device's secret key)")
        }
        let store: LedgerStore
        if Hub.isURL(inv.positionals[0]) {
            let ledger = try inv.required(Self.ledger, by: "clone from a hub")
            guard DeviceName.isValid(device) else { throw LedgerError(.invalidArgument, "invalid device name \"\(device)\"") }
            store = try Hub(url: inv.positionals[0]).clone(ledger: ledger, to: inv.storePath, device: device)
        } else if SyncServiceClient.isServiceURL(inv.positionals[0]) {
            let ledger = try inv.required(Self.ledger, by: "clone from a sync service")
            guard DeviceName.isValid(device) else { throw LedgerError(.invalidArgument, "invalid device name \"\(device)\"") }
            let url = inv.positionals[0]
            switch try SyncCommand.serviceClient(url).cloneBlocking(ledger: ledger, to: inv.storePath, device: device) {
            case .cloned(let cloned, _):
                store = cloned
            case .awaitingEnrolment(let kept, let refusal):
                // The store stays, with the device's key, for the enrolment to name.
                let key = (try? kept.reading { try $0.publicKey() }).flatMap { $0 }.map { Hex.string($0) } ?? "KEY"
                throw LedgerError(
                    refusal.code,
                    refusal.message
                        + "\n(on an enrolled device run `ledger device enrol \(device) --key \(key)` and `ledger sync \(SyncServiceClient.redacted(url))`; then run `ledger sync \(SyncServiceClient.redacted(url))` here)"
                )
            }
        } else {
            guard inv.options[Self.ledger.name] == nil else {
                throw LedgerError(.invalidArgument, "--ledger is for cloning from a hub or sync service URL")
            }
            CrashGuard.opening(inv.positionals[0])
            CrashGuard.opening(inv.storePath)
            store = try LedgerStore.open(at: inv.positionals[0]).clone(to: inv.storePath, device: device, now: try inv.now())
        }
        let events = try store.reading { try $0.lastPosition() }
        let key = try store.reading { try $0.publicKey() }
        let enrolled = try store.reading { try $0.enrolledDevices() }.contains { $0.device == device }
        if inv.json {
            try inv.printJSON(
                .object([
                    ("ledger", .string(store.ledgerID.uuidString)), ("device", .string(device)),
                    ("store", .string(store.path)), ("events", .number(Double(events))),
                    ("deviceKey", key.map { .string(Hex.string($0)) } ?? .null), ("enrolled", .bool(enrolled)),
                ]))
        } else {
            inv.print("cloned ledger \(store.ledgerID.uuidString) into \(store.path) for device \(device): \(events) events")
        }
        SyncCommand.reportWaiting(try store.reading { try $0.waitingEvents() }, here: true, &inv)
        if let key, !enrolled {
            // A hub cannot vouch for a device: an enrolled device pairs with it.
            inv.err +=
                "ledger: \(device) is not enrolled yet; on an enrolled device run `ledger device enrol \(device) --key \(Hex.string(key))` and sync it, then sync here before appending\n"
        }
    }
}
