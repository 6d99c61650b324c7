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
    /// slot and where its duplicate (as `entries` stores it: see `StoreTransaction.putEntries`)
    /// lies in `duplicates`, written as the event is folded; `flush` writes them in key order
    /// (`grouped`).
    private var entryPuts: [(slot: Int, offset: UInt32, count: UInt32)] = []
    /// The duplicates of `entryPuts`, one after another.
    private var duplicates = ByteWriter(capacity: 4096)
    /// The removals this batch stored, with their positions.
    private var removals: [(goal: UUID, entry: UUID, position: UInt64)] = []
    /// Whether `removed` is empty (then no entry needs looking up there); read once.
    private var noRemovals: Bool?

    init() {}

    /// Makes room for the rows of about `events` progress events.
    mutating func reserve(events: Int) {
        entryPuts.reserveCapacity(events)
        duplicates.bytes.reserveCapacity(events * 48)
    }

    mutating func apply(_ e: Event, at position: UInt64, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        state.liveEntry = nil
        switch e.payload {
        case .progressRecorded(let p):
            try applyRecorded(e, p, &state, txn)
        case .progressHistoryReplaced(let p):
            state.progressSlot = state.slot(of: p.goal)
            let start = duplicates.bytes.count
            PendingTable.writeHistoryDuplicate(goal: p.goal, event: e.id, e.key, into: &duplicates)
            try putLater(from: start, slot: state.progressSlot)
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
        let start = duplicates.bytes.count
        PendingTable.writeEntryDuplicate(goal: p.goal, entry, into: &duplicates)
        try putLater(from: start, slot: state.progressSlot)
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
        try writeEntries(state, txn)
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

    /// Keeps the row (of the goal in `slot`) whose duplicate `duplicates` holds from `start`
    /// on, for `writeEntries`.
    private mutating func putLater(from start: Int, slot: Int) throws {
        // A batch's rows stay far below 4 GiB (a batch is bounded in events, a row in bytes).
        guard let offset = UInt32(exactly: start), let count = UInt32(exactly: duplicates.bytes.count - start) else {
            throw LedgerError(.invalidInput, "a batch's entry rows exceed 4 GiB; append it in smaller batches")
        }
        entryPuts.append((slot, offset, count))
    }

    /// Writes the batch's entry rows, in key order: each goal's after its last where they sort
    /// after it (see `StoreTransaction.putEntries`).
    private mutating func writeEntries(_ state: FoldState, _ txn: borrowing StoreTransaction) throws {
        guard !entryPuts.isEmpty else { return }
        let (goals, rows, bytes) = grouped(state.slotGoals)
        try bytes.withUnsafeBytes { all in try txn.putEntries(state.tables.entries, goals, rows: rows, duplicates: all) }
        entryPuts.removeAll(keepingCapacity: true)
        duplicates.bytes.removeAll(keepingCapacity: true)
    }

    /// The batch's rows in key order, their duplicates copied into a buffer of their own in
    /// that order (so that they are read in the order they are written): grouped by goal, the
    /// goals by id (a counting sort by slot, `slotGoals` naming each slot's goal, which keeps a
    /// goal's rows in the order they came), then each goal's rows sorted among themselves where
    /// they are not in order already (they mostly are). Within a goal, rows order as their
    /// duplicates' heads (day, clock reading, event, all big-endian) do, byte by byte.
    private func grouped(
        _ slotGoals: [UUID]
    ) -> (goals: [(goal: IDWords, rows: Range<Int>)], rows: [(offset: Int, count: Int)], bytes: [UInt8]) {
        var rowCounts = [Int](repeating: 0, count: slotGoals.count)
        var byteCounts = rowCounts
        for put in entryPuts {
            rowCounts[put.slot] += 1
            byteCounts[put.slot] += Int(put.count)
        }
        // Where each slot's rows and bytes start, the slots taken in their goals' order.
        let ids = slotGoals.map(IDWords.init)
        var nextRow = rowCounts
        var nextByte = byteCounts
        var goals: [(goal: IDWords, rows: Range<Int>)] = []
        var rowCount = 0
        var byteCount = 0
        for slot in rowCounts.indices.filter({ rowCounts[$0] > 0 }).sorted(by: { ids[$0] < ids[$1] }) {
            nextRow[slot] = rowCount
            nextByte[slot] = byteCount
            goals.append((ids[slot], rowCount..<rowCount + rowCounts[slot]))
            rowCount += rowCounts[slot]
            byteCount += byteCounts[slot]
        }
        var rows = [(offset: Int, count: Int)](repeating: (0, 0), count: rowCount)
        let bytes = [UInt8](unsafeUninitializedCapacity: byteCount) { out, initialized in
            duplicates.bytes.withUnsafeBytes { from in
                for put in entryPuts {
                    let at = nextByte[put.slot]
                    let count = Int(put.count)
                    UnsafeMutableRawPointer(out.baseAddress! + at).copyMemory(from: from.baseAddress! + Int(put.offset), byteCount: count)
                    rows[nextRow[put.slot]] = (at, count)
                    nextRow[put.slot] += 1
                    nextByte[put.slot] = at + count
                }
            }
            initialized = byteCount
        }
        bytes.withUnsafeBytes { b in
            // Every duplicate holds a whole head (`EntryKey.writeHead`).
            let precedes = { (x: (offset: Int, count: Int), y: (offset: Int, count: Int)) in
                memcmp(b.baseAddress! + x.offset, b.baseAddress! + y.offset, PendingTable.EntryKey.headSize) < 0
            }
            for goal in goals where !rows[goal.rows].isSorted(by: precedes) { rows[goal.rows].sort(by: precedes) }
        }
        return (goals, rows, bytes)
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
