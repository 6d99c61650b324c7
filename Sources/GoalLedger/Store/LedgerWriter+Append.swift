import Foundation
import Sodium

extension LedgerWriter {
    /// Appends `drafts` as one atomic batch authored by the local device.
    ///
    /// - An event whose id is already stored (or earlier in the batch) is not written again; its
    ///   result reports the original position with `duplicate` set.
    /// - Every draft passes the gate (`EventDraft.checkWellFormed()`), then the store's rules.
    ///   Any invalid event refuses the whole batch: nothing is written. Errors name the event by
    ///   its number in `lines` when given, else by the line it was read from
    ///   (`EventDraft.line`), else by its place in the batch ("event 2 of the batch").
    /// - `expectedVersion`: the batch must be about exactly one goal, whose version (the number of
    ///   events about it in this store) must equal this value before the batch; 0 means the goal
    ///   does not exist yet. A mismatch throws `versionConflict`.
    /// - `now` is the wall time of events that carry no `at`.
    ///
    /// A refused batch ends the write: nothing of the write is committed (see ``LedgerWriter``).
    @discardableResult
    public func append(
        _ drafts: [EventDraft], lines: [Int]? = nil, expectedVersion: Int? = nil, now: Instant
    ) throws(LedgerError) -> [AppendResult] {
        try append(drafts, lines: lines, expectedVersion: expectedVersion, now: now, enrolling: false, signingKey: nil)
    }

    /// Appends the drafts `next` hands over, chunk after chunk until it hands nil, as one
    /// atomic batch: for a long input read a chunk at a time (what `ledger append` does), so
    /// that only a chunk of drafts and of their events is held.
    ///
    /// Each chunk is checked, signed and written as ``append(_:lines:expectedVersion:now:)``
    /// writes a batch, and the results are those of the whole input, in order (an id given
    /// again in a later chunk is a duplicate of its first event). The rows the projection keeps
    /// per goal, and the id index's rows (24 bytes a draft), are written once for many chunks
    /// (every 262,144 drafts, and at the end), not once a chunk: a long input touches its goals
    /// in every chunk, and its ids land all over the index. An error names a draft by
    /// its ``EventDraft/line`` when it has one, else by its place in the whole batch. A refused
    /// draft, or an error `next` throws, ends the write: nothing of any chunk is committed.
    public func append(chunks next: () throws(LedgerError) -> [EventDraft]?, now: Instant) throws(LedgerError) -> [AppendResult] {
        try append(chunks: next, now: now, flushingEvery: LedgerStore.chunkedAppendProjectionEvents)
    }

    /// `append(chunks:now:)`, writing the projection's rows once `flushEvents` drafts have
    /// been folded since they were last written. `resultsKnown` is handed the results as soon
    /// as the last draft has been written, before the last rows are (they are the results this
    /// returns): a caller can start on them while the write finishes. The write may still fail,
    /// or run again from its start, after it is called.
    package func append(
        chunks next: () throws(LedgerError) -> [EventDraft]?, now: Instant, flushingEvery flushEvents: Int,
        resultsKnown: ([AppendResult]) -> Void = { _ in }
    ) throws(LedgerError) -> [AppendResult] {
        try run("appending to \(store.path)") {
            try store.appendChunks(
                next, now: now, signingKey: effects.rotatedKey, schema: schema, flushEvents: flushEvents, resultsKnown: resultsKnown, txn)
        }
    }

    /// `append`, also for the store's own enrolments (`enrolling`), signed with `signingKey`
    /// when given (the founder's first event, before its key is enrolled), else with a key this
    /// write rotated to, else with the device's key once it is enrolled.
    func append(
        _ drafts: [EventDraft], lines: [Int]?, expectedVersion: Int?, now: Instant, enrolling: Bool, signingKey: SigningKey?
    ) throws(LedgerError) -> [AppendResult] {
        try run("appending to \(store.path)") {
            try store.append(
                drafts, lines: lines, expectedVersion: expectedVersion, now: now, enrolling: enrolling,
                signingKey: signingKey ?? effects.rotatedKey, schema: schema, txn)
        }
    }
}
