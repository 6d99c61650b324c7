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

    static func u64(_ txn: borrowing StoreTransaction, _ db: Database, _ key: [UInt8]) throws -> UInt64? {
        try txn.withValue(db, key: key) { UInt64(bigEndianBytes: $0) }
    }

    // MARK: Reading

    static func header(_ goal: UUID, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> GoalState? {
        try txn.withValue(t.goals, key: goal.bytes) { bytes in
            try decoded { () throws(RecordDecodingError) in try ProjectionCodec.decodeHeader(bytes, id: goal) }
        }
    }

    static func device(_ name: String, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> DeviceState {
        try txn.withValue(t.devices, key: Array(name.utf8)) { bytes in
            try decoded { () throws(RecordDecodingError) in try ProjectionCodec.decodeDevice(bytes, name: name) }
        } ?? DeviceState(name: name)
    }

    /// The digest's parts kept for `goal` (none: no row).
    static func goalDigest(_ goal: UUID, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> GoalDigest {
        try txn.withValue(t.digest, key: goal.bytes) { bytes in
            guard let d = GoalDigest(bytes: bytes) else {
                throw LedgerError("a projection row is damaged: the digest row of goal \(goal.uuidString) has \(bytes.count) bytes", reason: .projectionDamaged)
            }
            return d
        } ?? .none
    }

    /// The digest's totals kept for the whole ledger (none: no goal is created).
    static func ledgerDigest(_ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> LedgerDigest {
        try txn.withValue(t.digest, key: ProjectionTables.ledgerKey) { bytes in
            guard let d = LedgerDigest(bytes: bytes) else {
                throw LedgerError("a projection row is damaged: the ledger's digest row has \(bytes.count) bytes", reason: .projectionDamaged)
            }
            return d
        } ?? LedgerDigest()
    }

    // MARK: Writing

    /// Folds many events in one transaction: goal headers and device rows are read once, kept
    /// in memory while the batch runs, and written once at the end; entry rows are written as
    /// they come.
    struct Batch {
        let tables: ProjectionTables
        let layout: StoreLayout
        /// What the pending tables must follow, applied by `flush`.
        private var pendingChanges = PendingTable.Changes()
        private(set) var headers: [UUID: GoalState] = [:]
        private(set) var devices: [String: DeviceState] = [:]
        /// The goals' days whose entries this batch changed other than by adding live ones: a
        /// removal (`flushViews` computes them again from their entries).
        var touchedDays = Set<GoalDay>()
        /// What this batch's live new entries add to their days (`flushViews` adds it to each
        /// day's row, unless the day is in `touchedDays`): a summary is a sum, counts and the
        /// latest completion, so additions need no rescan of the day.
        var addedToDays: [GoalDay: DaySummary] = [:]
        /// Status-only states read for recording progress (a header loaded later supersedes them;
        /// progress never changes a goal's status).
        private var statuses: [UUID: GoalState] = [:]
        /// Rows changed by `apply` (rows only read are not written back).
        private(set) var dirtyGoals = Set<UUID>()
        private var dirtyDevices = Set<String>()
        /// Revoked devices (read once per batch): their events after the revocation do not count.
        private(set) var revocations: [String: UInt64]?
        /// Entry rows of the batch's progress, written in key order by `flush` (inserts
        /// in order touch each page once, where the batch's arrival order jumps between goals).
        private var entryPuts: [(key: PendingTable.EntryKey, row: PendingTable.EntryRow)] = []
        /// The digest: per goal, what its entry sum gained in this batch; the removals this
        /// batch stored, with their positions, whose entries `flush` subtracts (once the batch's
        /// events are indexed); goals whose entry sum is computed again from their entries at
        /// `flush` (schema-1 history writes are not additive); goals to compute again if they
        /// hold history writes (a removal named an entry that is not a recorded one); whether
        /// `removed` is empty (then no entry needs looking up there).
        private var entryDeltas: [UUID: DigestSum] = [:]
        private var removals: [(goal: UUID, entry: UUID, position: UInt64)] = []
        private var noRemovals: Bool?
        private(set) var recomputeEntries = Set<UUID>()
        private var recomputeIfHistory = Set<UUID>()
        private var hashBuffer: [UInt8] = []
        /// Set by a rebuild chunk that is not the last: goals whose entry sums need computing
        /// again are collected in `deferredGoals` instead (their rows stay consistent with the
        /// ledger's, only incomplete), for the rebuild's last transaction to compute once
        /// (`recompute`), instead of reading their whole history in every chunk.
        var defersRecomputing = false
        private(set) var deferredGoals = Set<UUID>()

        init(tables: ProjectionTables, layout: StoreLayout) {
            self.tables = tables
            self.layout = layout
        }

        /// The goal's header state (registers, tags, version; no entries).
        mutating func header(_ goal: UUID, _ txn: borrowing StoreTransaction) throws -> GoalState {
            if let h = headers[goal] { return h }
            let h = try StoredProjection.header(goal, txn, tables) ?? GoalState(id: goal)
            headers[goal] = h
            return h
        }

        mutating func device(_ name: String, _ txn: borrowing StoreTransaction) throws -> DeviceState {
            if let d = devices[name] { return d }
            let d = try StoredProjection.device(name, txn, tables)
            devices[name] = d
            return d
        }

        /// Only what the rules for recording progress need: whether the goal exists, is
        /// deleted, and its kind, read from the header's first bytes.
        mutating func status(_ goal: UUID, _ txn: borrowing StoreTransaction) throws -> GoalState {
            if let h = headers[goal] { return h }
            if let s = statuses[goal] { return s }
            let status = try txn.withValue(tables.goals, key: goal.bytes) { ProjectionCodec.decodeStatus($0) } ?? nil
            // A goal that was ever deleted or restored: progress records which of those its
            // author had seen, which the header holds.
            if status?.deletionHistory == true { return try header(goal, txn) }
            let state = GoalState(id: goal, status: status)
            statuses[goal] = state
            return state
        }

        /// Folds `e`, stored at `position`. An event that fails the gate is set aside instead,
        /// and the result says so (`checked`: the caller has passed it through the gate already).
        @discardableResult
        mutating func apply(_ e: Event, at position: UInt64, checked: Bool = false, _ txn: borrowing StoreTransaction) throws -> Bool {
            if !checked {
                do throws(FieldError) {
                    try e.checkContent()
                } catch {
                    try txn.put(tables.setAside, key: position.bigEndianBytes, value: Array(SetAsideEvent.reason(error).utf8))
                    return false
                }
            }
            try fold(e, at: position, txn)
            return true
        }

        private mutating func fold(_ e: Event, at position: UInt64, _ txn: borrowing StoreTransaction) throws {
            if revocations == nil || e.type == .deviceRevoked { revocations = try txn.revocations() }
            if let revoked = revocations, !revoked.isEmpty, let after = revoked[e.origin], e.sequence > after { return }
            if let goal = e.payload.goal {
                switch e.payload {
                case .progressRecorded(let p):
                    // The entry is the event itself; its day row keeps what the views read.
                    let entry = ProgressEntry(e, p)
                    entryPuts.append((PendingTable.EntryKey(goal: goal, entry), .entry(entry)))
                    pendingChanges.progress.insert(goal)
                    // A removal may have arrived first: the entry is then not live.
                    if try !isRemoved(e.id, of: goal, txn) {
                        entryDeltas[goal, default: .zero] += ProjectionDigest.entryHash(entry, buffer: &hashBuffer)
                        addedToDays[GoalDay(goal: goal, day: entry.day), default: DaySummary()].add(entry)
                    }
                    return
                case .progressHistoryReplaced:
                    entryPuts.append((PendingTable.EntryKey(goal: goal, day: PendingTable.historyDay, event: e.id), .history(e.key)))
                    pendingChanges.progress.insert(goal)
                    recomputeEntries.insert(goal)
                    return
                case .progressRemoved(let p):
                    let key = goal.bytes + p.entry.bytes
                    if try txn.get(tables.removed, key: key) == nil {
                        try txn.put(tables.removed, key: key, value: [])
                        noRemovals = false
                        removals.append((goal, p.entry, position))
                    }
                    pendingChanges.progress.insert(goal)
                    return
                default:
                    if headers[goal] == nil { headers[goal] = try StoredProjection.header(goal, txn, tables) ?? GoalState(id: goal) }
                    headers[goal]!.apply(e)
                    dirtyGoals.insert(goal)
                    pendingChanges.goals.insert(goal)
                }
            } else {
                // A device seen for the first time (its row is written by this batch) gets a whole table.
                if !pendingChanges.settings.contains(e.origin), try txn.get(tables.devices, key: Array(e.origin.utf8)) == nil {
                    pendingChanges.settings.insert(e.origin)
                }
                if devices[e.origin] == nil { devices[e.origin] = try StoredProjection.device(e.origin, txn, tables) }
                devices[e.origin]!.apply(e)
                dirtyDevices.insert(e.origin)
                if case .notificationAuthorization = e.payload {
                    pendingChanges.authorization = true
                } else {
                    pendingChanges.settings.insert(e.origin)
                }
            }
        }

        /// Whether a removal of entry `id` of `goal` is stored.
        private mutating func isRemoved(_ id: UUID, of goal: UUID, _ txn: borrowing StoreTransaction) throws -> Bool {
            if noRemovals == nil { noRemovals = try txn.count(tables.removed) == 0 }
            if noRemovals == true { return false }
            var key = goal.bytes
            key += id.bytes
            return try txn.withValue(tables.removed, key: key) { _ in true } ?? false
        }

        /// Subtracts from its goal's sum the entry a removal stored at `position` removed, when
        /// that entry counted until then: a `progressRecorded` of that goal at an earlier position
        /// that this projection holds (the entry of a set-aside event, or of a revoked device's
        /// later event, has no row in `entries`). A removal that names no recorded entry of the
        /// goal may name an entry of a schema-1 history write: the goal is then computed again.
        private mutating func subtractRemoved(
            _ id: UUID, of goal: UUID, at position: UInt64, _ txn: borrowing StoreTransaction
        ) throws {
            guard let p = try txn.withValue(layout.eventIds, key: id.bytes, { UInt64(bigEndianBytes: $0) }),
                let e = try txn.event(at: p), case .progressRecorded(let r) = e.payload, r.goal == goal
            else {
                recomputeIfHistory.insert(goal)
                return
            }
            let entry = ProgressEntry(e, r)
            touchedDays.insert(GoalDay(goal: goal, day: entry.day))
            // Recorded after the removal, the entry never counted.
            guard p < position else { return }
            guard try txn.withValue(tables.entries, key: PendingTable.EntryKey(goal: goal, entry).bytes, { _ in true }) == true else {
                return
            }
            entryDeltas[goal, default: .zero] -= ProjectionDigest.entryHash(entry, buffer: &hashBuffer)
        }

        /// Whether `goal` has schema-1 history writes (rows under `historyDay` in `entries`).
        private func hasHistoryWrites(_ goal: UUID, _ txn: borrowing StoreTransaction) throws -> Bool {
            let prefix = goal.bytes + withUnsafeBytes(of: PendingTable.historyDay.bigEndian) { Array($0) }
            var found = false
            try txn.scan(tables.entries, from: prefix) { k, _ in
                found = k.count == 36 && k.prefix(20).elementsEqual(prefix)
                return false
            }
            return found
        }

        /// Has `flush` compute the entry sums of `goals` again from their entries.
        mutating func recompute(_ goals: Set<UUID>) { recomputeEntries.formUnion(goals) }

        /// Brings the digest's rows in line with the batch: each changed goal's entry sum and
        /// header hash, and the ledger's totals (after `entries` and the headers are written).
        private mutating func flushDigest(_ txn: borrowing StoreTransaction) throws {
            for r in removals { try subtractRemoved(r.entry, of: r.goal, at: r.position, txn) }
            if defersRecomputing {
                deferredGoals = recomputeEntries.union(recomputeIfHistory)
                recomputeEntries = []
                recomputeIfHistory = []
            }
            for goal in recomputeIfHistory where !recomputeEntries.contains(goal) {
                if try hasHistoryWrites(goal, txn) { recomputeEntries.insert(goal) }
            }
            var touched = Set(entryDeltas.keys)
            touched.formUnion(dirtyGoals)
            touched.formUnion(recomputeEntries)
            guard !touched.isEmpty else { return }
            var rule: HistoryRule?
            var totals = try StoredProjection.ledgerDigest(txn, tables)
            let before = totals
            for goal in touched.map({ (key: IDWords($0), goal: $0) }).sorted(by: { $0.key < $1.key }).map(\.goal) {
                let old = try StoredProjection.goalDigest(goal, txn, tables)
                var new = old
                if recomputeEntries.contains(goal) {
                    if rule == nil { rule = try txn.historyRule() }
                    let header = try headers[goal] ?? StoredProjection.header(goal, txn, tables) ?? GoalState(id: goal)
                    let state = try txn.withEntries(
                        header, in: tables, rule: rule!, revoked: revocations, historyInEffectOnly: true)
                    new.entrySum = try ProjectionDigest.entrySum(of: state)
                    // The views' days too, from the state just read (`flushViews` builds the runs).
                    try ViewTables.replaceDays(of: state, txn, tables)
                } else if let delta = entryDeltas[goal] {
                    new.entrySum += delta
                }
                if dirtyGoals.contains(goal), let h = headers[goal] {
                    new.header = h.exists ? try ProjectionDigest.headerHash(h) : nil
                }
                guard new != old else { continue }
                totals.replace(old.goalHash, with: new.goalHash)
                if new.isEmpty {
                    try txn.delete(tables.digest, key: goal.bytes)
                } else {
                    try txn.put(tables.digest, key: goal.bytes, value: new.bytes)
                }
            }
            guard totals != before else { return }
            if totals.count == 0 {
                try txn.delete(tables.digest, key: ProjectionTables.ledgerKey)
            } else {
                try txn.put(tables.digest, key: ProjectionTables.ledgerKey, value: totals.bytes)
            }
        }

        mutating func flush(_ txn: borrowing StoreTransaction) throws {
            // In key order; appended to the table's last page where every key sorts after it.
            entryPuts.sort(by: { $0.key < $1.key })
            if let first = entryPuts.first {
                let options = try txn.orderedPutOptions(tables.entries, from: first.key.bytes)
                // Each value is encoded into one reused buffer, each key on the stack.
                var value = ByteWriter(capacity: 64)
                for (key, row) in entryPuts {
                    value.bytes.removeAll(keepingCapacity: true)
                    switch row {
                    case .entry(let e): PendingTable.writeEntryValue(e, into: &value)
                    case .history(let k): value.bytes += PendingTable.historyValue(k)
                    }
                    try key.withBytes { k in try value.bytes.withUnsafeBytes { try txn.put(tables.entries, key: k, value: $0, options: options) } }
                }
                entryPuts = []
            }
            let goals = dirtyGoals.map { (key: $0.bytes, goal: $0) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            if let first = goals.first {
                let options = try txn.orderedPutOptions(tables.goals, from: first.key)
                for (key, goal) in goals { try txn.put(tables.goals, key: key, value: ProjectionCodec.encodeHeader(headers[goal]!), options: options) }
            }
            for name in dirtyDevices {
                try txn.put(tables.devices, key: Array(name.utf8), value: ProjectionCodec.encodeDevice(devices[name]!))
            }
            try PendingTable.update(pendingChanges, headers: headers, txn, tables, layout)
            try flushDigest(txn)
            try flushViews(txn)
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
