import Foundation
import Sodium

extension LedgerStore {
    /// Whether the ledger was founded signed: its id is derived from the founder's name and key
    /// (a version-8 UUID), so every origin must be enrolled and every event signed. Ledgers
    /// created before events were signed have a random (version-4) id; their devices sign from
    /// the migration on.
    var isSignedLedger: Bool { ledgerID.uuid.6 >> 4 == 8 }

    /// Whether `key` is the founder's key for `origin`: in a signed ledger, the two hash to the
    /// ledger's id (the ledger's first trust, which needs no enrolment event).
    func isFounder(_ origin: String, _ key: [UInt8]) -> Bool {
        isSignedLedger && EventChain.ledgerID(founder: origin, publicKey: key) == ledgerID
    }

    // MARK: The fold's input from the log

    /// Every trust event of the log with the signature that closes its run, and each origin's
    /// first chained sequence (for a ledger founded before signing).
    func trustInputs(_ txn: borrowing StoreTransaction) throws -> (inputs: [TrustFold.Input], firstChained: [String: UInt64]) {
        var inputs: [TrustFold.Input] = []
        var firstChained: [String: UInt64] = [:]
        var positions: [UInt64] = []
        try txn.scan(layout.deviceEvents) { key, _ in
            if key.count == 8 { positions.append(UInt64(bigEndianBytes: key)) }
            return true
        }
        for p in positions {
            guard let e = try txn.event(at: p), let change = e.trustChange else { continue }
            inputs.append(
                TrustFold.Input(
                    origin: e.origin, sequence: e.sequence, key: e.key, covering: try covering(e, txn), change: change))
        }
        if !isSignedLedger {
            // Only an origin that enrolled itself can be a root, and only with its first chained
            // event: the one whose predecessor is unchained (chains never stop once begun).
            for i in inputs {
                guard case .enrolled(let device, _, _) = i.change, device == i.origin, i.covering != nil else { continue }
                var first = i.sequence == 1
                // (A stored sequence of 0, which no gate lets in, has no predecessor to read.)
                if i.sequence > 1 {
                    try scanOrigin(i.origin, from: i.sequence - 1, txn) { e in
                        first = e.sequence == i.sequence - 1 && e.previousHash == nil
                        return false
                    }
                }
                if first { firstChained[i.origin] = min(firstChained[i.origin] ?? .max, i.sequence) }
            }
        }
        return (inputs, firstChained)
    }

    /// The signature that closes the run holding the stored event `e`; nil for an unsigned one.
    func covering(_ e: Event, _ txn: borrowing StoreTransaction) throws -> TrustFold.Signature? {
        guard e.previousHash != nil else { return nil }
        if e.signature != nil, let k = e.signer { return TrustFold.Signature(sequence: e.sequence, signer: k) }
        var found: TrustFold.Signature?
        try scanOrigin(e.origin, from: e.sequence + 1, txn) { later in
            if let k = later.signer, later.signature != nil {
                found = TrustFold.Signature(sequence: later.sequence, signer: k)
                return false
            }
            return true
        }
        return found
    }

    /// Visits `origin`'s stored events from `sequence` on (below `end`), in order, while `body`
    /// returns true.
    func scanOrigin(
        _ origin: String, from sequence: UInt64, below end: UInt64 = .max, _ txn: borrowing StoreTransaction, _ body: (Event) throws -> Bool
    ) throws {
        try txn.scanPositions(of: origin, from: sequence) { sequence, position in
            guard sequence < end, let e = try txn.event(at: position) else { return false }
            return try body(e)
        }
    }

    /// The fold over the log's trust events (and `extra`, events not yet written).
    func foldTrust(_ txn: borrowing StoreTransaction, extra: [TrustFold.Input] = [], firstChainedExtra: [String: UInt64] = [:]) throws
        -> TrustState
    {
        let (inputs, firstChained) = try trustInputs(txn)
        var fold = TrustFold()
        fold.founder = try discoverFounder(txn)
        fold.firstChained = firstChained.merging(firstChainedExtra) { a, _ in a }
        if isSignedLedger && fold.founder == nil {
            // A signed ledger whose founder this store has not met yet: nobody is trusted.
            var state = TrustState()
            state.founderless = false
            return state
        }
        return fold.fold(inputs + extra)
    }

