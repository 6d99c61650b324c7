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
        decodingIn env: Environment? = nil, plan: LogDecodingPlan = LogDecodingPlan()
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

    /// Folds the events from `start` through `end` as a `LogDecoder` hands them over (each
    /// with its entry's digest hash, the fold's costliest step that depends on the event
    /// alone), or decoding them here when it could not read.
    private func foldDecodedAhead(
        from start: UInt64, through end: UInt64, _ env: Environment, runLength: Int, _ batch: inout StoredProjection.Batch
    ) throws {
        let scratch = LogDecoder<FoldedRecord>.Scratch()
        let decoder = LogDecoder<FoldedRecord>(env, layout: layout, from: start, through: end, runLength: runLength) { position, record in
            let event = try LedgerStore.decodeForFolding(record, position: position ?? 0)
            guard case .progressRecorded(let p) = event.payload else { return (event, nil) }
            return (event, ProjectionDigest.entryHash(ProgressEntry(event, p), buffer: &scratch.bytes))
        }
        defer { decoder.stop() }
        while true {
            switch try decoder.next() {
            case .run(let run):
                try run.withUnsafeBufferPointer { records in
                    for r in records {
                        try batch.apply(r.item.event, at: r.position ?? 0, entryHash: r.item.entryHash, self)
                    }
                }
            case .end:
                return
            case .unavailable:
                return try foldDecoding(from: start, through: end, &batch)
            }
        }
    }

    /// An event as a rebuild's decoder hands it over: with its entry's digest hash, for a
    /// `progressRecorded`.
    private typealias FoldedRecord = (event: Event, entryHash: DigestSum?)
}
