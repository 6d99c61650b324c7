import Foundation
import LMDB
import Sodium

/// The ledger's trust as the `trust` table holds it: a projection of the log's enrolments and
/// revocations (`TrustFold`), rewritten whole whenever a trust event is written and re-derived
/// from the log by `rebuild` and `verify`, never edited in place.
///
/// Rows: `k` name 0 from → key; `p` name → depth (u8) and the enroller's name; `r` name →
/// revoked after (u64); `c` name → the last sequence of the origin that counts (u64), present
/// when lower than its head would allow (revoked, or signed by a key it no longer holds);
/// `F` → the founder's name and key.
enum TrustTable {
    static func keyPrefix(_ device: String) -> [UInt8] { [UInt8(ascii: "k")] + Array(device.utf8) + [0] }
    static func cutoffKey(_ device: String) -> [UInt8] { [UInt8(ascii: "c")] + Array(device.utf8) }
    static let founderKey = [UInt8(ascii: "F")]

    /// The trust state the table holds.
    static func load(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> TrustState {
        var state = TrustState()
        state.founderless = try founder(txn, layout) == nil
        try txn.scan(layout.trust) { key, value in
            guard let tag = key.first, key.count > 1 else { return true }
            switch tag {
            case UInt8(ascii: "k"):
                guard key.count > 10 else { return true }
                let name = String(decoding: key[1..<(key.count - 9)], as: UTF8.self)
                let from = UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...]))
                state.devices[name, default: TrustState.Device(keys: [], parent: nil, depth: 0)].keys.append(
                    .init(from: from, key: Array(value)))
            case UInt8(ascii: "p"):
                let name = String(decoding: key.dropFirst(), as: UTF8.self)
                state.devices[name, default: TrustState.Device(keys: [], parent: nil, depth: 0)].depth = Int(value.first ?? 0)
                if value.count > 1 { state.devices[name]!.parent = String(decoding: value.dropFirst(), as: UTF8.self) }
            case UInt8(ascii: "r"):
                let name = String(decoding: key.dropFirst(), as: UTF8.self)
                state.devices[name, default: TrustState.Device(keys: [], parent: nil, depth: 0)].revokedAfter = UInt64(
                    bigEndianBytes: value)
            default:
                break
            }
            return true
        }
        for name in state.devices.keys { state.devices[name]!.keys.sort { $0.from < $1.from } }
        return state
    }

    /// Replaces the table's trust rows with `state` and `cutoffs`.
    static func write(_ state: TrustState, cutoffs: [String: UInt64], _ txn: borrowing Transaction, _ layout: StoreLayout) throws {
        let founder = try txn.get(layout.trust, key: founderKey)
        try txn.clear(layout.trust)
        if let founder { try txn.put(layout.trust, key: founderKey, value: founder) }
        for (name, d) in state.devices {
            for k in d.keys { try txn.put(layout.trust, key: keyPrefix(name) + k.from.bigEndianBytes, value: k.key) }
            try txn.put(
                layout.trust, key: [UInt8(ascii: "p")] + Array(name.utf8), value: [UInt8(min(d.depth, 255))] + Array((d.parent ?? "").utf8))
            if let after = d.revokedAfter {
                try txn.put(layout.trust, key: [UInt8(ascii: "r")] + Array(name.utf8), value: after.bigEndianBytes)
            }
        }
        for (name, c) in cutoffs { try txn.put(layout.trust, key: cutoffKey(name), value: c.bigEndianBytes) }
    }

    /// The founder of a ledger founded signed, once this store knows it.
    static func founder(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> (name: String, key: [UInt8])? {
        guard let v = try txn.get(layout.trust, key: founderKey), v.count > 32 else { return nil }
        return (String(decoding: v.dropFirst(32), as: UTF8.self), Array(v.prefix(32)))
    }

    static func recordFounder(_ name: String, _ key: [UInt8], _ txn: borrowing Transaction, _ layout: StoreLayout) throws {
        try txn.put(layout.trust, key: founderKey, value: key + Array(name.utf8))
    }

    /// The keys of `device`, each with the first sequence it signs.
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

    /// For each origin whose later events do not count, the last that does: what every
    /// projection folds and every exchange sends up to.
    static func revocations(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [String: UInt64] {
        var out: [String: UInt64] = [:]
        try txn.scan(layout.trust, from: [UInt8(ascii: "c")]) { key, value in
            guard key.first == UInt8(ascii: "c") else { return false }
            out[String(decoding: key.dropFirst(), as: UTF8.self)] = UInt64(bigEndianBytes: value)
            return true
        }
        return out
    }

    /// The last sequence of `device` that counts, when its later events do not.
    static func revokedAfter(_ device: String, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> UInt64? {
        try StoredProjection.u64(txn, layout.trust, cutoffKey(device))
    }
}

/// A device enrolled in the ledger, as `status` shows it.
public struct EnrolledDevice: Equatable, Sendable {
    /// The device's name.
    public var device: String
    /// The Ed25519 public key it signs with now (32 bytes).
    public var publicKey: [UInt8]
    /// The first sequence of the device its key signs.
    public var from: UInt64
    /// Set when the device was revoked: its events after this sequence are refused.
    public var revokedAfter: UInt64?
    /// The device that enrolled it; nil for the founder (or, in a ledger founded before
    /// signing, a device that enrolled itself).
    public var enrolledBy: String?
    /// `publicKey` in short, for people to compare: four groups of four hex digits
    /// (``EventChain/fingerprint(_:)``).
    public var fingerprint: String { EventChain.fingerprint(publicKey) }
}

/// Events of one origin that an exchange could not verify: they and every later event of
/// their origin wait, and are offered again by the next exchange, until the origin's real
/// events arrive.
public struct WaitingEvents: Equatable, Sendable {
    /// The device the events claim to come from.
    public var origin: String
    /// The first sequence that waits.
    public var sequence: UInt64
    /// How many of the offered events wait.
    public var count: Int
    /// Why the first of them could not be taken, for an app to branch on.
    public var cause: Cause
    /// Why the first of them could not be taken, in a sentence for a person.
    public var reason: String

    /// Why events wait. None of these is an error of the exchange: what can be verified is
    /// taken, and these events wait until a later exchange brings what makes them verifiable
    /// (a missing event, an enrolment) or forever (a fork, a forgery).
    public enum Cause: String, Hashable, Sendable {
        /// The origin has two histories: an event claims a sequence this store holds another
        /// event for (a device restored from an old backup, or a store copied and used twice).
        case fork
        /// Sequences of the origin are missing before them.
        case gap
        /// An event cannot be read, or breaks the rules of its envelope.
        case malformed
        /// An event does not continue its origin's chain: its previous hash, its clock or its id
        /// does not fit, or it differs from the copy held here.
        case brokenChain
        /// A signature does not verify: the events were altered, or forged.
        case badSignature
        /// Events are not signed where the ledger requires signatures.
        case unsigned
        /// The origin, or the key that signed, is not enrolled by the ledger's trust (or events
        /// claim this store's own device): a device writing in another's name.
        case untrustedSigner
        /// A cause this version does not know (from a newer peer).
        case other
    }
    /// One line for people.
    public var description: String {
        count > 1
            ? "\(origin)/\(sequence) and \(count - 1) later event\(count == 2 ? "" : "s") of \(origin) wait: \(reason)"
            : "\(origin)/\(sequence) waits: \(reason)"
    }

    /// Events of `origin` from `sequence` on (`count` of them offered) that wait for `cause`,
    /// described by `reason`.
    package init(origin: String, sequence: UInt64, count: Int, cause: Cause, reason: String) {
        self.origin = origin
        self.sequence = sequence
        self.count = count
        self.cause = cause
        self.reason = reason
    }

    /// The stored form: sequence and count (8 bytes each, big-endian), a zero byte, the cause's
    /// name, a zero byte, and the reason (rows written before causes were kept hold the reason
    /// right after the count: their cause reads as `other`).
    package var storedValue: [UInt8] {
        sequence.bigEndianBytes + UInt64(count).bigEndianBytes + [0] + Array(cause.rawValue.utf8) + [0] + Array(reason.utf8)
    }

    /// Reads the stored form of `origin`'s row; nil when it is too short.
    package init?(origin: String, stored value: some Collection<UInt8>) {
        let bytes = Array(value)
        guard bytes.count >= 16 else { return nil }
        let (sequence, count) = bytes.withUnsafeBytes {
            (
                UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: $0[0..<8])),
                Int(clamping: UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: $0[8..<16])))
            )
        }
        var rest = bytes[16...]
        var cause = Cause.other
        if rest.first == 0, let end = rest.dropFirst().firstIndex(of: 0) {
            cause = Cause(rawValue: String(decoding: rest[(rest.startIndex + 1)..<end], as: UTF8.self)) ?? .other
            rest = rest[(end + 1)...]
        }
        self.init(origin: origin, sequence: sequence, count: count, cause: cause, reason: String(decoding: rest, as: UTF8.self))
    }
}

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

    static func enrolledDevices(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [EnrolledDevice] {
        try TrustTable.load(txn, layout).devices.sorted { String.bytesPrecede($0.key, $1.key) }.compactMap { name, d in
            guard let last = d.keys.last else { return nil }
            return EnrolledDevice(device: name, publicKey: last.key, from: last.from, revokedAfter: d.revokedAfter, enrolledBy: d.parent)
        }
    }

    static func waitingEvents(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [WaitingEvents] {
        var out: [WaitingEvents] = []
        try txn.scan(layout.meta, from: MetaKey.waiting) { key, value in
            guard key.starts(with: MetaKey.waiting),
                let w = WaitingEvents(origin: String(decoding: key.dropFirst(MetaKey.waiting.count), as: UTF8.self), stored: value)
            else { return false }
            out.append(w)
            return true
        }
        return out
    }

    /// The hash of `origin`'s event at `sequence` (the chain's start for 0).
    static func chainHash(_ origin: String, _ sequence: UInt64, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [UInt8] {
        guard sequence > 0 else { return EventChain.genesis }
        guard let p = try txn.get(layout.origins, key: StoreLayout.originKey(origin, sequence)),
            let e = try event(at: UInt64(bigEndianBytes: p), txn, layout)
        else { throw LedgerError.damaged("the origin index lacks \(origin)/\(sequence): the store is damaged") }
        return EventChain.hash(e)
    }

    // MARK: The fold's input from the log

    /// Every trust event of the log with the signature that closes its run, and each origin's
    /// first chained sequence (for a ledger founded before signing).
    func trustInputs(_ txn: borrowing Transaction) throws -> (inputs: [TrustFold.Input], firstChained: [String: UInt64]) {
        var inputs: [TrustFold.Input] = []
        var firstChained: [String: UInt64] = [:]
        var positions: [UInt64] = []
        try txn.scan(layout.deviceEvents) { key, _ in
            guard key.count > 9 else { return true }
            positions.append(UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...])))
            return true
        }
        for p in positions {
            guard let e = try Self.event(at: p, txn, layout), let change = e.trustChange else { continue }
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
                if !first {
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
    func covering(_ e: Event, _ txn: borrowing Transaction) throws -> TrustFold.Signature? {
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
        _ origin: String, from sequence: UInt64, below end: UInt64 = .max, _ txn: borrowing Transaction, _ body: (Event) throws -> Bool
    ) throws {
        let prefix = Array(origin.utf8) + [0]
        try txn.scan(layout.origins, from: StoreLayout.originKey(origin, sequence)) { key, value in
            guard key.count == prefix.count + 8, key.prefix(prefix.count).elementsEqual(prefix) else { return false }
            guard UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[prefix.count...])) < end else { return false }
            guard let e = try Self.event(at: UInt64(bigEndianBytes: value), txn, layout) else { return false }
            return try body(e)
        }
    }

    /// The fold over the log's trust events (and `extra`, events not yet written).
    func foldTrust(_ txn: borrowing Transaction, extra: [TrustFold.Input] = [], firstChainedExtra: [String: UInt64] = [:]) throws
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
    func discoverFounder(_ txn: borrowing Transaction) throws -> (name: String, key: [UInt8])? {
        guard isSignedLedger else { return nil }
        if let f = try TrustTable.founder(txn, layout) { return f }
        var found: (String, [UInt8])?
        try txn.scan(layout.trust, from: [UInt8(ascii: "k")]) { key, value in
            guard key.first == UInt8(ascii: "k"), key.count > 10 else { return false }
            let name = String(decoding: key[1..<(key.count - 9)], as: UTF8.self)
            if isFounder(name, Array(value)) { found = (name, Array(value)) }
            return found == nil
        }
        if found == nil {
            for origin in try Self.originHeads(txn, layout).keys where found == nil {
                try scanOrigin(origin, from: 1, txn) { e in
                    guard let k = e.signer, e.signature != nil else { return true }
                    if isFounder(origin, k) { found = (origin, k) }
                    return false
                }
            }
        }
        if let found { try TrustTable.recordFounder(found.0, found.1, txn, layout) }
        return found
    }

    /// The last sequence of `origin` that counts under `state` (see `TrustState.CutoffWalk`),
    /// walking its stored events; `events[written]`, the origin's last events in sequence order
    /// when the caller holds them in memory, are walked from there instead of read back.
    func cutoff(_ origin: String, _ state: TrustState, _ txn: borrowing Transaction, written: [Int] = [], of events: [Event] = []) throws
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
    func recomputeTrust(_ txn: borrowing Transaction, written: [String: [Int]] = [:], of events: [Event] = []) throws -> Bool {
        let old = try TrustTable.load(txn, layout)
        let oldCutoffs = try TrustTable.revocations(txn, layout)
        let state = try foldTrust(txn)
        let heads = try Self.originHeads(txn, layout)
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
        try TrustTable.write(state, cutoffs: cutoffs, txn, layout)
        return cutoffs.contains { origin, c in (oldCutoffs[origin] ?? .max) > c }
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
                "the store at \(path) was restored from a backup and may be behind \(device)'s own history: exchange events with another device or the hub first (appending now would fork \(device)); nothing was written",
                reason: .restoredFromBackup(device: device))
        }
        let state = try TrustTable.load(txn, layout)
        if let after = state.devices[device]?.revokedAfter {
            throw LedgerError(
                "device \(device) was revoked after its sequence \(after): its new events would be refused; nothing was written",
                reason: .deviceRevoked(device: device, after: after))
        }
        let head = try StoredProjection.u64(txn, layout.originHeads, Array(device.utf8)) ?? 0
        if let cut = try TrustTable.revokedAfter(device, txn, layout), cut < head {
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
            try env.write { txn in
                try TrustTable.recordFounder(device, key, txn, layout)
                try recomputeTrust(txn)
            }
        } catch {
            throw LedgerError(.store, "cannot record the key of \(device): \(error)")
        }
    }

}

