import GoalLedger

/// `ledger device enrol NAME --key HEX` and `ledger device revoke NAME`.
enum DeviceCommand {
    static let key = Option.text("--key", "HEX", "enrol: the new device's public key, as `ledger status` prints it there")

    static let spec = CommandSpec(
        name: "device", arguments: "enrol NAME --key HEX | revoke NAME",
        summary:
            "enrol another device's key, signed by this device (to pair a device that joined from a hub), or revoke a device: its later events are refused everywhere",
        options: [key.spec],
        positionals: 2...2, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let action = inv.positionals[0]
        let name = inv.positionals[1]
        let now = try inv.now()
        switch action {
        case "enrol":
            let text = try inv.required(Self.key, by: "device enrol")
            guard let key = Hex.bytes(text), key.count == 32 else {
                throw LedgerError(.invalidArgument, "--key must be 64 hexadecimal digits (a device's public key), got \"\(text)\"")
            }
            let store = try inv.openStore()
            let result = try store.enrol(device: name, publicKey: key, now: now)
            try report(&inv, result, "enrolled \(name) (key \(EventChain.fingerprint(key))); sync so that \(name) receives it")
        case "revoke":
            let store = try inv.openStore()
            let result = try store.revoke(device: name, now: now)
            try report(&inv, result, "revoked \(name): its events after this point are refused by every store that learns of it")
        default:
            throw LedgerError(.invalidArgument, "device takes enrol or revoke, got \"\(action)\"")
        }
    }

    static func report(_ inv: inout Invocation, _ result: AppendResult, _ text: String) throws(LedgerError) {
        if inv.json { try inv.printJSON(result.json) } else { inv.print(text) }
    }
}
