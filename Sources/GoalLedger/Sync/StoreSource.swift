import Foundation

/// A store's events as a ``PageWalk`` reads them for an exchange with another store: each
/// origin in sequence order, a chunk at a time in a read transaction of its own, through the
/// head (or the revocation's cut) read when the walk began.
struct StoreSource: RangedPageSource {
    let store: LedgerStore
    var ranges = SequenceRanges()

    init(_ store: LedgerStore) { self.store = store }

    mutating func read(_ origin: String, count: Int) throws(LedgerError) -> PageChunk {
        guard let (next, last) = ranges.unread(origin) else {
            var done = PageChunk()
            done.ended = true
            return done
        }
        var chunk = try store.reading { try $0.records(of: origin, from: next, through: last, limit: max(1, count)) }
        if let read = chunk.events.last?.sequence { ranges.read(origin, through: read) }
        chunk.ended = chunk.events.isEmpty || ranges.unread(origin) == nil
        return chunk
    }
}