    /// The founder of a signed ledger: as recorded, else found among the keys the table holds
    /// (a store written before the founder was recorded) or the log's signatures, and recorded.
    /// A recorded founder counts only when the ledger's id names its key (the id is made from
    /// the founder's name and key): one a damaged or altered file holds is looked for again, and
    /// until it is found nobody is trusted, never the key the row names.
    func discoverFounder(_ txn: borrowing StoreTransaction) throws -> (name: String, key: [UInt8])? {
        guard isSignedLedger else { return nil }
        if let f = try recordedFounder(txn) { return f }
        var found: (String, [UInt8])?
        try txn.scan(layout.trust, from: [UInt8(ascii: "k")]) { key, value in
            guard key.first == UInt8(ascii: "k"), key.count > 10 else { return false }
            let name = String(decoding: key[1..<(key.count - 9)], as: UTF8.self)
            if isFounder(name, Array(value)) { found = (name, Array(value)) }
            return found == nil
        }
        if found == nil {
            for origin in try txn.originHeads().keys where found == nil {
                try scanOrigin(origin, from: 1, txn) { e in
                    guard let k = e.signer, e.signature != nil else { return true }
                    if isFounder(origin, k) { found = (origin, k) }
                    return false
                }
            }
        }
        if let found { try txn.recordFounder(found.0, found.1) }
        return found
    }

    /// The last sequence of `origin` that counts under `state` (see `TrustState.CutoffWalk`),
    /// walking its stored events; `events[written]`, the origin's last events in sequence order
    /// when the caller holds them in memory, are walked from there instead of read back.
    func cutoff(_ origin: String, _ state: TrustState, _ txn: borrowing StoreTransaction, written: [Int] = [], of events: [Event] = []) throws
        -> UInt64?
    {
        var walk = TrustState.CutoffWalk(origin, state, signedLedger: isSignedLedger)
        let firstWritten = written.first.map { events[$0].sequence } ?? .max
        var going = true
        if firstWritten > 1 {
            try scanOrigin(origin, from: 1, below: firstWritten, txn) { e in
                going = walk.step(e.sequence, chained: e.previousHash != nil, signer: e.signature == nil ? nil : e.signer)
                return going
            }
        }
        if going {
            for i in written
            where !walk.step(
                events[i].sequence, chained: events[i].previousHash != nil, signer: events[i].signature == nil ? nil : events[i].signer)
            {
                break
            }
        }
        return walk.cut
    }

    /// Re-derives the trust table from the log (after a trust event was written): writes it
    /// and returns the origins whose counted events shrank below what the store holds.
    /// `written`: positions in `events` of the events just written, by origin (in sequence
    /// order, each origin's last), which the walks take from memory.
    @discardableResult
    func recomputeTrust(_ txn: borrowing StoreTransaction, written: [String: [Int]] = [:], of events: [Event] = []) throws -> Bool {
        let old = try txn.trustState()
        let oldCutoffs = try txn.revocations()
        let state = try foldTrust(txn)
        let heads = try txn.originHeads()
        var cutoffs: [String: UInt64] = [:]
        for (origin, head) in heads {
            let unchangedKeys = old.devices[origin]?.keys == state.devices[origin]?.keys
            var cut: UInt64?
            if unchangedKeys, oldCutoffs[origin] == nil || oldCutoffs[origin] == old.devices[origin]?.revokedAfter {
                cut = state.devices[origin]?.revokedAfter
            } else {
                cut = try cutoff(origin, state, txn, written: written[origin] ?? [], of: events)
            }
            if let c = cut, c < head { cutoffs[origin] = c }
        }
        for (name, d) in state.devices where heads[name] == nil { if let r = d.revokedAfter { cutoffs[name] = r } }
        try txn.writeTrust(state, cutoffs: cutoffs)
        return cutoffs.contains { origin, c in (oldCutoffs[origin] ?? .max) > c }
    }
}