extension LedgerSnapshot {
    /// The devices enrolled in the ledger, by name.
    public func enrolledDevices() throws(LedgerError) -> [EnrolledDevice] {
        try run { try LedgerStore.enrolledDevices(txn, layout) }
    }

    /// Events that wait behind one an exchange could not verify, by origin.
    public func waitingEvents() throws(LedgerError) -> [WaitingEvents] {
        try run { try LedgerStore.waitingEvents(txn, layout) }
    }

    /// The trust state the table holds.
    func trustState() throws(LedgerError) -> TrustState {
        try run { try TrustTable.load(txn, layout) }
    }
}

extension LedgerWriter {
    /// Appends a `deviceEnrolled` for `device` (this store's own, or a new device a clone
    /// creates), signed by this device.
    @discardableResult
    func enrol(device: String, key: [UInt8], from: UInt64, signingKey: SigningKey? = nil, now: Instant = .systemNow) throws(LedgerError)
        -> AppendResult
    {
        let draft = EventDraft(payload: .deviceEnrolled(DeviceEnrolled(device: device, publicKey: key, from: from)))
        return try append([draft], lines: nil, expectedVersion: nil, now: now, enrolling: true, signingKey: signingKey)[0]
    }

    /// The trust state the table holds, as this transaction has changed it.
    func trustState() throws(LedgerError) -> TrustState {
        try run("reading \(store.path)") { try TrustTable.load(txn, layout) }
    }

