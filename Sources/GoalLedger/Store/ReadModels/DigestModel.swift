import Foundation

/// The digest read model: `digest` (per goal, its entry sum and header hash; under
/// `ProjectionTables.ledgerKey`, the created goals' hashes summed and counted). See
/// `ProjectionDigest` and docs/storage-and-guarantees.md, "The digest".
///
/// A live entry adds its hash to its goal's sum as it is folded; at flush, after the entries
/// and headers are written, the entries the batch's removals removed are subtracted, each
/// changed goal's header is hashed again, and the ledger's totals follow the goals' hashes.
struct DigestModel: ReadModel {
    static let tables: [ProjectionTable] = [.digest]

    /// Per goal slot, what the goal's entry sum gained in this batch.
    private var entryDeltas = GoalSlots<DigestSum>()
    /// Per goal whose entries are not additive, its entry sum computed from its whole state.
    private var recomputedSums: [UUID: DigestSum] = [:]
    /// Live entries whose hash another thread computes meanwhile (`FoldState.entryHashLater`):
    /// their goal's slot, where the hash will be, and the entry (to hash it here if it is not).
    private var hashedLater: [(slot: Int, index: Int, entry: ProgressEntry)] = []

    init() {}

    mutating func apply(_ e: Event, at position: UInt64, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        guard let entry = state.liveEntry else { return }
        if state.entryHash == nil, let later = state.entryHashLater {
            hashedLater.append((state.progressSlot, later, entry))
            return
        }
        let hash = state.entryHash ?? ProjectionDigest.entryHash(entry)
        entryDeltas.update(state.progressSlot, default: .zero) { $0 += hash }
    }

    mutating func recompute(_ goal: GoalState, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        recomputedSums[goal.id] = try ProjectionDigest.entrySum(of: goal)
    }

    /// Adds the entries hashed later (`hashedLater`) with the hashes `hashes` holds at their
    /// index; one that is missing is computed here.
    mutating func absorbHashes(_ hashes: [DigestSum?]) {
        // By index: a loop over the elements copied each one's entry (its references retained
        // and released) where only a missing hash reads it.
        for i in hashedLater.indices {
            let index = hashedLater[i].index
            let hash = (hashes.indices.contains(index) ? hashes[index] : nil) ?? ProjectionDigest.entryHash(hashedLater[i].entry)
            entryDeltas.update(hashedLater[i].slot, default: .zero) { $0 += hash }
        }
        hashedLater.removeAll(keepingCapacity: true)
    }

    /// Brings the digest's rows in line with the batch: each changed goal's entry sum and
    /// header hash, in key order, then the ledger's totals.
    mutating func flush(_ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        // Hashes never supplied are computed now.
        absorbHashes([])
        for r in state.removedEntries where r.counted {
            let hash = ProjectionDigest.entryHash(r.entry)
            entryDeltas.update(state.slot(of: r.goal), default: .zero) { $0 -= hash }
        }
        var deltas: [UUID: DigestSum] = [:]
        for (slot, delta) in entryDeltas.filled { deltas[state.slotGoals[slot]] = delta }
        entryDeltas.removeAll()
        var touched = Set(deltas.keys)
        touched.formUnion(state.changedGoals)
        touched.formUnion(state.recomputed)
        guard !touched.isEmpty else { return }
        let t = state.tables
        var totals = try StoredProjection.ledgerDigest(txn, t)
        let before = totals
        for goal in touched.map({ (key: IDWords($0), goal: $0) }).sorted(by: { $0.key < $1.key }).map(\.goal) {
            let old = try StoredProjection.goalDigest(goal, txn, t)
            var new = old
            if let sum = recomputedSums[goal] {
                new.entrySum = sum
            } else if let delta = deltas[goal] {
                new.entrySum += delta
            }
            if state.changedGoals.contains(goal), let h = state.headers[goal] {
                new.header = h.exists ? try ProjectionDigest.headerHash(h) : nil
            }
            guard new != old else { continue }
            totals.replace(old.goalHash, with: new.goalHash)
            if new.isEmpty {
                try txn.delete(t.digest, key: goal.bytes)
            } else {
                try txn.put(t.digest, key: goal.bytes, value: new.bytes)
            }
        }
        recomputedSums = [:]
        guard totals != before else { return }
        if totals.count == 0 {
            try txn.delete(t.digest, key: ProjectionTables.ledgerKey)
        } else {
            try txn.put(t.digest, key: ProjectionTables.ledgerKey, value: totals.bytes)
        }
    }

    /// `digest`, computed from scratch: each goal's parts and the ledger's totals.
    static func freshRows(of replay: FreshReplay) throws -> [FreshReplay.Rows] {
        var digest: [[UInt8]: [UInt8]] = [:]
        var totals = LedgerDigest()
        for (id, g) in replay.projection.goals {
            let parts = try ProjectionDigest.parts(of: g)
            if !parts.isEmpty { digest[id.bytes] = parts.bytes }
            totals.replace(nil, with: parts.goalHash)
        }
        if totals.count > 0 { digest[ProjectionTables.ledgerKey] = totals.bytes }
        return [.keyed(digest)]
    }
}
