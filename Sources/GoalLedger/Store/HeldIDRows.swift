import Foundation

/// The id index's rows of a long append's chunks, held in memory from one write of the
/// projection's rows to the next (`LedgerStore.appendChunks`), then put into the index in one
/// pass in key order (`StoreTransaction.putIDs`).
///
/// Ids are random, so each chunk's rows put as the chunk is written would land all over a
/// B-tree that every chunk grows, and the next chunk's duplicate check would search it again
/// for each of its ids. Held here, each chunk's rows are one run in key order: a chunk's check
/// walks the runs beside its own sorted ids, reading memory in order where a hash table or a
/// B-tree would jump about, and the index's pages are each written once a flush. While rows
/// are held, whatever the append looks up by id asks them first (`LocalBatch`); they are put
/// before the projection's rows, whose upkeep reads the index, and before the transaction
/// commits, so no other reader ever misses them.
///
/// An app may hand over chunks of any size, a draft at a time among them. So the runs are kept
/// few: a run is merged with the one before it once it is as long, as in a binary counter (at
/// most about log₂ of the rows held, each row moved about as often); and a chunk looks its ids
/// up in each run by galloping (steps that double, then a bisection) instead of walking it.
struct HeldIDRows {
    typealias Row = (key: IDWords, position: UInt64)

    /// Runs of held rows, each in key order, each shorter than the one before it.
    private var runs: [[Row]] = []
    /// How many rows the runs hold.
    private var count = 0
    /// The held keys' bits (`KeyFilter`): a key the filter turns away is in no run, and is not
    /// sought there.
    private var filter = KeyFilter()

    var isEmpty: Bool { runs.isEmpty }

    /// How many runs the rows are held in (for tests: about log₂ of the rows at most).
    var runCount: Int { runs.count }

    /// The position of the held event with id `id`; nil when no held row names it.
    func position(of id: UUID) -> UInt64? {
        let key = IDWords(id)
        guard filter.mayHold(IDIndex.key(key)) else { return nil }
        for run in runs {
            let i = Self.firstIndex(notBelow: key, in: run, from: 0)
            if i < run.count, run[i].key == key { return run[i].position }
        }
        return nil
    }

    /// The index of the first row of `run` from `start` on (before `end`, or at it when there is
    /// none before) whose key is not below `key`.
    private static func firstIndex(notBelow key: IDWords, in run: [Row], from start: Int, to end: Int? = nil) -> Int {
        var (low, high) = (start, end ?? run.count)
        while low < high {
            let middle = low + (high - low) / 2
            if run[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of the first row of `run` from `start` on whose key is not below `key`, found
    /// by steps of 1, 2, 4 … from `start`, then a bisection of the last step: as few reads as a
    /// walk where the keys sought are as dense as the run's, as a bisection where they are far
    /// sparser, and about the logarithm of the distance in between.
    private static func gallop(to key: IDWords, in run: [Row], from start: Int) -> Int {
        // Every row below `low` has a key below `key`; the row at `probe`, if any, is the next read.
        var low = start
        var probe = start
        var step = 1
        while probe < run.count, run[probe].key < key {
            low = probe + 1
            probe = low + step
            step <<= 1
        }
        // The row at `probe`, when there is one, is not below `key`.
        return firstIndex(notBelow: key, in: run, from: low, to: min(probe, run.count))
    }

    /// Adds to `found` the position of each of `wanted` (in key order) that a held row names.
    func positions(ofSorted wanted: [(key: IDWords, id: UUID)], into found: inout [UUID: UInt64]) {
        guard !runs.isEmpty else { return }
        // Most ids are new: only those the filter lets through are sought, still in key order.
        let sought = wanted.filter { filter.mayHold(IDIndex.key($0.key)) }
        for run in runs {
            // Both in key order: each id is sought from where the last one was found.
            var j = 0
            for w in sought {
                j = Self.gallop(to: w.key, in: run, from: j)
                guard j < run.count else { break }
                if run[j].key == w.key { found[w.id] = run[j].position }
            }
        }
    }

    /// Holds a written chunk's rows (ids new to the store: the chunk's check found none held).
    mutating func hold(_ rows: [Row]) {
        guard !rows.isEmpty else { return }
        count += rows.count
        if filter.wantsRebuilding(for: count) {
            filter = KeyFilter(for: count)
            for run in runs { for row in run { filter.insert(IDIndex.key(row.key)) } }
        }
        for row in rows { filter.insert(IDIndex.key(row.key)) }
        var run = rows
        run.sortStably(byIDWords: \.key)
        while let last = runs.last, last.count <= run.count {
            run = Self.merged(runs.removeLast(), run)
        }
        runs.append(run)
    }

    /// The rows of two runs in one, in key order (the older's first among equal keys, which a
    /// store's ids never are).
    private static func merged(_ older: [Row], _ newer: [Row]) -> [Row] {
        var out: [Row] = []
        out.reserveCapacity(older.count + newer.count)
        var (i, j) = (0, 0)
        while i < older.count, j < newer.count {
            if newer[j].key < older[i].key {
                out.append(newer[j])
                j += 1
            } else {
                out.append(older[i])
                i += 1
            }
        }
        out += older[i...]
        out += newer[j...]
        return out
    }

    /// Every held row and `rows`, in key order, for the index; nothing is held after. The runs
    /// are merged, the shortest first, so the index's put finds them in order and sorts nothing.
    mutating func take(adding rows: [Row]) -> [Row] {
        hold(rows)
        var all = runs.popLast() ?? []
        while let longer = runs.popLast() { all = Self.merged(longer, all) }
        count = 0
        filter = KeyFilter()
        return all
    }
}
