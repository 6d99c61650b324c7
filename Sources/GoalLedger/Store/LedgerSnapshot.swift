import Foundation

/// One state of the store, as of one commit: every read of the ledger is made through a
/// snapshot, inside ``LedgerStore/read(_:)-7x66n``.
///
///     let (goals, digest) = try store.read { snapshot in
///         (try snapshot.goals(now: now), try snapshot.digest())
///     }
///
/// Everything read from one snapshot agrees: a write committed while the closure runs is not
/// seen, so a screen that reads its list and its totals together never shows two states side
/// by side. A snapshot is an LMDB read transaction; it lives only for the closure and cannot be
/// copied or kept. Reading does not block writers, and writers do not block reads.
public struct LedgerSnapshot: ~Copyable {
    /// The transaction, with the store's tables: the log's reads are its methods.
    let txn: StoreTransaction
    let store: LedgerStore
    /// The event schema the store is on in this snapshot: 1 (legacy) until `migrate`, then 2.
    public let schema: Int

    init(_ txn: consuming StoreTransaction, store: LedgerStore) throws {
        schema = try txn.schema()
        self.txn = txn
        self.store = store
    }

    var layout: StoreLayout { store.layout }
    /// The name of the store's device.
    public var device: String { store.device }
    /// The ledger's id.
    public var ledgerID: UUID { store.ledgerID }

    /// How schema-1 history writes count in this snapshot: the old rule until migration.
    public var historyRule: HistoryRule { HistoryRule(schema: schema) }

    /// Whether the ledger was founded signed: its id is derived from the founder's name and key
    /// (a version-8 UUID), so every origin must be enrolled and every event signed. Ledgers
    /// created before events were signed have a random (version-4) id; their devices sign from
    /// the migration on.
    public var isSignedLedger: Bool { store.isSignedLedger }

    /// Runs `body`, turning storage failures into store errors.
    func run<R>(_ body: () throws -> R) throws(LedgerError) -> R {
        try store.failing(as: "reading \(store.path)", body)
    }

    /// The number of events (the last position).
    public func lastPosition() throws(LedgerError) -> UInt64 {
        try run { try txn.lastPosition() }
    }

    /// The event stored at `position`.
    public func event(at position: UInt64) throws(LedgerError) -> Event? {
        try run { try txn.event(at: position) }
    }

    /// Visits events in local position order from `start`, until `body` returns false.
    public func scanEvents(from start: UInt64 = 1, _ body: (UInt64, Event) throws -> Bool) throws(LedgerError) {
        try run {
            try txn.scan(layout.events, from: start.bigEndianBytes) { key, value in
                let position = UInt64(bigEndianBytes: key)
                return try body(position, try LedgerStore.decodeRecord(value, position: position))
            }
        }
    }

    /// Events about `goal` that folds count, in local position order: set-aside ones are left
    /// out, and so are those of a revoked device after its cutoff (``setAsideEvents()``,
    /// ``LedgerSnapshot/enrolledDevices()``).
    public func events(ofGoal goal: UUID) throws(LedgerError) -> [(position: UInt64, event: Event)] {
        try run { try txn.events(ofGoal: goal) }
    }

    /// Every event the fold counts in canonical order (hybrid logical clock, then origin device):
    /// without the set-aside ones (``setAsideEvents()``) and those of a revoked device after its
    /// cutoff; with `goal`, that goal's only.
    public func canonicalEvents(goal: UUID? = nil) throws(LedgerError) -> [(position: UInt64, event: Event)] {
        try run {
            if let goal {
                return try txn.events(ofGoal: goal).sorted { $0.event.key < $1.event.key }
            }
            // Canonical order is sorted when asked for: it is needed for reading a whole log
            // (`ledger log`), never on the append or replay paths.
            var out: [(position: UInt64, event: Event)] = []
            let revoked = try txn.revocations()
            try txn.scan(layout.events) { key, value in
                let p = UInt64(bigEndianBytes: key)
                let e = try LedgerStore.decodeRecord(value, position: p)
                if e.isCounted(revokedAfter: revoked) { out.append((p, e)) }
                return true
            }
            return out.sorted { $0.event.key < $1.event.key }
        }
    }

