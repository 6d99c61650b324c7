import Foundation

/// What the read models of one batch share while it folds: the tables, the goal headers and
/// devices as the batch has folded them, and what one model finds for those after it in the
/// order (`StoredProjection.Batch.models`). Everything else a model keeps is its own.
struct FoldState {
    let tables: ProjectionTables
    let layout: StoreLayout
    /// Goal headers read or folded by the batch (registers, tags, version; no entries): kept
    /// in memory while it runs and written once by `GoalHeaderModel`; the pending, digest and
    /// view models read the new ones at flush.
    var headers: [UUID: GoalState] = [:]
    /// The goals whose header the batch changed (rows only read are not written back).
    var changedGoals = Set<UUID>()
    /// Device rows read or folded by the batch (the views read the store device's calendar).
    var devices: [String: DeviceState] = [:]
    /// Revoked devices, read once per batch and again after a revocation: their events after
    /// the revocation do not count (the driver drops them before any model).
    var revocations: [String: UInt64]?
    /// Set by `EntryModel` for each event: the entry a `progressRecorded` adds when it counts
    /// (no removal of it is stored); nil for any other event. The digest and views add it to
    /// the goal in `progressSlot`.
    var liveEntry: ProgressEntry?
    /// The digest hash of the entry of the `progressRecorded` being folded, when the driver
    /// was handed it with the event (nil: `DigestModel` computes it).
    var entryHash: DigestSum?
    /// Where the digest hash of the entry being folded will be among the hashes the driver
    /// supplies later (`StoredProjection.Batch.supplyEntryHashes`), when another thread
    /// computes it meanwhile (a local batch's chain encoder): `DigestModel` adds it then.
    var entryHashLater: Int?
    /// Found by `EntryModel` at flush: the recorded entries the batch's new removals removed,
    /// each with whether it counted until then (an entry recorded after its removal never did).
    var removedEntries: [(goal: UUID, entry: ProgressEntry, counted: Bool)] = []
    /// Goals whose entries are not additive (a schema-1 history write, or a removal that names
    /// one of its entries): `EntryModel` collects them, and each model computes its sums over
    /// their entries again (`ReadModel.recompute`) from their whole state.
    var recomputed = Set<UUID>()
    /// Set by a rebuild chunk that is not the last: the goals that `recomputed` would hold are
    /// collected in `deferred` instead (their rows stay consistent with the ledger's, only
    /// incomplete), for the rebuild's last transaction to compute once, instead of reading
    /// their whole history in every chunk.
    var defersRecomputing = false
    var deferred = Set<UUID>()
    /// The slot of the goal of the progress event being folded (`progressRecorded`,
    /// `progressRemoved`, `progressHistoryReplaced`), set by `EntryModel` for the models after it.
    var progressSlot = 0
    /// The goals the batch's progress events belong to, by slot (`slot(of:)`): only
    /// `EntryModel` gives slots, to the goals of the progress events that reach the models,
    /// and the rules of an append, to the goal of the progress event it folds next.
    private(set) var slotGoals: [UUID] = []
    private var slots: [IDWords: Int] = [:]
    /// The goal `slot(of:)` last answered for, with its slot: the rules of an append ask for
    /// the goal of a progress event just before `EntryModel` folds it.
    private var lastSlot: (goal: IDWords, slot: Int)?
    /// The status of each slot's goal as the rules of an append last read it (see
    /// `StoredProjection.Batch.progressFacts`); `GoalHeaderModel` drops a goal's when it
    /// folds an event of its header, the only events that change a status.
    var slotStatuses = GoalSlots<ProjectionCodec.GoalStatus?>()

    init(tables: ProjectionTables, layout: StoreLayout) {
        self.tables = tables
        self.layout = layout
    }

    /// The slot of `goal` in this batch: 0, 1, 2 … in the order goals are first seen. What the
    /// models gather per goal from progress events lives in arrays indexed by it
    /// (`GoalSlots`), so an event costs one lookup of its goal, not one per model.
    mutating func slot(of goal: UUID) -> Int {
        let key = IDWords(goal)
        if let last = lastSlot, last.goal == key { return last.slot }
        let s: Int
        if let known = slots[key] {
            s = known
        } else {
            s = slotGoals.count
            slots[key] = s
            slotGoals.append(goal)
        }
        lastSlot = (key, s)
        return s
    }

    /// Forgets the status read for `goal`, whose header is changing (see `slotStatuses`).
    mutating func headerChanges(_ goal: UUID) {
        guard !slotGoals.isEmpty, let s = slots[IDWords(goal)] else { return }
        slotStatuses[s] = nil
    }
}

/// Values gathered per goal slot of a batch (`FoldState.slot(of:)`), nil where a slot has none.
struct GoalSlots<Value> {
    private(set) var values: [Value?] = []

    subscript(slot: Int) -> Value? {
        get { slot < values.count ? values[slot] : nil }
        set {
            if slot >= values.count { values.append(contentsOf: repeatElement(nil, count: slot + 1 - values.count)) }
            values[slot] = newValue
        }
    }

    /// Updates the value of `slot` in place, starting from `initial` where it has none.
    mutating func update(_ slot: Int, default initial: @autoclosure () -> Value, _ body: (inout Value) -> Void) {
        if slot >= values.count { values.append(contentsOf: repeatElement(nil, count: slot + 1 - values.count)) }
        if values[slot] == nil { values[slot] = initial() }
        body(&values[slot]!)
    }

    /// Each slot that has a value, with it.
    var filled: [(slot: Int, value: Value)] {
        values.indices.compactMap { i in values[i].map { (i, $0) } }
    }

    mutating func removeAll() { values.removeAll(keepingCapacity: true) }
}
