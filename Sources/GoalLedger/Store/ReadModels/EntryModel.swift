import Foundation

/// The entries read model: `entries` (a row per progress entry and per schema-1 history write,
/// by goal and day: what the views read, see `PendingTable`) and `removed` (the removals).
///
/// Entry rows are collected as they come and written in key order at flush; a removal is
/// written when it is folded, so a later `progressRecorded` of the batch finds it. At flush it
/// finds the entries the batch's removals removed (`FoldState.removedEntries`), and the goals
/// whose entries are not additive (`FoldState.recomputed`).
struct EntryModel: ReadModel {
    static let tables: [ProjectionTable] = [.entries, .removed]

    /// Entry rows of the batch's progress, in the order they were folded, each with its goal's
    /// slot, its key and where its value lies in `values` (encoded as the event is folded);
    /// `flush` writes them in key order: grouped by goal (a counting sort by slot, which keeps
    /// a goal's rows in their order), each goal's rows sorted among themselves (they mostly
    /// come in order already), the goals by id. The sorts move plain integers, never an entry
    /// with its strings.
    private var entryPuts: [EntryPut] = []
    private typealias EntryPut = (slot: Int, key: PendingTable.EntryKey, offset: UInt32, count: UInt32)
    /// The values of `entryPuts`, one after another.
    private var values = ByteWriter(capacity: 4096)
    /// The removals this batch stored, with their positions.
    private var removals: [(goal: UUID, entry: UUID, position: UInt64)] = []
    /// Whether `removed` is empty (then no entry needs looking up there); read once.
    private var noRemovals: Bool?

    init() {}

    mutating func apply(_ e: Event, at position: UInt64, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        state.liveEntry = nil
        switch e.payload {
        case .progressRecorded(let p):
            try applyRecorded(e, p, &state, txn)
        case .progressHistoryReplaced(let p):
            state.progressSlot = state.slot(of: p.goal)
            let start = values.bytes.count
            values.bytes += PendingTable.historyValue(e.key)
            try putLater(
                PendingTable.EntryKey(goal: p.goal, day: PendingTable.historyDay, event: e.id, hlc: e.key.hlc.rawValue), from: start,
                slot: state.progressSlot)
            state.recomputed.insert(p.goal)
        case .progressRemoved(let p):
            state.progressSlot = state.slot(of: p.goal)
            let key = p.goal.bytes + p.entry.bytes
            if try txn.get(state.tables.removed, key: key) == nil {
                try txn.put(state.tables.removed, key: key, value: [])
                noRemovals = false
                removals.append((p.goal, p.entry, position))
            }
        default:
            break
        }
    }

    /// Folds `e`, a `progressRecorded` of payload `p` (the batch's most common event, which
    /// it hands here directly).
    mutating func applyRecorded(_ e: Event, _ p: ProgressRecorded, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        // The entry is the event itself; its day row keeps what the views read.
        let entry = ProgressEntry(e, p)
        state.progressSlot = state.slot(of: p.goal)
        let start = values.bytes.count
        PendingTable.writeEntryValue(entry, into: &values)
        try putLater(PendingTable.EntryKey(goal: p.goal, entry), from: start, slot: state.progressSlot)
        // A removal may have arrived first: the entry is then not live.
        state.liveEntry = try isRemoved(e.id, of: p.goal, state.tables, txn) ? nil : entry
    }

    /// Whether a removal of entry `id` of `goal` is stored.
    private mutating func isRemoved(_ id: UUID, of goal: UUID, _ t: ProjectionTables, _ txn: borrowing StoreTransaction) throws -> Bool {
        if noRemovals == nil { noRemovals = try txn.count(t.removed) == 0 }
        if noRemovals == true { return false }
        var key = goal.bytes
        key += id.bytes
        return try txn.withValue(t.removed, key: key) { _ in true } ?? false
    }

    mutating func flush(_ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        try writeEntries(state.tables, txn)
        // Goals to compute again if they hold history writes: a removal named an entry that
        // is not a recorded one (perhaps one of a schema-1 history write).
        var recomputeIfHistory = Set<UUID>()
        for r in removals {
            if let found = try removedEntry(r.entry, of: r.goal, at: r.position, state, txn) {
                state.removedEntries.append((r.goal, found.entry, found.counted))
            } else {
                recomputeIfHistory.insert(r.goal)
            }
        }
        removals = []
        if state.defersRecomputing {
            state.deferred = state.recomputed.union(recomputeIfHistory)
            state.recomputed = []
            return
        }
        for goal in recomputeIfHistory where !state.recomputed.contains(goal) {
            if try hasHistoryWrites(goal, state.tables, txn) { state.recomputed.insert(goal) }
        }
    }