extension LedgerStore {
    /// The key this device signs its appends with: none before it is enrolled (a schema-1
    /// store, or one created for a clone until its source enrols it). Refuses to append when
    /// the device is enrolled but its key is missing, when it was revoked, or when the store
    /// was restored from a backup and has not exchanged events since.
    func signer(_ txn: borrowing StoreTransaction) throws -> SigningKey? {
        if try txn.get(layout.meta, key: MetaKey.restored) != nil {
            throw LedgerError(
                "the store at \(path) was restored from a backup and may be behind \(device)'s own history: exchange events with another device or the hub first (appending now would fork \(device)); nothing was written",
                reason: .restoredFromBackup(device: device))
        }
        let state = try txn.trustState()
        if let after = state.devices[device]?.revokedAfter {
            throw LedgerError(
                "device \(device) was revoked after its sequence \(after): its new events would be refused; nothing was written",
                reason: .deviceRevoked(device: device, after: after))
        }
        let head = try txn.ownHead(device)
        if let cut = try txn.revokedAfter(device), cut < head {
            throw LedgerError(
                "device \(device)'s events after its sequence \(cut) are signed by a key the ledger does not trust for it; nothing was written",
                reason: .signerNotTrusted(device: device))
        }
        guard let enrolled = state.devices[device], !enrolled.keys.isEmpty else {
            if isSignedLedger {
                throw LedgerError(
                    "device \(device) is not enrolled in ledger \(ledgerID.uuidString): an enrolled device must enrol this store's key (a clone does); nothing was written",
                    reason: .deviceNotEnrolled(device: device, publicKey: (try? keys.key(ledger: ledgerID, device: device))??.publicKey ?? []))
            }
            return nil
        }
        guard let key = try keys.key(ledger: ledgerID, device: device) else {
            throw LedgerError.signingKeyMissing(device: device, path: path)
        }
        guard enrolled.key(at: head + 1) == key.publicKey else {
            throw LedgerError(
                "the signing key in \(path) is not the one enrolled for \(device); nothing was written",
                reason: .signerNotTrusted(device: device))
        }
        return key
    }

    /// Records the founder's own key in a new store (other stores know it from the ledger id).
    func trustFounder(_ key: [UInt8]) throws(LedgerError) {
        do {
            try writeTransaction { txn in
                try txn.recordFounder(device, key)
                try recomputeTrust(txn)
            }
        } catch {
            throw LedgerError(.store, "cannot record the key of \(device): \(error)")
        }
    }

}

extension LedgerStore {
    /// At open: a rotation whose process died after its commit and before its new key was made
    /// current leaves the ledger enrolling the staged key while the key store holds the old
    /// one. When the staged key is the one the ledger enrols for this device's next event, it
    /// becomes current; a staged key the ledger does not enrol (a rotation that rolled back)
    /// is discarded, once the current key is the enrolled one.
    func adoptStagedKey() throws(LedgerError) {
        guard let staged = try keys.stagedKey(ledger: ledgerID, device: device) else { return }
        let enrolled = try failing(as: "reading \(path)") {
            try readTransaction { txn in
                let head = try txn.ownHead(device)
                return try txn.trustState().devices[device]?.key(at: head + 1)
            }
        }
        let current = try keys.key(ledger: ledgerID, device: device)
        if let enrolled, current?.publicKey != enrolled, staged.publicKey == enrolled {
            try keys.replace(staged, ledger: ledgerID, device: device)
        } else if current != nil, current?.publicKey == enrolled || enrolled == nil {
            try keys.discardStaged(ledger: ledgerID, device: device)
        }
    }

    /// `head`, the last sequence of the store device's own events, which its next events are
    /// numbered after; refused as damage from 2^62 on, far past any chain a device can write,
    /// so that `head + 1` and the like cannot overflow.
    @discardableResult
    static func checkedOwnHead(_ head: UInt64, device: String) throws(LedgerError) -> UInt64 {
        guard head < 1 << 62 else {
            throw LedgerError.damaged("the store holds \(head) as the last sequence of \(device)'s own events, past any chain; the store is damaged")
        }
        return head
    }

    /// In a ledger founded before signing, once the store is on the current schema: gives the
    /// device a key (kept if a previous run made one) and appends its enrolment, from its next
    /// sequence on. Idempotent: a device already enrolled is left alone.
    func startSigning(now: Instant) throws(LedgerError) {
        let (schema, enrolled, head) = try reading { s in
            (s.schema, try s.trustState().devices[device] != nil, try s.originHeads()[device] ?? 0)
        }
        try Self.checkedOwnHead(head, device: device)
        guard schema == Self.currentSchema, !isSignedLedger, !enrolled else { return }
        let key: SigningKey
        if let existing = try keys.key(ledger: ledgerID, device: device) {
            key = existing
        } else {
            key = SigningKey.generate()
            try keys.save(key, ledger: ledgerID, device: device)
        }
        try writing { try $0.enrol(device: device, key: key.publicKey, from: head + 1, signingKey: key, now: now) }
    }
}
