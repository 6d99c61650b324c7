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
    /// With `feed` (a rebuild's), the events come from it, decoded ahead across the rebuild's
    /// transactions. Without one, given `env` (the environment of this write transaction) and a
    /// range of events as long as `plan` asks, a feed of this range alone decodes them on a
    /// thread of its own while this one folds them. Whatever a feed could not decode is
    /// decoded here.
    @discardableResult
    func fold(
        from start: UInt64, through end: UInt64, into tables: ProjectionTables, deferring: Bool = false, recomputing: Set<UUID> = [],
        decodingIn env: Environment? = nil, feed: FoldFeed? = nil, plan: LogDecodingPlan = LogDecodingPlan()
    ) throws -> Set<UUID> {
        guard start <= end || !recomputing.isEmpty else { return [] }
        var batch = StoredProjection.Batch(tables: tables, layout: layout)
        if start <= end { batch.reserve(events: Int(min(end - start + 1, LedgerStore.rebuildChunk))) }
        batch.defersRecomputing = deferring
        batch.recompute(recomputing)
        if start <= end {
            if let feed {
                try fold(from: start, through: end, fedBy: feed, &batch)
            } else if let env, end - start + 1 >= plan.minimumEvents {
                let own = FoldFeed(env, layout: layout, from: start, through: end, runLength: plan.runLength)
                defer { own.stop() }
                try fold(from: start, through: end, fedBy: own, &batch)
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

    /// Folds the events from `start` through `end` as `feed` hands them over (each with its
    /// entry's digest hash, the fold's costliest step that depends on the event alone), and
    /// those it could not decode by decoding them here.
    private func fold(from start: UInt64, through end: UInt64, fedBy feed: FoldFeed, _ batch: inout StoredProjection.Batch) throws {
        let rest = try feed.take(from: start, through: end) { position, record in
            try batch.apply(record.event, at: position ?? 0, entryHash: record.entryHash, self)
        }
        if rest <= end { try foldDecoding(from: rest, through: end, &batch) }
    }
}

/// An event as a fold's decoder hands it over: with its entry's digest hash, for a
/// `progressRecorded`.
typealias FoldedRecord = (event: Event, entryHash: DigestSum?)

/// A fold's events, decoded ahead by a `LogDecoder` on a thread of its own. A rebuild keeps one
/// across its chunks (each a write transaction of its own): the decoder reads run by run, so it
/// goes on decoding the next chunk while a chunk's rows are written and committed, instead of
/// waiting for the next transaction to start a decoder of its own. A projection catching up
/// makes one for its range, stopped before its transaction ends.
///
/// ``take(from:through:_:)`` hands over the records of one chunk and keeps the rest of a run
/// that crosses its end for the next. A chunk that does not start where the last one ended (a
/// transaction run again after the map grew) starts a new decoder there. Whoever makes a feed
/// calls ``stop()`` once the rebuild ends, whichever way.
final class FoldFeed {
    private let env: Environment
    private let layout: StoreLayout
    private let end: UInt64
    private let runLength: Int
    private var decoder: LogDecoder<FoldedRecord>?
    /// The run the decoder handed over last (records beyond the last chunk's end wait there
    /// for the next).
    private var run: LogDecoder<FoldedRecord>.Run?
    /// The position the next record handed over is at.
    private var next: UInt64

    /// A feed of the records from position `start` through `end` of the log of `env`.
    init(_ env: Environment, layout: StoreLayout, from start: UInt64, through end: UInt64, runLength: Int) {
        self.env = env
        self.layout = layout
        self.end = end
        self.runLength = runLength
        next = start
    }

    /// Runs the feed's decoder holds at most: enough to go on while a chunk is written, few
    /// enough to keep its memory small (32,768 events in runs of 2,048).
    static let runsAheadAcrossChunks = 16

    /// A decoder of the records from `start` through `end`, each with its entry's digest hash.
    private static func decoder(
        _ env: Environment, layout: StoreLayout, from start: UInt64, through end: UInt64, runLength: Int
    ) -> LogDecoder<FoldedRecord> {
        return LogDecoder<FoldedRecord>(
            env, layout: layout, from: start, through: end, runLength: runLength, runByRun: true, runsAhead: runsAheadAcrossChunks
        ) { position, record in
            (try LedgerStore.decodeForFolding(record, position: position ?? 0), nil)
        } completing: { records in
            // The entries' hashes, two at a time, once the run is decoded.
            var hashing = EntryHashing()
            for i in records.indices {
                guard let entry = progressEntry(&records[i].item.event) else { continue }
                hashing.add(entry, i) { j, h in records[j].item.entryHash = h }
            }
            hashing.finish { j, h in records[j].item.entryHash = h }
        }
    }

    /// The progress entry `event` records, if it records one (read in place: a run's records
    /// are not copied out to be looked at).
    private static func progressEntry(_ event: inout Event) -> ProgressEntry? {
        guard case .progressRecorded(let p) = event.payload else { return nil }
        return ProgressEntry(event, p)
    }

    /// Hands `body` each record from position `start` through `last`, in log order, with its
    /// position (nil for a key that is not one: damage, for `body` to name). Returns the
    /// position from which the records through `last` are left to the caller (the decoder
    /// could not read them, or they lie beyond the feed's range); past `last` when none are.
    func take(from start: UInt64, through last: UInt64, _ body: (UInt64?, borrowing FoldedRecord) throws -> Void) throws -> UInt64 {
        if start != next { restart(at: start) }
        guard start <= end else { return start }
        if decoder == nil && run?.isEmpty ?? true {
            decoder = Self.decoder(env, layout: layout, from: start, through: end, runLength: runLength)
        }
        while true {
            if try handOn(through: last, body) { return next }
            guard let decoder else { return next }
            switch try decoder.next() {
            case .run(let run):
                self.run = run
            case .end:
                // Every record through the feed's end was handed over.
                stopDecoder()
                next = min(last, end) + 1
                return next
            case .unavailable:
                stopDecoder()
                return next
            }
        }
    }

    private func stopDecoder() {
        decoder?.stop()
        decoder = nil
    }

    /// Hands `body` the records of the current run, each moved out of it, while they lie
    /// through `last`; true when one lies beyond.
    private func handOn(through last: UInt64, _ body: (UInt64?, borrowing FoldedRecord) throws -> Void) throws -> Bool {
        guard let run else { return false }
        while !run.isEmpty {
            if let position = run.nextPosition {
                guard position <= last else {
                    next = last + 1
                    return true
                }
                next = position + 1
            }
            // Lent to `body` (see `takeNext`): no copy of the event per record.
            try run.takeNext(body)
        }
        return false
    }

    private func restart(at start: UInt64) {
        stopDecoder()
        run = nil
        next = start
    }

    /// Stops the decoder (once it has ended its thread, no transaction of it is open).
    func stop() { restart(at: next) }
}