    /// Keeps the row `key` (of the goal in `slot`) whose value `values` holds from `start` on,
    /// for `writeEntries`.
    private mutating func putLater(_ key: PendingTable.EntryKey, from start: Int, slot: Int) throws {
        // A batch's values stay far below 4 GiB (a batch is bounded in events, a value in bytes).
        guard let offset = UInt32(exactly: start), let count = UInt32(exactly: values.bytes.count - start) else {
            throw LedgerError(.invalidInput, "a batch's entry rows exceed 4 GiB; append it in smaller batches")
        }
        entryPuts.append((slot, key, offset, count))
    }

    /// Writes the batch's entry rows, in key order: each goal's after its last where they sort
    /// after it (see `StoreTransaction.putEntries`).
    private mutating func writeEntries(_ t: ProjectionTables, _ txn: borrowing StoreTransaction) throws {
        guard !entryPuts.isEmpty else { return }
        // Where each slot's rows start once grouped by slot (a counting sort, stable).
        var starts = [Int](repeating: 0, count: entryPuts.reduce(0) { max($0, $1.slot) } + 2)
        for put in entryPuts { starts[put.slot + 1] += 1 }
        for i in starts.indices.dropFirst() { starts[i] += starts[i - 1] }
        var next = starts
        var rows = [PendingTable.EntryRowPut](unsafeUninitializedCapacity: entryPuts.count) { buffer, count in
            for put in entryPuts {
                (buffer.baseAddress! + next[put.slot]).initialize(to: (put.key, put.offset, put.count))
                next[put.slot] += 1
            }
            count = entryPuts.count
        }
        entryPuts.removeAll(keepingCapacity: true)
        // Each goal's rows sorted (they mostly come in order already: checked first), the goals by id.
        var goals: [(goal: IDWords, rows: Range<Int>)] = []
        for slot in starts.indices.dropLast() where starts[slot] < starts[slot + 1] {
            let range = starts[slot]..<starts[slot + 1]
            if !rows[range].isSorted(by: { $0.key < $1.key }) { rows[range].sort { $0.key < $1.key } }
            goals.append((rows[range.lowerBound].key.goal, range))
        }
        if !goals.isSorted(by: { $0.goal < $1.goal }) {
            goals.sort { $0.goal < $1.goal }
            rows = goals.flatMap { rows[$0.rows] }
        }
        try values.bytes.withUnsafeBytes { all in try txn.putEntries(t.entries, rows, values: all) }
        values.bytes.removeAll(keepingCapacity: true)
    }

    /// The entry a removal stored at `position` removed: a `progressRecorded` of `goal` (nil:
    /// the removal names no recorded entry of the goal), and whether it counted until then,
    /// that is, was recorded at an earlier position and has a row in `entries` (the entry of
    /// a set-aside event, or of a revoked device's later event, has none). Runs once the
    /// batch's events are indexed and its entry rows written.
    private func removedEntry(
        _ id: UUID, of goal: UUID, at position: UInt64, _ state: FoldState, _ txn: borrowing StoreTransaction
    ) throws -> (entry: ProgressEntry, counted: Bool)? {
        guard let p = try txn.position(of: id),
            let e = try txn.event(at: p), case .progressRecorded(let r) = e.payload, r.goal == goal
        else { return nil }
        let entry = ProgressEntry(e, r)
        // Recorded after the removal, the entry never counted.
        guard p < position else { return (entry, false) }
        let stored = try txn.hasEntry(state.tables.entries, PendingTable.EntryKey(goal: goal, entry))
        return (entry, stored)
    }

    /// Whether `goal` has schema-1 history writes (rows under `historyDay` in `entries`).
    private func hasHistoryWrites(_ goal: UUID, _ t: ProjectionTables, _ txn: borrowing StoreTransaction) throws -> Bool {
        let prefix = goal.bytes + withUnsafeBytes(of: PendingTable.historyDay.bigEndian) { Array($0) }
        var found = false
        try txn.scanEntries(t.entries, from: prefix) { k, _ in
            found = k.count == 36 && k.prefix(20).elementsEqual(prefix)
            return false
        }
        return found
    }

    /// `entries` in key order (a recorded entry, removed or not, and a history write each have
    /// a row), and `removed`.
    static func freshRows(of replay: FreshReplay) throws -> [FreshReplay.Rows] {
        var entries: [(key: PendingTable.EntryKey, row: PendingTable.EntryRow)] = []
        var removed: [[UInt8]: [UInt8]] = [:]
        for (id, g) in replay.projection.goals {
            entries += PendingTable.entryRows(of: g)
            for eid in g.removedEntries { removed[id.bytes + eid.bytes] = [] }
        }
        entries.sort { $0.key < $1.key }
        return [.entries(entries), .keyed(removed)]
    }
}