    /// The current state of one goal, from the stored projection.
    public func goalState(_ goal: UUID) throws(LedgerError) -> GoalState {
        try run {
            try txn.goal(goal, in: try txn.activeProjection(), rule: historyRule)
                ?? GoalState(id: goal, rule: historyRule)
        }
    }

    /// What the ledger knows about a device (its latest settings and authorization), from the
    /// stored projection.
    public func deviceState(_ name: String) throws(LedgerError) -> DeviceState {
        try run { try StoredProjection.device(name, txn, try txn.activeProjection()) }
    }

    /// Visits every created goal of the stored projection in id order (the order of
    /// `GoalProjection.existingGoals`), each with its entries. Only the goal being visited is in
    /// memory, so a long history costs time, not memory.
    public func forEachGoal(_ body: (GoalState) throws -> Void) throws(LedgerError) {
        try run {
            try txn.forEachGoal(rule: historyRule, revoked: try txn.revocations()) { g in
                if g.exists { try body(g) }
            }
        }
    }

    /// The digest of the stored projection: the value ``GoalProjection/digest`` computes from
    /// scratch (per goal a hash of its facts, whose entries contribute through an
    /// order-independent sum; for the ledger a combination of the created goals' hashes),
    /// maintained in the transaction that changes the projection, so reading it reads one row.
    /// `verify` recomputes it. See `docs/storage-and-guarantees.md` ("The digest") for its
    /// construction; it tells honest stores that diverged apart, and is no defence against
    /// forgery.
    public func digest() throws(LedgerError) -> String { try digestAndGoalCount().digest }

    /// The digest and the number of created goals, from the digest's ledger row.
    package func digestAndGoalCount() throws(LedgerError) -> (digest: String, goals: Int) {
        let totals = try run { try StoredProjection.ledgerDigest(txn, try txn.activeProjection()) }
        return (totals.hex, Int(clamping: totals.count))
    }

    /// The stored projection: every goal and device, as of its checkpoint.
    public func projection() throws(LedgerError) -> GoalProjection {
        try run { try txn.loadProjection(rule: historyRule) }
    }

    /// The stored projection's version and checkpoint.
    public func projectionStatus() throws(LedgerError) -> (version: UInt64, checkpoint: UInt64) {
        try run {
            let s = try txn.projectionStatus()
            return (s.version, s.checkpoint)
        }
    }

    /// Folds the log from scratch: every event, or those up to `position`, or those whose wall
    /// time `at` is at or before `asOf`.
    public func replay(through position: UInt64? = nil, asOf: Instant? = nil) throws(LedgerError) -> GoalProjection {
        var projection = GoalProjection(historyRule: historyRule)
        projection.revokedAfter = try run { try txn.revocations() }
        var read = 0
        try scanEvents { p, e in
            if let position, p > position { return false }
            read += 1
            // The pages of the log read so far are not kept resident: the projection itself
            // is what grows with the log, not the file's pages besides.
            if read & 0x7FFF == 0 { store.releaseMappedPages(txn) }
            if let asOf, e.at > asOf { return true }
            projection.apply(e)
            projection.position = p
            return true
        }
        if let position { projection.position = min(position, projection.position) }
        return projection
    }

    /// For each origin device, the last origin sequence this store holds.
    public func originHeads() throws(LedgerError) -> [String: UInt64] {
        try run { try txn.originHeads() }
    }

    /// The latest hybrid logical clock reading of this store (a reading past ``HLC/latest``
    /// that a store written before the gate bounded clocks holds is left out).
    public func clock() throws(LedgerError) -> HLC {
        try run { try txn.clock() }
    }

    /// This device's public key, if it has one (from the store's key store).
    public func publicKey() throws(LedgerError) -> [UInt8]? { try store.keys.key(ledger: ledgerID, device: device)?.publicKey }

    /// Migration identifiers recorded in the store.
    public func appliedMigrations() throws(LedgerError) -> [String] {
        try run { try txn.appliedMigrations() }
    }
}
