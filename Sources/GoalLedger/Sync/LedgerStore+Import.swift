import Foundation
import LMDB
import Sodium

/// What an import or one direction of a sync did.
public struct ImportResult: Equatable, Sendable {
    /// Events written (missing here before).
    public var imported: Int = 0
    /// Events offered that this store already held.
    public var alreadyPresent: Int = 0
    /// Events of revoked devices, written after their revocation, that were left out.
    public var revoked: [RevokedEvents] = []
    /// Events that could not be verified, by origin: the first of them and every later one of
    /// its origin wait (see ``LedgerStore/importEvents(_:from:beforeCommit:)``).
    public var waiting: [WaitingEvents] = []
    /// Events written that fail the gate (by a store written before every event passed it):
    /// kept in the log, in their origins' chains, and set aside by every fold
    /// (``SetAsideEvent``).
    public var setAside = 0

    /// A result with these counts and no revoked events.
    public init(imported: Int = 0, alreadyPresent: Int = 0) {
        self.imported = imported
        self.alreadyPresent = alreadyPresent
    }

}

/// Events of one revoked device that an import left out: `count` of them, after sequence `after`.
public struct RevokedEvents: Equatable, Sendable {
    /// The revoked device.
    public var origin: String
    /// How many of its events were left out.
    public var count: Int
    /// The last sequence of the device that is kept: its events after it are refused.
    public var after: UInt64
}

extension LedgerStore {
    /// Imports events written by other stores of the same ledger, in one transaction.
    ///
    /// Events already held are skipped. Each origin's new events are taken in sequence order
    /// for as long as they can be verified: they continue the origin's sequence and hash chain
    /// without a gap or a fork, every signature present verifies, and the signature closing
    /// each run was made by the key the ledger's trust (<doc:TrustAndTheThreatModel>) gives the origin at that
    /// sequence. The first event that fails, and every later event of its origin, wait: they
    /// are reported in ``ImportResult/waiting`` and named by ``waitingEvents()``, nothing of
    /// them is written, and the rest of the import goes on. Events of a revoked device after its
    /// revocation are left out (``ImportResult/revoked``). Business rules are not applied:
    /// another device's events are facts; one that fails the gate is kept and set aside
    /// (``SetAsideEvent``). The clock advances past every imported event.
    ///
    /// `beforeCommit` runs inside the write transaction once every check has passed, last before
    /// the commit: when it throws, nothing is written (a hub commits its side of a sync there).
    @discardableResult
    public func importEvents(
        _ incoming: [Event], from source: String, beforeCommit: (() throws(LedgerError) -> Void)? = nil
    ) throws(LedgerError) -> ImportResult {
        try importEvents(incoming, from: source, unreadable: [], beforeCommit: beforeCommit)
    }

