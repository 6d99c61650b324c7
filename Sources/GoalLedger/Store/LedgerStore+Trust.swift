import Foundation
import LMDB
import Sodium

/// Enrolled keys and revocations, as the `trust` table holds them.
enum TrustTable {
    static func keyPrefix(_ device: String) -> [UInt8] { [UInt8(ascii: "k")] + Array(device.utf8) + [0] }
    static func revocationKey(_ device: String) -> [UInt8] { [UInt8(ascii: "r")] + Array(device.utf8) }

    /// The keys enrolled for `device`, each with the first sequence it signs.
    static func keys(of device: String, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [(from: UInt64, key: [UInt8])] {
        let prefix = keyPrefix(device)
        var out: [(UInt64, [UInt8])] = []
        try txn.scan(layout.trust, from: prefix) { key, value in
            guard key.count == prefix.count + 8, key.prefix(prefix.count).elementsEqual(prefix) else { return false }
            out.append((UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[prefix.count...])), Array(value)))
            return true
        }
        return out
    }

    /// Every enrolled device with its keys.
    static func all(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [(device: String, from: UInt64, key: [UInt8])] {
        var out: [(String, UInt64, [UInt8])] = []
        try txn.scan(layout.trust, from: [UInt8(ascii: "k")]) { key, value in
            guard key.first == UInt8(ascii: "k"), key.count > 10 else { return false }
            let name = String(decoding: key[1..<(key.count - 9)], as: UTF8.self)
            out.append((name, UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...])), Array(value)))
            return true
        }
        return out
    }

    /// Every revoked device with the last sequence of it that counts.
    static func revocations(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [String: UInt64] {
        var out: [String: UInt64] = [:]
        try txn.scan(layout.trust, from: [UInt8(ascii: "r")]) { key, value in
            guard key.first == UInt8(ascii: "r") else { return false }
            out[String(decoding: key.dropFirst(), as: UTF8.self)] = UInt64(bigEndianBytes: value)
            return true
        }
        return out
    }

    static func revokedAfter(_ device: String, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> UInt64? {
        try txn.get(layout.trust, key: revocationKey(device)).map { $0.withUnsafeBytes { UInt64(bigEndianBytes: $0) } }
    }

    /// Records what an event written to the log says about trust (`EventPayload.trustChange`).
    static func record(_ e: Event, _ txn: borrowing Transaction, _ layout: StoreLayout) throws {
        switch e.payload.trustChange {
        case .enrolled(let device, let from, let publicKey)?:
            try txn.put(layout.trust, key: keyPrefix(device) + from.bigEndianBytes, value: publicKey)
        case .revoked(let device, let after)?:
            let current = try revokedAfter(device, txn, layout)
            if current == nil || after < current! {
                try txn.put(layout.trust, key: revocationKey(device), value: after.bigEndianBytes)
            }
        case nil:
            break
        }
    }
}

/// A run signed by a key not (yet) trusted for its origin: an enrolment elsewhere in the same
/// import may still vouch for it, so verification retries before it refuses with `error`.
private struct KeyNotYetTrusted: Error {
    let error: LedgerError
}

/// A device enrolled in the ledger, as `status` shows it.
public struct EnrolledDevice: Equatable, Sendable {
    /// The device's name.
    public var device: String
    /// The Ed25519 public key it signs with (32 bytes).
    public var publicKey: [UInt8]
    /// The first sequence of the device its key signs.
    public var from: UInt64
    /// Set when the device was revoked: its events after this sequence are refused.
    public var revokedAfter: UInt64?
    /// `publicKey` in short, for people to compare: four groups of four hex digits
    /// (``EventChain/fingerprint(_:)``).
    public var fingerprint: String { EventChain.fingerprint(publicKey) }
}

extension LedgerStore {
    /// Whether the ledger was founded signed: its id is derived from the founder's name and key
    /// (a version-8 UUID), so every origin must be enrolled and every event signed. Ledgers
    /// created before events were signed have a random (version-4) id; their devices sign from
    /// the migration on.
    public var isSignedLedger: Bool { ledgerID.uuid.6 >> 4 == 8 }

    /// Whether `key` is the founder's key for `origin`: in a signed ledger, the two hash to the
    /// ledger's id (the ledger's first trust, which needs no enrolment event).
    func isFounder(_ origin: String, _ key: [UInt8]) -> Bool {
        isSignedLedger && EventChain.ledgerID(founder: origin, publicKey: key) == ledgerID
    }

    /// The devices enrolled in the ledger, by name.
    public func enrolledDevices() throws(LedgerError) -> [EnrolledDevice] {
        try read { txn in
            try TrustTable.all(txn, layout).map { d in
                EnrolledDevice(
                    device: d.device, publicKey: d.key, from: d.from, revokedAfter: try TrustTable.revokedAfter(d.device, txn, layout))
            }
        }
    }

    /// The hash of `origin`'s event at `sequence` (the chain's start for 0).
    static func chainHash(_ origin: String, _ sequence: UInt64, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [UInt8] {
        guard sequence > 0 else { return EventChain.genesis }
        guard let p = try txn.get(layout.origins, key: StoreLayout.originKey(origin, sequence)),
            let e = try event(at: p.withUnsafeBytes { UInt64(bigEndianBytes: $0) }, txn, layout)
        else { throw LedgerError(.store, "the origin index lacks \(origin)/\(sequence); run `ledger verify`") }
        return EventChain.hash(e)
    }

    /// Checks the new events of each origin (in sequence order, after `heads`) against their
    /// signed hash chains, and returns the origins' runs without the events of revoked devices.
    ///
    /// - Each event must continue its origin's chain (`previousHash` is the hash of the event
    ///   before it); a first event that does not continue the chain held here is a fork.
    /// - A run of chained events must end with a signature, made by a key enrolled for the
    ///   origin (the signature vouches for the whole run through the chain).
    /// - A key is trusted for an origin when it is the founder's (the origin's name and the key
    ///   hash to the ledger id), when an enrolled device's signed `deviceEnrolled` names it, or,
    ///   in a ledger founded before signing, when the device enrolled itself from its migration on.
    /// - Unsigned events are accepted only in a ledger founded before signing, from a device
    ///   not (yet) enrolled for that sequence.
    func verifyChains(
        _ runs: [String: [Event]], heads: [String: UInt64], records: [UUID: [UInt8]] = [:], _ txn: borrowing Transaction, source: String
    ) throws -> (runs: [String: [Event]], revoked: [(origin: String, count: Int, after: UInt64)], founders: [String: [UInt8]]) {
        let signed = isSignedLedger
        var learned: [String: [(from: UInt64, key: [UInt8])]] = [:]
        var revocations: [String: UInt64] = [:]
        var verified: [String: [Event]] = [:]
        var pending = runs.keys.sorted(by: String.bytesPrecede)
        var lastError: [String: LedgerError] = [:]
        var knownRevoked: [String: (count: Int, after: UInt64)] = [:]

        var founders: [String: [UInt8]] = [:]
        func selfEnrolments(_ origin: String, _ run: [Event]) -> [(from: UInt64, key: [UInt8])] {
            var out: [(from: UInt64, key: [UInt8])] = []
            for e in run where e.previousHash != nil {
                if let key = e.signer, isFounder(origin, key) {
                    out.append((1, key))
                    founders[origin] = key
                }
                if !signed, case .deviceEnrolled(let p) = e.payload, p.device == origin, p.from == e.sequence {
                    out.append((p.from, p.publicKey))
                }
            }
            return out
        }

        var progress = true
        while progress && !pending.isEmpty {
            progress = false
            for origin in pending {
                var run = runs[origin]!
                let head = heads[origin] ?? 0
                let stored = try TrustTable.keys(of: origin, txn, layout)
                let keys = stored + (learned[origin] ?? []) + selfEnrolments(origin, run)
                // Events after a revocation known here are left out, not checked.
                if let after = try TrustTable.revokedAfter(origin, txn, layout) {
                    let kept = run.filter { $0.sequence <= after }
                    if kept.count < run.count { knownRevoked[origin] = (run.count - kept.count, after) }
                    run = kept
                }
                do {
                    try checkRun(origin, run, head: head, keys: keys, signed: signed, records: records, txn, source: source)
                } catch let e as KeyNotYetTrusted {
                    // An enrolment in another origin's run may vouch for it: try again after those.
                    lastError[origin] = e.error
                    continue
                }
                verified[origin] = run
                pending.removeAll { $0 == origin }
                progress = true
                for e in run where e.previousHash != nil {
                    if case .deviceEnrolled(let p) = e.payload, p.device != origin { learned[p.device, default: []].append((p.from, p.publicKey)) }
                    if case .deviceRevoked(let p) = e.payload { revocations[p.device] = min(revocations[p.device] ?? .max, p.after) }
                }
            }
        }
        if let origin = pending.first { throw lastError[origin]! }
        var skipped: [(String, Int, UInt64)] = knownRevoked.sorted { String.bytesPrecede($0.key, $1.key) }.map { ($0.key, $0.value.count, $0.value.after) }
        for (origin, after) in revocations {
            guard let run = verified[origin] else { continue }
            let kept = run.filter { $0.sequence <= after }
            if kept.count < run.count {
                skipped.append((origin, run.count - kept.count, after))
                verified[origin] = kept
            }
        }
        return (verified, skipped, founders)
    }

    private func checkRun(
        _ origin: String, _ run: [Event], head: UInt64, keys: [(from: UInt64, key: [UInt8])], signed: Bool,
        records: [UUID: [UInt8]], _ txn: borrowing Transaction, source: String
    ) throws {
        guard let last = run.last else { return }
        var previous = try Self.chainHash(origin, head, txn, layout)
        var chained = false
        for e in run {
            if let h = e.previousHash {
                guard h == previous else {
                    if e.sequence == head + 1 && head > 0 {
                        throw LedgerError(
                            .invalidInput,
                            "\(source): fork: origin \(origin) has two histories: \(origin)/\(e.sequence) there does not follow \(origin)/\(head) here; the first differing sequence is at most \(head)"
                        )
                    }
                    throw LedgerError(
                        .invalidInput, "\(source): \(origin)/\(e.sequence) breaks its chain: its previous hash is not that of \(origin)/\(e.sequence - 1)")
                }
                chained = true
            } else {
                let covering = keys.filter { $0.from <= e.sequence }
                guard !signed, covering.isEmpty else {
                    throw LedgerError(
                        .invalidInput,
                        signed
                            ? "\(source): \(origin)/\(e.sequence) is not signed; every device of this ledger signs its events"
                            : "\(source): \(origin)/\(e.sequence) is not signed, but \(origin) signs its events from sequence \(covering.map(\.from).min()!)")
                }
            }
            // An unsigned record's bytes are what its hash covers: no second encoding.
            if e.signature == nil, let record = records[e.id] { previous = EventChain.hash(record: record) } else { previous = EventChain.hash(e) }
        }
        guard chained else { return }
        guard let signature = last.signature else {
            throw LedgerError(.invalidInput, "\(source): \(origin)/\(last.sequence) ends a run of events without a signature")
        }
        let candidates = keys.filter { $0.from <= last.sequence }
        guard !candidates.isEmpty else {
            throw KeyNotYetTrusted(
                error: LedgerError(
                    .invalidInput, "\(source): origin \(origin) is not enrolled in this ledger (\(origin)/\(last.sequence) cannot be verified)"))
        }
        let message = EventChain.message(ledger: ledgerID, origin: origin, sequence: last.sequence, hash: previous)
        guard let signer = last.signer, candidates.contains(where: { $0.key == signer }) else {
            throw KeyNotYetTrusted(
                error: LedgerError(
                    .invalidInput, "\(source): \(origin)/\(last.sequence) is signed with a key that is not enrolled for \(origin)"))
        }
        guard Ed25519.verify(signature: signature, message: message, publicKey: signer) else {
            throw LedgerError(
                .invalidInput, "\(source): the signature of \(origin)/\(last.sequence) does not verify with the key enrolled for \(origin)")
        }
    }
}

extension LedgerStore {
    /// The key this device signs its appends with: none before it is enrolled (a schema-1
    /// store, or one created for a clone until its source enrols it). Refuses to append when
    /// the device is enrolled but its key is missing, when it was revoked, or when the store
    /// was restored from a backup and has not exchanged events since.
    func signer(_ txn: borrowing Transaction) throws -> SigningKey? {
        if try txn.get(layout.meta, key: MetaKey.restored) != nil {
            throw LedgerError(
                .store,
                "the store at \(path) was restored from a backup and may be behind \(device)'s own history: sync it with another device or the hub first (appending now would fork \(device)); nothing was written"
            )
        }
        if let after = try TrustTable.revokedAfter(device, txn, layout) {
            throw LedgerError(.store, "device \(device) was revoked after its sequence \(after): its new events would be refused; nothing was written")
        }
        let enrolled = try TrustTable.keys(of: device, txn, layout)
        guard !enrolled.isEmpty else {
            if isSignedLedger {
                throw LedgerError(
                    .store,
                    "device \(device) is not enrolled in ledger \(ledgerID.uuidString): create this store with `ledger clone` from an enrolled device; nothing was written"
                )
            }
            return nil
        }
        guard let key = try keys.key(ledger: ledgerID, device: device) else {
            throw LedgerError.signingKeyMissing(device: device, path: path)
        }
        guard enrolled.contains(where: { $0.key == key.publicKey }) else {
            throw LedgerError(.store, "the signing key in \(path) is not the one enrolled for \(device); nothing was written")
        }
        return key
    }

    /// Records the founder's own key in a new store (other stores know it from the ledger id).
    func trustFounder(_ key: [UInt8]) throws(LedgerError) {
        do {
            try env.write { txn in try txn.put(layout.trust, key: TrustTable.keyPrefix(device) + UInt64(1).bigEndianBytes, value: key) }
        } catch {
            throw LedgerError(.store, "cannot record the key of \(device): \(error)")
        }
    }

    /// Appends a `deviceEnrolled` for `device` (this store's own, or a new device a clone
    /// creates), signed by this device.
    @discardableResult
    func enrol(device: String, key: [UInt8], from: UInt64, signingKey: SigningKey? = nil, now: Instant = .systemNow) throws(LedgerError)
        -> AppendResult
    {
        let draft = EventDraft(payload: .deviceEnrolled(DeviceEnrolled(device: device, publicKey: key, from: from)))
        return try append([draft], lines: nil, expectedVersion: nil, now: now, enrolling: true, signingKey: signingKey)[0]
    }
}

extension LedgerStore {
    /// This device's public key, if it has one.
    public func publicKey() throws(LedgerError) -> [UInt8]? { try keys.key(ledger: ledgerID, device: device)?.publicKey }

    /// Enrols another device's public key (32 bytes), signed by this device: the device may then
    /// write under `device` from its first sequence. The pairing step for a device that joined
    /// from a hub (`clone URL`); `clone` from a store does it itself.
    @discardableResult
    public func enrol(device other: String, publicKey: [UInt8], now: Instant) throws(LedgerError) -> AppendResult {
        guard DeviceName.isValid(other) else { throw LedgerError(.invalidInput, "invalid device name \"\(other)\"") }
        guard other != device else { throw LedgerError(.invalidInput, "device \(device) cannot enrol itself") }
        guard publicKey.count == SigningKey.publicKeyBytes else {
            throw LedgerError(.invalidInput, "a device key is 32 bytes (64 hexadecimal digits), got \(publicKey.count)")
        }
        let enrolled = try enrolledDevices()
        if enrolled.contains(where: { $0.device == other }) {
            throw LedgerError(.invalidInput, "device \(other) is already enrolled in this ledger")
        }
        guard enrolled.contains(where: { $0.device == device }) else {
            throw LedgerError(.store, "device \(device) is not enrolled itself, so it cannot vouch for \(other)")
        }
        return try enrol(device: other, key: publicKey, from: 1, now: now)
    }

    /// Revokes another device (lost or retired): its events after the last sequence this store
    /// holds of it are refused by every store that learns of the revocation.
    @discardableResult
    public func revoke(device other: String, now: Instant) throws(LedgerError) -> AppendResult {
        try append([EventDraft(payload: .deviceRevoked(DeviceRevoked(device: other)))], now: now)[0]
    }
}

extension LedgerStore {
    /// In a ledger founded before signing, once the store is on the current schema: gives the
    /// device a key (kept if a previous run made one) and appends its enrolment, from its next
    /// sequence on. Idempotent: a device already enrolled is left alone.
    func startSigning(now: Instant) throws(LedgerError) {
        guard schema == Self.currentSchema, !isSignedLedger else { return }
        guard try !enrolledDevices().contains(where: { $0.device == device }) else { return }
        let key: SigningKey
        if let existing = try keys.key(ledger: ledgerID, device: device) {
            key = existing
        } else {
            key = SigningKey.generate()
            try keys.save(key, ledger: ledgerID, device: device)
        }
        let from = (try originHeads()[device] ?? 0) + 1
        try enrol(device: device, key: key.publicKey, from: from, signingKey: key, now: now)
    }
}
