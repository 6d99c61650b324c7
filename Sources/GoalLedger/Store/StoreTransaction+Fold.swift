import Foundation

// Folding a range of the log into a generation's tables (rebuild, and a projection catching up).
extension StoreTransaction {
    /// Folds the events from `start` through `end` into `tables` in one batch (every read
    /// model, see `StoredProjection.Batch`). `deferring`: the goals whose entries are not
    /// additive, whose digest sums and day rows need computing again from their whole state,
    /// are returned instead (a rebuild chunk); `recomputing`: such goals collected before,
    /// computed now.
    @discardableResult
    func fold(
        from start: UInt64, through end: UInt64, into tables: ProjectionTables, deferring: Bool = false, recomputing: Set<UUID> = []
    ) throws -> Set<UUID> {
        guard start <= end || !recomputing.isEmpty else { return [] }
        var batch = StoredProjection.Batch(tables: tables, layout: layout)
        batch.defersRecomputing = deferring
        batch.recompute(recomputing)
        if start <= end {
            try scan(layout.events, from: start.bigEndianBytes) { key, value in
                let position = UInt64(bigEndianBytes: key)
                guard position <= end else { return false }
                try batch.apply(try LedgerStore.decodeForFolding(value, position: position), at: position, self)
                return true
            }
        }
        try batch.flush(self)
        return batch.deferredGoals
    }
}
