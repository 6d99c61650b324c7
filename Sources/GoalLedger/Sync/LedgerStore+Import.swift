import Foundation
import LMDB

/// What an import or one direction of a sync did.
public struct ImportResult: Equatable, Sendable {
    /// Events written (missing here before).
    public var imported: Int = 0
    /// Events offered that this store already held.
    public var alreadyPresent: Int = 0
    /// Events of revoked devices, written after their revocation, that were left out.
    public var revoked: [RevokedEvents] = []
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
    /// Events already held are skipped. The whole import is refused, with nothing written, when
    /// any event's envelope is malformed (``Event/checkEnvelope()``), claims this store's own device as its origin without this store
    /// having written it, takes an origin sequence that another event already holds, leaves a gap
    /// in its origin's sequence, or reuses an event id. Business rules are not applied: another
    /// device's events are facts. The clock advances past every imported event.
    ///
    /// `beforeCommit` runs inside the write transaction once every check has passed, last before
    /// the commit: when it throws, nothing is written (a hub commits its side of a sync there).
    @discardableResult
    public func importEvents(
        _ incoming: [Event], from source: String, beforeCommit: (() throws(LedgerError) -> Void)? = nil
    ) throws(LedgerError) -> ImportResult {
        let layout = self.layout
        let device = self.device
        if let newer = incoming.first(where: { Int($0.schema) > schema }) {
            throw LedgerError(
                .store,
                "\(source): event \(newer.id.uuidString) was written under schema \(newer.schema); this store is on schema \(schema): run `ledger migrate` first"
            )
        }
        var revocationCoversHeld = false
        do {
            let result = try env.write { txn in
                try self.checkBeforeWriting(txn, layout)
                var result = ImportResult()
                let heads = try Self.originHeads(txn, layout)
                var byOrigin: [String: [Event]] = [:]
                for e in incoming {
                    do throws(FieldError) {
                        try e.checkEnvelope()
                    } catch {
                        throw LedgerError(
                            .invalidInput,
                            "\(source): event \(e.id.uuidString) (\(e.origin)/\(e.sequence)) is malformed: \(error.field.map { "field \"\($0)\": " } ?? "")\(error.message)"
                        )
                    }
                    byOrigin[e.origin, default: []].append(e)
                }
                var runs: [String: [Event]] = [:]
                var newIDs = Set<UUID>()
                // A device that signs may receive its own later events back (restored from a
                // backup): their signatures prove they are its own.
                let signsOwnEvents = try !TrustTable.keys(of: device, txn, layout).isEmpty
                for (origin, events) in byOrigin.sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
                    var head = heads[origin] ?? 0
                    // An origin's clock rises with its sequence: a device never wrote two events
                    // at one clock reading.
                    var lastClock =
                        try head == 0
                        ? nil
                        : txn.get(layout.origins, key: StoreLayout.originKey(origin, head))
                            .flatMap { p in try Self.event(at: p.withUnsafeBytes { UInt64(bigEndianBytes: $0) }, txn, layout)?.hlc }
                    for e in events.sorted(by: { $0.sequence < $1.sequence }) {
                        if e.sequence <= head {
                            guard let p = try txn.get(layout.origins, key: StoreLayout.originKey(origin, e.sequence)),
                                let held = try Self.event(at: p.withUnsafeBytes { UInt64(bigEndianBytes: $0) }, txn, layout)
                            else { throw LedgerError(.store, "the origin index lacks \(origin)/\(e.sequence); run `ledger verify`") }
                            guard held.id == e.id else {
                                throw LedgerError(
                                    .invalidInput,
                                    "\(source): fork: origin \(origin) has two histories: \(origin)/\(e.sequence) is event \(e.id.uuidString) there but \(held.id.uuidString) here"
                                )
                            }
                            guard held == e else {
                                throw LedgerError(
                                    .invalidInput,
                                    "\(source): event \(e.id.uuidString) (\(origin)/\(e.sequence)) differs from the copy held here")
                            }
                            result.alreadyPresent += 1
                            continue
                        }
                        if origin == device && !signsOwnEvents {
                            throw LedgerError(
                                .invalidInput,
                                "\(source): event \(e.id.uuidString) claims to come from this store's device \(device), which never wrote sequence \(e.sequence)"
                            )
                        }
                        guard e.sequence == head + 1 else {
                            throw LedgerError(
                                .invalidInput,
                                "\(source): origin \(origin) jumps from sequence \(head) to \(e.sequence): a gap (events \(head + 1)…\(e.sequence - 1) are missing)"
                            )
                        }
                        guard try txn.get(layout.eventIds, key: e.id.bytes) == nil, newIDs.insert(e.id).inserted else {
                            throw LedgerError(.invalidInput, "\(source): event id \(e.id.uuidString) is already used by another event")
                        }
                        if let lastClock, e.hlc <= lastClock {
                            throw LedgerError(
                                .invalidInput,
                                "\(source): \(origin)/\(e.sequence) has clock \(e.hlc), not after its predecessor's \(lastClock)")
                        }
                        lastClock = e.hlc
                        head = e.sequence
                        runs[origin, default: []].append(e)
                    }
                }
                // Each new event is encoded once: its record serves the chain check and the log.
                var records: [UUID: [UInt8]] = [:]
                for run in runs.values { for e in run { records[e.id] = EventCodec.encode(e) } }
                let checked = try self.verifyChains(runs, heads: heads, records: records, txn, source: source)
                result.revoked = checked.revoked.map { RevokedEvents(origin: $0.origin, count: $0.count, after: $0.after) }
                for (origin, key) in checked.founders {
                    try txn.put(layout.trust, key: TrustTable.keyPrefix(origin) + UInt64(1).bigEndianBytes, value: key)
                }
                var accepted: [Event] = []
                var newHeads: [String: UInt64] = [:]
                for (origin, run) in checked.runs {
                    accepted += run
                    if let last = run.last { newHeads[origin] = last.sequence }
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
                let tables = try StoredProjection.active(txn, layout)
                var clock = HLC(rawValue: try StoredProjection.u64(txn, layout.meta, MetaKey.hlc) ?? 0)
                var batch = StoredProjection.Batch(tables: tables, layout: layout)
                for e in accepted {
                    position += 1
                    try Self.index(e, at: position, record: records[e.id], txn, layout)
                    try batch.apply(e, at: position, txn)
                    if !e.isFoldable { result.setAside += 1 }
                    if e.hlc > clock { clock = e.hlc }
                }
                try batch.flush(txn)
                for (origin, head) in newHeads where head != (heads[origin] ?? 0) {
                    try txn.put(layout.originHeads, key: Array(origin.utf8), value: head.bigEndianBytes)
                }
                try txn.put(layout.meta, key: MetaKey.hlc, value: clock.rawValue.bigEndianBytes)
                try txn.put(layout.meta, key: MetaKey.projectionCheckpoint, value: position.bigEndianBytes)
                result.imported = accepted.count
                // A revocation that covers events this store already held: they no longer count,
                // so the projection is rebuilt once this transaction is in.
                for e in accepted {
                    if case .deviceRevoked(let p) = e.payload, (heads[p.device] ?? 0) > p.after { revocationCoversHeld = true }
                }
                try beforeCommit?()
                return result
            }
            if revocationCoversHeld { try rebuild() }
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