    /// Enrols another device's public key (32 bytes), signed by this device: the device may then
    /// write under `device` from its first sequence, and sits below this one in the enrolment
    /// tree. The pairing step for a device that joined from a hub; `clone` from a store does it
    /// itself. A name the ledger knows already (enrolled, revoked or writing) is refused.
    @discardableResult
    public func enrol(device other: String, publicKey: [UInt8], now: Instant) throws(LedgerError) -> AppendResult {
        guard DeviceName.isValid(other) else { throw LedgerError(.invalidInput, "invalid device name \"\(other)\"") }
        guard other != device else { throw LedgerError(.invalidInput, "device \(device) cannot enrol itself") }
        guard publicKey.count == SigningKey.publicKeyBytes else {
            throw LedgerError(.invalidInput, "a device key is 32 bytes (64 hexadecimal digits), got \(publicKey.count)")
        }
        let state = try trustState()
        if let known = state.devices[other] {
            throw LedgerError(
                .invalidInput,
                known.revokedAfter != nil
                    ? "device \(other) was revoked; a revoked name is never enrolled again: choose another name"
                    : "device \(other) is already enrolled in this ledger")
        }
        guard let me = state.devices[device], me.revokedAfter == nil else {
            throw LedgerError(
                "device \(device) is not enrolled itself, so it cannot vouch for \(other)",
                reason: .signerNotTrusted(device: device))
        }
        return try enrol(device: other, key: publicKey, from: 1, now: now)
    }

