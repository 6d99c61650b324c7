import Foundation
import LMDB

/// Reading and updating the stored projection inside a transaction. Append, import and rebuild
/// all update it through `Batch`, so there is one way an event reaches the stored state.
enum StoredProjection {
    /// Bumped whenever the fold or the stored form changes; stores built by an older version
    /// are rebuilt before they are read.
    /// 3: tags folded in NFC, compared by bytes; 4: the pending tables; 5: `entries` (by goal and
    /// day, carrying what the views read) replaces the day index `entryDays`; 6: entry values
    /// compact (the time as a difference from the clock, whole amounts as varints); 7: events
    /// that fail the gate are set aside (`setAside`), never folded; 8: the digest's parts
    /// (`digest`), kept with the projection; 9: per-day summaries and runs of completed periods
    /// (`days`, `periods`, `runs`), so that a view reads what it shows; 10: a history write's row
    /// in `entries` holds its event's canonical key, so the one in effect is found without
    /// decoding the others; 11: amounts exact (millionths in every stored row, the digest's
    /// amounts in plain decimal); 12: the gate checks a time zone's spelling, not this system's
    /// time zone database, so a `deviceConfigured` that an older store set aside for a zone its
    /// system did not know is folded; 13: a reminder's weekday (goal headers, reminder facts and
    /// pending rows), and a goal header keeps its creation's wall time and its position
    /// register (`goalMoved`); 14: the digest's version 2 (an entry hashed in a binary form).
    static let version: UInt64 = 14

    struct Status: Equatable, Sendable {
        var generation: Int
        var version: UInt64
        var checkpoint: UInt64
    }

    static func u64(_ txn: borrowing Transaction, _ db: Database, _ key: [UInt8]) throws -> UInt64? {
        try txn.withValue(db, key: key) { UInt64(bigEndianBytes: $0) }
    }

