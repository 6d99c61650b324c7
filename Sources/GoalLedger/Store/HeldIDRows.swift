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
struct HeldIDRows {
    typealias Row = (key: IDWords, position: UInt64)

    /// Each held chunk's rows, in key order.
    private var runs: [[Row]] = []

    var isEmpty: Bool { runs.isEmpty }

    /// The position of the held event with id `id`; nil when no held row names it.
    func position(of id: UUID) -> UInt64? {
        let key = IDWords(id)
        for run in runs {
            // The first row whose key is not below `key`.
            var (low, high) = (0, run.count)
            while low < high {
                let middle = (low + high) / 2
                if run[middle].key < key { low = middle + 1 } else { high = middle }
            }
            if low < run.count, run[low].key == key { return run[low].position }
        }
        return nil
    }

    /// Adds to `found` the position of each of `wanted` (in key order) that a held row names.
    func positions(ofSorted wanted: [(key: IDWords, id: UUID)], into found: inout [UUID: UInt64]) {
        for run in runs {
            // Both in key order: one walk of each.
            var j = 0
            for w in wanted {
                while j < run.count, run[j].key < w.key { j += 1 }
                guard j < run.count else { break }
                if run[j].key == w.key { found[w.id] = run[j].position }
            }
        }
    }

    /// Holds a written chunk's rows (ids new to the store: the chunk's check found none held).
    mutating func hold(_ rows: [Row]) {
        guard !rows.isEmpty else { return }
        var run = rows
        run.sortStably(byIDWords: \.key)
        runs.append(run)
    }

    /// Every held row and `rows`, in no order, for the index; nothing is held after.
    mutating func take(adding rows: [Row]) -> [Row] {
        var all = rows
        all.reserveCapacity(runs.reduce(rows.count) { $0 + $1.count })
        for run in runs { all += run }
        runs = []
        return all
    }
}
