import Foundation
import Sodium

extension LedgerStore {
    /// The longest run of a device's events one signature closes: a batch longer than this is
    /// signed every this many events too (a signature costs about 43 µs).
    package static let signedRunLength = 4_096

    /// The body of ``LedgerWriter/append(_:lines:expectedVersion:now:)`` in the write
    /// transaction `txn`, for a store on `schema`: each draft passes the gate and the rules and
    /// becomes the next event of one `LocalBatch`, which then signs, indexes and folds them.
    func append(
        _ drafts: [EventDraft], lines: [Int]?, expectedVersion: Int?, now: Instant, enrolling: Bool, signingKey: SigningKey?,
        schema: Int, _ txn: borrowing StoreTransaction
    ) throws -> [AppendResult] {
        try checkBeforeWriting(txn)
        var batch = try LocalBatch(store: self, drafts: drafts, schema: schema, enrolling: enrolling, signingKey: signingKey, txn)
        if let expectedVersion { try batch.checkVersion(expectedVersion, of: drafts, txn) }
        // Each draft is read in place (the array's subscript, or an iteration, would copy it out).
        try drafts.withUnsafeBufferPointer { drafts in
            for index in drafts.indices {
                let line = lines.map { index < $0.count ? $0[index] : index + 1 } ?? drafts[index].line
                try batch.add(drafts[index], index: index, line: line, now: now, txn)
            }
        }
        return try batch.commit(txn)
    }

    /// The drafts a chunked append folds before it writes the projection's rows (see
    /// `appendChunks`): about 16 MiB of entry rows and their digest terms held.
    package static let chunkedAppendProjectionEvents = 262_144

    /// The body of `LedgerWriter.append(chunks:now:flushingEvery:)`: each chunk `next` hands
    /// over becomes a `LocalBatch` of its own, checked, signed, written and indexed as `append`
    /// does, but the batches fold into one projection batch, flushed once `flushEvents` drafts
    /// have been folded into it and at the end. Each goal's rows (its header, digest, days,
    /// pending) are then written once, not once per chunk: a long input touches every goal in
    /// every chunk. The id index's rows are held the same way (`HeldIDRows`) and put in one pass
    /// in key order when the projection's rows are written: each page of the index is then
    /// written once a flush, not once for every chunk whose random ids land on it.
    func appendChunks(
        _ next: () throws(LedgerError) -> [EventDraft]?, now: Instant, signingKey: SigningKey?, schema: Int,
        flushEvents: Int, resultsKnown: ([AppendResult]) -> Void = { _ in }, _ txn: borrowing StoreTransaction
    ) throws -> [AppendResult] {
        try checkBeforeWriting(txn)
        var results: [AppendResult] = []
        var held: StoredProjection.Batch?
        var heldIDs: HeldIDRows?
        var folded = 0
        // The drafts of the chunks before: a draft without a line is named by its place in all.
        var before = 0
        while let drafts = try next() {
            // What the batches before held is moved into this one, not copied: a copy would be
            // copied whole again on its first change.
            var batch = try LocalBatch(
                store: self, drafts: drafts, schema: schema, enrolling: false, signingKey: signingKey, projection: held.take(),
                heldIDs: heldIDs.take() ?? HeldIDRows(), txn)
            // Each draft read in place: the array's subscript would copy it out.
            try drafts.withUnsafeBufferPointer { drafts in
                for index in drafts.indices {
                    try batch.add(drafts[index], index: before + index, line: drafts[index].line, now: now, txn)
                }
            }
            before += drafts.count
            folded += drafts.count
            let flushing = folded >= flushEvents
            results += try batch.commit(txn, flushing: flushing)
            let taken = batch.takeHeld()
            heldIDs = taken.ids
            if flushing { folded = 0 } else { held = taken.projection }
        }
        // Every draft has its result: what is left writes rows, and changes none of them.
        resultsKnown(results)
        // The rows still held (none after an empty input, which writes nothing), the id index's
        // first: the projection's upkeep looks events up by id.
        var ids = heldIDs?.take(adding: []) ?? []
        try txn.putIDs(&ids)
        if folded > 0, var projection = held { try txn.finish(&projection, clock: try txn.clock(), through: try txn.lastPosition()) }
        return results
    }

}