    static func status(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> Status {
        Status(
            generation: Int(try u64(txn, layout.meta, MetaKey.projectionActive) ?? 0) & 1,
            version: try u64(txn, layout.meta, MetaKey.projectionVersion) ?? 0,
            checkpoint: try u64(txn, layout.meta, MetaKey.projectionCheckpoint) ?? 0)
    }

    static func active(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> ProjectionTables {
        layout.projections[try status(txn, layout).generation]
    }

    // MARK: Reading

    static func header(_ goal: UUID, _ txn: borrowing Transaction, _ t: ProjectionTables) throws -> GoalState? {
        try txn.withValue(t.goals, key: goal.bytes) { bytes in
            try decoded { () throws(RecordDecodingError) in try ProjectionCodec.decodeHeader(bytes, id: goal) }
        }
    }

    /// A goal with its entries and version: the header, then the goal's events through the
    /// log's goal index (each `progressRecorded` is an entry), then the removals.
    static func goal(
        _ goal: UUID, _ txn: borrowing Transaction, _ t: ProjectionTables, _ layout: StoreLayout, rule: HistoryRule,
        revoked: [String: UInt64]? = nil
    ) throws
        -> GoalState?
    {
        guard let state = try header(goal, txn, t) else { return nil }
        return try withEntries(state, txn, t, layout, rule: rule, revoked: revoked)
    }

    /// `header` completed with the goal's entries, history writes, removals and version.
    static func withEntries(
        _ header: GoalState, _ txn: borrowing Transaction, _ t: ProjectionTables, _ layout: StoreLayout,
        rule: HistoryRule, revoked: [String: UInt64]? = nil, historyInEffectOnly: Bool = false
    ) throws -> GoalState {
        var state = header
        let goal = header.id
        state.historyRule = rule
        // Read once by callers that load many goals; a single goal reads it here.
        let revoked = try revoked ?? TrustTable.revocations(txn, layout)
        // A revoked device's events after its revocation do not count (see GoalProjection):
        // they are not in `entries`, and the version leaves them out.
        if revoked.isEmpty {
            state.version = try txn.duplicateCount(layout.goalEvents, key: goal.bytes)
        } else {
            state.version = 0
            for p in try LedgerStore.positions(ofGoal: goal, txn, layout) {
                guard let e = try LedgerStore.event(at: p, txn, layout) else {
                    throw LedgerError.damaged("the goal index names position \(p), which holds no event", position: p)
                }
                if let after = revoked[e.origin], e.sequence > after { continue }
                state.version += 1
            }
        }
        var historyWrites: [UUID] = []
        // Under the old rule only the last write in canonical order counts: with
        // `historyInEffectOnly`, the others are left unread (their rows hold their keys).
        let lastOnly = historyInEffectOnly && rule == .lastWriteWins
        var last: (key: CanonicalKey, id: UUID)?
        state.recordedEntries.reserveCapacity(state.version)
        let prefix = goal.bytes
        try txn.scan(t.entries, from: prefix) { k, v in
            guard k.count == 36, k.prefix(16).elementsEqual(prefix) else { return false }
            if let entry = try decoded({ () throws(RecordDecodingError) in try PendingTable.entry(key: k, value: v) }) {
                state.recordedEntries[entry.id] = entry
            } else {
                let id = uuid(UnsafeRawBufferPointer(rebasing: k[20...]))
                guard lastOnly else {
                    historyWrites.append(id)
                    return true
                }
                let key = try decoded({ () throws(RecordDecodingError) in try PendingTable.historyKey(v) })
                if let l = last, l.key != key ? key < l.key : !UUID.precedes(l.id, id) { return true }
                last = (key, id)
            }
            return true
        }
        if let last { historyWrites = [last.id] }
        for id in historyWrites {
            guard let e = try LedgerStore.event(id: id, txn, layout) else {
                throw LedgerError.damaged("the entries table names event \(id.uuidString), which the log does not hold")
            }
            state.record(e)
        }
        try txn.scan(t.removed, from: prefix) { key, _ in
            guard key.count == 32, key.prefix(16).elementsEqual(prefix) else { return false }
            state.removedEntries.insert(uuid(UnsafeRawBufferPointer(rebasing: key[16...])))
            return true
        }
        return state
    }

    /// The entry `entry` of `goal`, if that id is a `progressRecorded` of that goal.
    static func entry(_ entry: UUID, of goal: UUID, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> ProgressEntry? {
        guard let e = try LedgerStore.event(id: entry, txn, layout), case .progressRecorded(let r) = e.payload, r.goal == goal
        else { return nil }
        return ProgressEntry(e, r)
    }

    /// The number of events about `goal` in the store (its stream version).
    static func version(of goal: UUID, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> Int {
        try LedgerStore.positions(ofGoal: goal, txn, layout).count
    }

    static func device(_ name: String, _ txn: borrowing Transaction, _ t: ProjectionTables) throws -> DeviceState {
        try txn.withValue(t.devices, key: Array(name.utf8)) { bytes in
            try decoded { () throws(RecordDecodingError) in try ProjectionCodec.decodeDevice(bytes, name: name) }
        } ?? DeviceState(name: name)
    }

    /// The digest's parts kept for `goal` (none: no row).
    static func goalDigest(_ goal: UUID, _ txn: borrowing Transaction, _ t: ProjectionTables) throws -> GoalDigest {
        try txn.withValue(t.digest, key: goal.bytes) { bytes in
            guard let d = GoalDigest(bytes: bytes) else {
                throw LedgerError("a projection row is damaged: the digest row of goal \(goal.uuidString) has \(bytes.count) bytes", reason: .projectionDamaged)
            }
            return d
        } ?? .none
    }

    /// The digest's totals kept for the whole ledger (none: no goal is created).
    static func ledgerDigest(_ txn: borrowing Transaction, _ t: ProjectionTables) throws -> LedgerDigest {
        try txn.withValue(t.digest, key: ProjectionTables.ledgerKey) { bytes in
            guard let d = LedgerDigest(bytes: bytes) else {
                throw LedgerError("a projection row is damaged: the ledger's digest row has \(bytes.count) bytes", reason: .projectionDamaged)
            }
            return d
        } ?? LedgerDigest()
    }

    /// The whole projection, as `replay` would compute it.
    static func load(_ txn: borrowing Transaction, _ layout: StoreLayout, rule: HistoryRule) throws -> GoalProjection {
        let t = try active(txn, layout)
        var projection = GoalProjection(historyRule: rule)
        projection.revokedAfter = try TrustTable.revocations(txn, layout)
        try forEachGoal(txn, layout, rule: rule, revoked: projection.revokedAfter) { projection.insert($0) }
        try txn.scan(t.devices) { key, value in
            let name = String(decoding: key, as: UTF8.self)
            projection.insert(try decoded { () throws(RecordDecodingError) in try ProjectionCodec.decodeDevice(value, name: name) })
            return true
        }
        projection.position = try status(txn, layout).checkpoint
        return projection
    }

    /// Every goal of the active generation with its entries, in id order, one at a time.
    static func forEachGoal(
        _ txn: borrowing Transaction, _ layout: StoreLayout, rule: HistoryRule, revoked: [String: UInt64],
        _ body: (GoalState) throws -> Void
    ) throws {
        let t = try active(txn, layout)
        var ids: [UUID] = []
        try txn.scan(t.goals) { key, _ in
            ids.append(uuid(key))
            return true
        }
        for id in ids {
            if let g = try goal(id, txn, t, layout, rule: rule, revoked: revoked) { try body(g) }
        }
    }

    /// Every row a fresh replay produces, in the stored form, for `verify`; the digest's rows
    /// are computed from scratch (`ProjectionDigest`).
    static func rows(of p: GoalProjection) throws(LedgerError) -> (
        goals: [[UInt8]: [UInt8]], removed: Set<[UInt8]>, devices: [[UInt8]: [UInt8]], digest: [[UInt8]: [UInt8]]
    ) {
        var goals: [[UInt8]: [UInt8]] = [:]
        var removed = Set<[UInt8]>()
        var devices: [[UInt8]: [UInt8]] = [:]
        var digest: [[UInt8]: [UInt8]] = [:]
        var totals = LedgerDigest()
        for (id, g) in p.goals {
            if g.hasHeader { goals[id.bytes] = ProjectionCodec.encodeHeader(g) }
            for eid in g.removedEntries { removed.insert(id.bytes + eid.bytes) }
            let parts = try ProjectionDigest.parts(of: g)
            if !parts.isEmpty { digest[id.bytes] = parts.bytes }
            totals.replace(nil, with: parts.goalHash)
        }
        if totals.count > 0 { digest[ProjectionTables.ledgerKey] = totals.bytes }
        for (name, d) in p.devices { devices[Array(name.utf8)] = ProjectionCodec.encodeDevice(d) }
        return (goals, removed, devices, digest)
    }

    static func uuid(_ b: UnsafeRawBufferPointer) -> UUID { UUID(uuid: b.loadUnaligned(as: uuid_t.self)) }

    static func decoded<T>(_ body: () throws(RecordDecodingError) -> T) throws -> T {
        do throws(RecordDecodingError) {
            return try body()
        } catch {
            throw LedgerError("a projection row is damaged: \(error.reason)", reason: .projectionDamaged)
        }
    }
}
