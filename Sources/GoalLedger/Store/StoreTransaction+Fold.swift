import Foundation
import LMDB

// Folding a range of the log into a generation's tables (rebuild, and a projection catching up).
extension StoreTransaction {
    /// Folds the events from `start` through `end` into `tables` in one batch (every read
    /// model, see `StoredProjection.Batch`). `deferring`: the goals whose entries are not
    /// additive, whose digest sums and day rows need computing again from their whole state,
    /// are returned instead (a rebuild chunk); `recomputing`: such goals collected before,
    /// computed now.
    ///
    /// With `env` (the environment of this write transaction) and a range of events as long as
    /// `plan` asks, a `LogDecoder` decodes the events on a thread of its own while this one
    /// folds them.
    @discardableResult
    func fold(
        from start: UInt64, through end: UInt64, into tables: ProjectionTables, deferring: Bool = false, recomputing: Set<UUID> = [],
        decodingIn env: Environment? = nil, plan: LogDecoder.Plan = LogDecoder.Plan()
    ) throws -> Set<UUID> {
        guard start <= end || !recomputing.isEmpty else { return [] }
        var batch = StoredProjection.Batch(tables: tables, layout: layout)
        batch.defersRecomputing = deferring
        batch.recompute(recomputing)
        if start <= end {
            if let env, end - start + 1 >= plan.minimumEvents {
                try foldDecodedAhead(from: start, through: end, env, runLength: plan.runLength, &batch)
            } else {
                try foldDecoding(from: start, through: end, &batch)
            }
        }
        try batch.flush(self)
        return batch.deferredGoals
    }

    /// Folds the events from `start` through `end`, decoding each as it is read.
    private func foldDecoding(from start: UInt64, through end: UInt64, _ batch: inout StoredProjection.Batch) throws {
        try scan(layout.events, from: start.bigEndianBytes) { key, value in
            let position = UInt64(bigEndianBytes: key)
            guard position <= end else { return false }
            try batch.apply(try LedgerStore.decodeForFolding(value, position: position), at: position, self)
            return true
        }
    }

    /// Folds the events from `start` through `end` as a `LogDecoder` hands them over, or
    /// decoding them here when it could not read.
    private func foldDecodedAhead(
        from start: UInt64, through end: UInt64, _ env: Environment, runLength: Int, _ batch: inout StoredProjection.Batch
    ) throws {
        let decoder = LogDecoder(env, layout: layout, from: start, through: end, runLength: runLength)
        defer { decoder.stop() }
        while true {
            switch try decoder.next() {
            case .run(let run):
                for (position, event, hash) in run { try batch.apply(event, at: position, entryHash: hash, self) }
            case .end:
                return
            case .unavailable:
                return try foldDecoding(from: start, through: end, &batch)
            }
        }
    }
}
