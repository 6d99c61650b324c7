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
    /// (no removal of it is stored); nil for any other event. The digest and views add it.
    var liveEntry: ProgressEntry?
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

    init(tables: ProjectionTables, layout: StoreLayout) {
        self.tables = tables
        self.layout = layout
    }
}
