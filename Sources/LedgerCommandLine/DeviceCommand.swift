import GoalLedger

/// `ledger device enrol NAME --key HEX`, `ledger device revoke NAME` and `ledger device rotate`.
enum DeviceCommand {
    static let key = Option.text("--key", "HEX", "enrol: the new device's public key, as `ledger status` prints it there")

    static let spec = CommandSpec(
        name: "device", arguments: "enrol NAME --key HEX | revoke NAME | rotate",
        summary:
            "enrol another device's key, signed by this device (to pair a device that joined from a hub); revoke a device below this one in the enrolment tree (its later events, and those of the devices it enrolled, are refused everywhere); or rotate this device's own key",
        options: [key.spec],
        positionals: 1...2, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let action = inv.positionals[0]
        let now = try inv.now()
        if action == "rotate" {
            guard inv.positionals.count == 1 else {
                throw LedgerError(.invalidArgument, "device rotate takes no name: it rotates this device's key")
            }
            let store = try inv.openStore()
            let result = try store.writing { try $0.rotateKey(now: now) }
            let key = try store.reading { try $0.publicKey() } ?? []
            try report(&inv, result, "rotated the key of \(store.device): it signs from its next event with \(EventChain.fingerprint(key))")
            return
        }
        guard inv.positionals.count == 2 else { throw LedgerError(.invalidArgument, "device \(action) takes a device NAME") }
        let name = inv.positionals[1]
        switch action {
        case "enrol":
            let text = try inv.required(Self.key, by: "device enrol")
            guard let key = Hex.bytes(text), key.count == 32 else {
                throw LedgerError(.invalidArgument, "--key must be 64 hexadecimal digits (a device's public key), got \"\(text)\"")
            }
            let store = try inv.openStore()
            let result = try store.writing { try $0.enrol(device: name, publicKey: key, now: now) }
            try report(&inv, result, "enrolled \(name) (key \(EventChain.fingerprint(key))); sync so that \(name) receives it")
        case "revoke":
            let store = try inv.openStore()
            let result = try store.writing { try $0.revoke(device: name, now: now) }
            let devices = try store.reading { try $0.enrolledDevices() }
            let parents = Dictionary(uniqueKeysWithValues: devices.map { ($0.device, $0.enrolledBy) })
            func isBelow(_ d: String) -> Bool {
                var p = parents[d] ?? nil
                while let up = p {
                    if up == name { return true }
                    p = parents[up] ?? nil
                }
                return false
            }
            let below = devices.map(\.device).filter(isBelow)
            try report(
                &inv, result,
                "revoked \(name): its events after this point are refused by every store that learns of it"
                    + (below.isEmpty ? "" : "; revoked with it: \(below.joined(separator: ", ")) (a revoked name is never enrolled again)"))
        default:
            throw LedgerError(.invalidArgument, "device takes enrol, revoke or rotate, got \"\(action)\"")
        }
    }

    static func report(_ inv: inout Invocation, _ result: AppendResult, _ text: String) throws(LedgerError) {
        if inv.json { try inv.printJSON(result.json) } else { inv.print(text) }
    }
}