    /// Revokes a device below this one in the enrolment tree (lost, stolen or retired): its
    /// events after the last sequence this store holds of it, and those of every device it
    /// enrolled, are refused by every store that learns of the revocation. A device that has
    /// written nothing is revoked from its first event. A revoked name is never enrolled again.
    @discardableResult
    public func revoke(device other: String, now: Instant) throws(LedgerError) -> AppendResult {
        try append([EventDraft(payload: .deviceRevoked(DeviceRevoked(device: other)))], now: now)[0]
    }

    /// Replaces this device's key with a new one: the rotation is signed by the current key,
    /// and the new key signs from the next event on (later calls of this writer included). The
    /// new key is staged in the store's key store before the write commits and made current
    /// once it has; a write that rolls back leaves the current key as it was (the staged key is
    /// discarded when the store next opens).
    @discardableResult
    public func rotateKey(now: Instant) throws(LedgerError) -> AppendResult {
        let state = try trustState()
        guard let me = state.devices[device], me.revokedAfter == nil else {
            throw LedgerError(.store, "device \(device) holds no key to rotate")
        }
        let keys = store.keys
        let stored = effects.rotatedKey == nil ? try keys.key(ledger: store.ledgerID, device: device) : nil
        guard let current = effects.rotatedKey ?? stored else {
            throw LedgerError.signingKeyMissing(device: device, path: store.path)
        }
        // The key store must be able to take the new key: tried with the current one first,
        // so that a store that cannot never writes a rotation it could not follow.
        if effects.rotatedKey == nil { try keys.replace(current, ledger: store.ledgerID, device: device) }
        let next = SigningKey.generate()
        // The new key is durable before the rotation commits: a process that dies after the
        // commit leaves it staged, and the store adopts it when it opens.
        try keys.stage(next, ledger: store.ledgerID, device: device)
        let head = try run("reading \(store.path)") { try LedgerStore.originHeads(txn, layout)[device] ?? 0 }
        let result = try enrol(device: device, key: next.publicKey, from: head + 2, signingKey: effects.rotatedKey, now: now)
        effects.rotatedKey = next
        return result
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
            try env.read { txn in
                let head = try StoredProjection.u64(txn, layout.originHeads, Array(device.utf8)) ?? 0
                return try TrustTable.load(txn, layout).devices[device]?.key(at: head + 1)
            }
        }
        let current = try keys.key(ledger: ledgerID, device: device)
        if let enrolled, current?.publicKey != enrolled, staged.publicKey == enrolled {
            try keys.replace(staged, ledger: ledgerID, device: device)
        } else if current != nil, current?.publicKey == enrolled || enrolled == nil {
            try keys.discardStaged(ledger: ledgerID, device: device)
        }
    }

    /// In a ledger founded before signing, once the store is on the current schema: gives the
    /// device a key (kept if a previous run made one) and appends its enrolment, from its next
    /// sequence on. Idempotent: a device already enrolled is left alone.
    func startSigning(now: Instant) throws(LedgerError) {
        let (schema, enrolled, head) = try reading { s in
            (s.schema, try s.trustState().devices[device] != nil, try s.originHeads()[device] ?? 0)
        }
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
