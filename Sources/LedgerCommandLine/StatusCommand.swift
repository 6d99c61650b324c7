import GoalLedger

enum StatusCommand {
    static let spec = CommandSpec(
        name: "status", summary: "ledger, device and its key, schema, counts, per-origin sequences, enrolled devices, digest",
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        // Every figure from one snapshot: an append elsewhere never shows half-way.
        let (status, signed) = try store.reading { (try $0.status(), $0.isSignedLedger) }
        let heads = status.originHeads.sorted { String.bytesPrecede($0.key, $1.key) }
        let (events, enrolled, key) = (status.events, status.enrolledDevices, status.deviceKey)
        let (version, checkpoint) = (status.projectionVersion, status.projectionCheckpoint)
        var extra: [(String, JSONValue)] = []
        if !status.setAside.isEmpty { extra.append(("setAside", .array(status.setAside.map(VerifyCommand.json)))) }
        if !status.waiting.isEmpty {
            let rows: [JSONValue] = status.waiting.map { w in
                .object([
                    ("origin", .string(w.origin)), ("sequence", .number(Double(w.sequence))), ("count", .number(Double(w.count))),
                    ("cause", .string(w.cause.rawValue)), ("reason", .string(w.reason)),
                ])
            }
            extra.append(("waiting", .array(rows)))
        }
        if inv.json {
            try inv.printJSON(
                .object(
                    [
                        ("ledger", .string(store.ledgerID.uuidString)),
                        ("device", .string(store.device)),
                        ("schema", .number(Double(status.schema))),
                        ("events", .number(Double(events))),
                        ("origins", .object(heads.map { ($0.key, .number(Double($0.value))) })),
                        (
                            "projections",
                            .object([
                                ("goals", .object([("version", .number(Double(version))), ("checkpoint", .number(Double(checkpoint)))]))
                            ])
                        ),
                        ("digest", .string(status.digest)),
                        ("migrations", .array(status.migrations.map { .string($0) })),
                        ("deviceKey", key.map { .string(Hex.string($0)) } ?? .null),
                        (
                            "devices",
                            .array(
                                enrolled.map { d in
                                    .object([
                                        ("device", .string(d.device)), ("publicKey", .string(Hex.string(d.publicKey))),
                                        ("fingerprint", .string(d.fingerprint)), ("from", .number(Double(d.from))),
                                        ("revokedAfter", d.revokedAfter.map { .number(Double($0)) } ?? .null),
                                        ("enrolledBy", d.enrolledBy.map { .string($0) } ?? .null),
                                    ])
                                })
                        ),
                        ("signed", .bool(signed)),
                    ] + extra))
            return
        }
        inv.print("ledger   \(store.ledgerID.uuidString)")
        inv.print("device   \(store.device)")
        inv.print("schema   \(status.schema)" + (status.schema < LedgerStore.currentSchema ? " (legacy: run `ledger migrate`)" : ""))
        inv.print("events   \(events)")
        inv.print("goals    \(status.goals)")
        for (device, seq) in heads { inv.print("origin   \(device) at sequence \(seq)") }
        if let key { inv.print("key      \(Hex.string(key)) (\(EventChain.fingerprint(key)))") }
        for d in enrolled {
            let revoked = d.revokedAfter.map { ", revoked after sequence \($0)" } ?? ""
            let by = d.enrolledBy.map { " by \($0)" } ?? ""
            inv.print("enrolled \(d.device) \(d.fingerprint) from sequence \(d.from)\(by)\(revoked)")
        }
        if !signed && enrolled.isEmpty { inv.print("signing  not yet: run `ledger migrate` to sign this device's events") }
        inv.print("goals projection version \(version), checkpoint \(checkpoint)")
        inv.print("digest   \(status.digest)")
        for e in status.setAside { inv.print("aside    \(e.description)") }
        for w in status.waiting.prefix(SyncCommand.namedWaiting) { inv.print("waiting  \(w.description)") }
        if status.waiting.count > SyncCommand.namedWaiting {
            let more = status.waiting.dropFirst(SyncCommand.namedWaiting)
            inv.print("waiting  and \(SyncCommand.eventCount(more)) event(s) of \(more.count) more origin(s) (`status --json` lists them)")
        }
    }
}
