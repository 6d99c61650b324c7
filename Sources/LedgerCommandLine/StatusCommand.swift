import GoalLedger

enum StatusCommand {
    static let spec = CommandSpec(
        name: "status", summary: "ledger, device and its key, schema, counts, per-origin sequences, enrolled devices, digest",
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let (digest, goalCount) = try store.digestAndGoalCount()
        let (version, checkpoint) = try store.projectionStatus()
        let events = try store.lastPosition()
        let heads = try store.originHeads().sorted { String.bytesPrecede($0.key, $1.key) }
        let enrolled = try store.enrolledDevices()
        let key = try store.publicKey()
        let aside = try store.setAsideEvents()
        let waiting = try store.waitingEvents()
        var extra: [(String, JSONValue)] = []
        if !aside.isEmpty { extra.append(("setAside", .array(aside.map(VerifyCommand.json)))) }
        if !waiting.isEmpty {
            let rows: [JSONValue] = waiting.map { w in
                .object([
                    ("origin", .string(w.origin)), ("sequence", .number(Double(w.sequence))), ("count", .number(Double(w.count))),
                    ("cause", .string(w.cause.rawValue)), ("reason", .string(w.reason)),
                ])
            }
            extra.append(("waiting", .array(rows)))
        }
        if inv.json {
            try inv.printJSON(
                .object([
                    ("ledger", .string(store.ledgerID.uuidString)),
                    ("device", .string(store.device)),
                    ("schema", .number(Double(store.schema))),
                    ("events", .number(Double(events))),
                    ("origins", .object(heads.map { ($0.key, .number(Double($0.value))) })),
                    (
                        "projections",
                        .object([
                            ("goals", .object([("version", .number(Double(version))), ("checkpoint", .number(Double(checkpoint)))]))
                        ])
                    ),
                    ("digest", .string(digest)),
                    ("migrations", .array(try store.appliedMigrations().map { .string($0) })),
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
                    ("signed", .bool(store.isSignedLedger)),
                ] + extra))
            return
        }
        inv.print("ledger   \(store.ledgerID.uuidString)")
        inv.print("device   \(store.device)")
        inv.print("schema   \(store.schema)" + (store.schema < LedgerStore.currentSchema ? " (legacy: run `ledger migrate`)" : ""))
        inv.print("events   \(events)")
        inv.print("goals    \(goalCount)")
        for (device, seq) in heads { inv.print("origin   \(device) at sequence \(seq)") }
        if let key { inv.print("key      \(Hex.string(key)) (\(EventChain.fingerprint(key)))") }
        for d in enrolled {
            let revoked = d.revokedAfter.map { ", revoked after sequence \($0)" } ?? ""
            let by = d.enrolledBy.map { " by \($0)" } ?? ""
            inv.print("enrolled \(d.device) \(d.fingerprint) from sequence \(d.from)\(by)\(revoked)")
        }
        if !store.isSignedLedger && enrolled.isEmpty { inv.print("signing  not yet: run `ledger migrate` to sign this device's events") }
        inv.print("goals projection version \(version), checkpoint \(checkpoint)")
        inv.print("digest   \(digest)")
        for e in aside { inv.print("aside    \(e.description)") }
        for w in waiting { inv.print("waiting  \(w.description)") }
    }
}