    /// `importEvents`, where the transport could not read some records: `unreadable` names the
    /// first of each origin, which waits with every later one of its origin.
    @discardableResult
    package func importEvents(
        _ incoming: [Event], from source: String, unreadable: [WaitingEvents], beforeCommit: (() throws(LedgerError) -> Void)? = nil
    ) throws(LedgerError) -> ImportResult {
        let layout = self.layout
        let device = self.device
        if let newer = incoming.first(where: { Int($0.schema) > schema }) {
            throw LedgerError(
                .store,
                "\(source): event \(newer.id.uuidString) was written under schema \(newer.schema); this store is on schema \(schema): run `ledger migrate` first"
            )
        }
        var rebuildAfter = false
        do {
            let result = try env.write { txn in
                try self.checkBeforeWriting(txn, layout)
                var result = ImportResult()
                let heads = try Self.originHeads(txn, layout)
                var waiting: [String: WaitingEvents] = [:]
                var byOrigin: [String: [Event]] = [:]
                for w in unreadable { waiting[w.origin] = w }
                for e in incoming {
                    // What follows an unreadable record of its origin waits behind it.
                    if let w = waiting[e.origin], e.sequence >= w.sequence { continue }
                    byOrigin[e.origin, default: []].append(e)
                }
                // A device that signs may receive its own later events back (restored from a
                // backup): their signatures prove they are its own.
                let signsOwnEvents = try !TrustTable.keys(of: device, txn, layout).isEmpty
                var ids = Set<UUID>()
                var records: [UUID: [UInt8]] = [:]
                var prefixes: [String: [Event]] = [:]

                // 1. Each origin's run: envelope, sequence, chain and signatures.
                for (origin, all) in byOrigin.sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
                    let events = all.sorted { $0.sequence < $1.sequence }
                    var head = heads[origin] ?? 0
                    var previous: [UInt8]?
                    var lastClock: HLC?
                    var prefix: [Event] = []
                    var stop: (sequence: UInt64, reason: String)?
                    for e in events {
                        do throws(FieldError) {
                            try e.checkEnvelope()
                        } catch {
                            stop = (e.sequence, "\(origin)/\(e.sequence) (event \(e.id.uuidString)) is malformed: \(SetAsideEvent.reason(error))")
                            break
                        }
                        if e.sequence <= head {
                            if let last = prefix.last, last.sequence == e.sequence {
                                if last == e { continue }
                                stop = (e.sequence, "fork: two events claim \(origin)/\(e.sequence) in what was offered")
                                break
                            }
                            guard let p = try txn.get(layout.origins, key: StoreLayout.originKey(origin, e.sequence)),
                                let held = try Self.event(at: p.withUnsafeBytes { UInt64(bigEndianBytes: $0) }, txn, layout)
                            else { throw LedgerError(.store, "the origin index lacks \(origin)/\(e.sequence): the store is damaged") }
                            guard held.id == e.id else {
                                stop = (e.sequence, "fork: origin \(origin) has two histories: \(origin)/\(e.sequence) is event \(e.id.uuidString) there but \(held.id.uuidString) here")
                                break
                            }
                            guard held == e else {
                                stop = (e.sequence, "event \(e.id.uuidString) (\(origin)/\(e.sequence)) differs from the copy held here")
                                break
                            }
                            result.alreadyPresent += 1
                            continue
                        }
                        if origin == device && !signsOwnEvents {
                            stop = (e.sequence, "event \(e.id.uuidString) claims to come from this store's device \(device), which never wrote sequence \(e.sequence)")
                            break
                        }
                        guard e.sequence == head + 1 else {
                            stop = (head + 1, "origin \(origin) jumps from sequence \(head) to \(e.sequence): a gap (events \(head + 1)…\(e.sequence - 1) are missing)")
                            break
                        }
                        guard try txn.get(layout.eventIds, key: e.id.bytes) == nil, !ids.contains(e.id) else {
                            stop = (e.sequence, "event id \(e.id.uuidString) of \(origin)/\(e.sequence) is already used by another event")
                            break
                        }
                        if lastClock == nil, head > 0 {
                            lastClock = try txn.get(layout.origins, key: StoreLayout.originKey(origin, head))
                                .flatMap { p in try Self.event(at: p.withUnsafeBytes { UInt64(bigEndianBytes: $0) }, txn, layout)?.hlc }
                        }
                        if let lastClock, e.hlc <= lastClock {
                            stop = (e.sequence, "\(origin)/\(e.sequence) has clock \(e.hlc), not after its predecessor's \(lastClock)")
                            break
                        }
                        if let h = e.previousHash {
                            if previous == nil { previous = try Self.chainHash(origin, head, txn, layout) }
                            guard h == previous else {
                                stop = (
                                    e.sequence,
                                    head > 0 && prefix.isEmpty
                                        ? "fork: origin \(origin) has two histories: \(origin)/\(e.sequence) there does not follow \(origin)/\(head) here; the first differing sequence is at most \(head)"
                                        : "\(origin)/\(e.sequence) breaks its chain: its previous hash is not that of \(origin)/\(e.sequence - 1)"
                                )
                                break
                            }
                        } else if isSignedLedger {
                            stop = (e.sequence, "\(origin)/\(e.sequence) is not signed; every device of this ledger signs its events")
                            break
                        }
                        let record = EventCodec.encode(e)
                        records[e.id] = record
                        // An unsigned record's bytes are what its hash covers: no second encoding.
                        previous = e.signature == nil ? EventChain.hash(record: record) : EventChain.hash(e)
                        if let signature = e.signature {
                            let message = EventChain.message(ledger: ledgerID, origin: origin, sequence: e.sequence, hash: previous!)
                            guard let signer = e.signer, Ed25519.verify(signature: signature, message: message, publicKey: signer) else {
                                // The run this signature closes cannot be vouched for.
                                let runStart = (prefix.lastIndex { $0.signature != nil || $0.previousHash == nil }.map { $0 + 1 }) ?? 0
                                let first = runStart < prefix.count ? prefix[runStart].sequence : e.sequence
                                prefix.removeSubrange(runStart...)
                                stop = (first, "the signature of \(origin)/\(e.sequence) does not verify")
                                break
                            }
                        }
                        ids.insert(e.id)
                        lastClock = e.hlc
                        head = e.sequence
                        prefix.append(e)
                    }
                    // A chained run must end with a signature, which vouches for it.
                    let closed = prefix.lastIndex(where: { $0.signature != nil || $0.previousHash == nil }).map { $0 + 1 } ?? 0
                    if closed < prefix.count {
                        let first = prefix[closed].sequence
                        prefix.removeSubrange(closed...)
                        if let s = stop {
                            // What stopped the run stops the events it would have vouched for.
                            stop = (min(s.sequence, first), s.reason)
                        } else if let unread = waiting[origin] {
                            // The record that could not be read held the signature of this run.
                            stop = (first, unread.reason)
                        } else {
                            stop = (first, "\(origin)/\(first)… ends a run of events without a signature")
                        }
                    }
                    if let stop, waiting[origin] == nil || waiting[origin]!.sequence > stop.sequence {
                        let count = events.filter { $0.sequence >= stop.sequence }.count + (waiting[origin]?.count ?? 0)
                        waiting[origin] = WaitingEvents(origin: origin, sequence: stop.sequence, count: max(count, 1), reason: stop.reason)
                    }
                    if !prefix.isEmpty { prefixes[origin] = prefix }
                }

                // 2. Who may sign for whom: the fold over the log and what was offered, until
                //    every origin's run is one the fold vouches for.
                if isSignedLedger, try discoverFounder(txn) == nil {
                    for e in prefixes.values.joined() {
                        if let key = e.signer, e.signature != nil, isFounder(e.origin, key) {
                            try TrustTable.recordFounder(e.origin, key, txn, layout)
                            break
                        }
                    }
                }
                let stored = try trustInputs(txn)
                var fold = TrustFold()
                fold.founder = try TrustTable.founder(txn, layout)
                var revokedReport: [String: RevokedEvents] = [:]
                var heldUnchained: [String: Bool] = [:]
                while true {
                    var extra: [TrustFold.Input] = []
                    var firstChained = stored.firstChained
                    for (origin, prefix) in prefixes {
                        var closing: TrustFold.Signature?
                        for e in prefix.reversed() {
                            if let s = e.signer, e.signature != nil { closing = TrustFold.Signature(sequence: e.sequence, signer: s) }
                            if e.previousHash == nil { closing = nil }
                            if let change = e.payload.trustChange {
                                extra.append(TrustFold.Input(origin: origin, sequence: e.sequence, key: e.key, covering: closing, change: change))
                            }
                        }
                        // The first chained event offered is the origin's first only if what is
                        // held of it is unchained (chains never stop once begun).
                        if firstChained[origin] == nil, !isSignedLedger, let first = prefix.first(where: { $0.previousHash != nil }),
                            try heldUnchained[origin] ?? {
                                let head = heads[origin] ?? 0
                                let unchained = try head == 0 || txn.get(layout.origins, key: StoreLayout.originKey(origin, head))
                                    .flatMap { p in try Self.event(at: p.withUnsafeBytes { UInt64(bigEndianBytes: $0) }, txn, layout) }?
                                    .previousHash == nil
                                heldUnchained[origin] = unchained
                                return unchained
                            }()
                        {
                            firstChained[origin] = first.sequence
                        }
                    }
                    fold.firstChained = firstChained
                    let state: TrustState
                    if isSignedLedger && fold.founder == nil {
                        state = TrustState()
                    } else {
                        state = fold.fold(stored.inputs + extra)
                    }
                    var shrunk = false
                    for (origin, prefix) in prefixes {
                        var closing: [Int: TrustFold.Signature] = [:]
                        var next: TrustFold.Signature?
                        for (i, e) in prefix.enumerated().reversed() {
                            if let s = e.signer, e.signature != nil { next = TrustFold.Signature(sequence: e.sequence, signer: s) }
                            if e.previousHash == nil { next = nil }
                            if let next { closing[i] = next }
                        }
                        var keep = prefix.count
                        for (i, e) in prefix.enumerated() {
                            if let after = state.devices[origin]?.revokedAfter, e.sequence > after {
                                revokedReport[origin] = RevokedEvents(origin: origin, count: prefix.count - i, after: after)
                                keep = i
                                break
                            }
                            let authentic: Bool
                            if let c = closing[i] {
                                authentic = state.key(origin, at: c.sequence) == c.signer
                            } else {
                                authentic = !isSignedLedger && state.key(origin, at: e.sequence) == nil
                            }
                            if !authentic {
                                let reason: String
                                if state.devices[origin] == nil {
                                    reason = "origin \(origin) is not enrolled in this ledger (\(origin)/\(closing[i]?.sequence ?? e.sequence) cannot be verified)"
                                } else if closing[i] == nil {
                                    reason = "\(origin)/\(e.sequence) is not signed, but \(origin) signs its events from sequence \(state.devices[origin]!.keys.first!.from)"
                                } else {
                                    reason = "\(origin)/\(closing[i]!.sequence) is signed with a key that is not enrolled for \(origin)"
                                }
                                let all = byOrigin[origin]!.filter { $0.sequence >= e.sequence }.count
                                waiting[origin] = WaitingEvents(origin: origin, sequence: e.sequence, count: all, reason: reason)
                                keep = i
                                break
                            }
                        }
                        if keep < prefix.count {
                            shrunk = true
                            if keep == 0 { prefixes[origin] = nil } else { prefixes[origin] = Array(prefix.prefix(keep)) }
                        }
                    }
                    if !shrunk { break }
                }
                result.revoked = revokedReport.values.sorted { String.bytesPrecede($0.origin, $1.origin) }
                result.waiting = waiting.values.sorted { String.bytesPrecede($0.origin, $1.origin) }

                // 3. The accepted events.
                var accepted: [Event] = []
                var newHeads: [String: UInt64] = [:]
                for (origin, run) in prefixes {
                    accepted += run
                    if let last = run.last { newHeads[origin] = last.sequence }
                }
                // What waits is named until its origin moves past it.
                for origin in Set(byOrigin.keys).union(waiting.keys) where DeviceName.isValid(origin) {
                    let key = MetaKey.waiting + Array(origin.utf8)
                    if let w = waiting[origin] {
                        try txn.put(layout.meta, key: key, value: w.sequence.bigEndianBytes + UInt64(w.count).bigEndianBytes + Array(w.reason.utf8))
                    } else {
                        try txn.delete(layout.meta, key: key)
                    }
                }
                // Any completed exchange ends a restored store's wait: it has what the peer had.
                try txn.delete(layout.meta, key: MetaKey.restored)
                guard !accepted.isEmpty else {
                    try beforeCommit?()
                    return result
                }
                // New events take local positions in canonical order.
                accepted.sort { $0.key < $1.key }
                var position = try Self.lastPosition(txn, layout)
                let firstNew = position + 1
                for e in accepted {
                    position += 1
                    try Self.index(e, at: position, record: records[e.id], txn, layout)
                }
                for (origin, head) in newHeads where head != (heads[origin] ?? 0) {
                    try txn.put(layout.originHeads, key: Array(origin.utf8), value: head.bigEndianBytes)
                }
                // Trust first, so that the fold below counts what the new trust says.
                if accepted.contains(where: { $0.payload.trustChange != nil }) || heads.isEmpty {
                    rebuildAfter = try recomputeTrust(txn)
                }
                let tables = try StoredProjection.active(txn, layout)
                var clock = HLC(rawValue: try StoredProjection.u64(txn, layout.meta, MetaKey.hlc) ?? 0)
                var batch = StoredProjection.Batch(tables: tables, layout: layout)
                position = firstNew - 1
                for e in accepted {
                    position += 1
                    try batch.apply(e, at: position, txn)
                    if !e.isFoldable { result.setAside += 1 }
                    if e.hlc > clock { clock = e.hlc }
                }
                try batch.flush(txn)
                try txn.put(layout.meta, key: MetaKey.hlc, value: clock.rawValue.bigEndianBytes)
                try txn.put(layout.meta, key: MetaKey.projectionCheckpoint, value: position.bigEndianBytes)
                result.imported = accepted.count
                try beforeCommit?()
                return result
            }
            if rebuildAfter { try rebuild() }
            return result
        } catch let e as LedgerError {
            throw e
        } catch {
            throw LedgerError(.store, "importing into \(path) failed: \(error)")
        }
    }

    /// The events this store holds that a store with origin heads `heads` lacks, in origin order.
    public func events(missingFrom heads: [String: UInt64]) throws(LedgerError) -> [Event] {
        var out: [Event] = []
        try visitRecords(missingFrom: heads, overlap: true) { (e, _) throws(LedgerError) in out.append(e) }
        return out
    }
}
