import Foundation

/// A set of id index keys (`IDIndex.key`, an id's first 8 bytes) that may answer yes for a key
/// not in it, never no for one in it: two bits per key, each at an address made by
/// multiplying the key by an odd number drawn once per process and keeping the product's top
/// bits. Made with 32 to 64 bits for each key it is to hold, and made again once it has fewer
/// than 16 (`wantsRebuilding`), so about 1 to 14 keys in 1,000 not held find both their bits
/// set.
///
/// Ids come from outside, so some may share their bits on purpose: each of those is then only
/// sought where it would have been without the filter.
struct KeyFilter {
    private var words: [UInt64]
    /// log₂ of the bits in `words` (0 while there are none).
    private let bitsLog2: Int

    /// The multipliers, drawn once per process so that which keys share bits cannot be known
    /// ahead.
    private static let multipliers = (UInt64.random(in: 1...UInt64.max) | 1, UInt64.random(in: 1...UInt64.max) | 1)

    /// No bits: every key may be held (see `mayHold`).
    init() {
        words = []
        bitsLog2 = 0
    }

    /// Room for `count` keys at 32 bits or more each (at most 2⁴⁰ bits).
    init(for count: Int) {
        var log2 = 6
        while log2 < 40, (1 << log2) / 32 < count { log2 += 1 }
        bitsLog2 = log2
        words = [UInt64](repeating: 0, count: 1 << (log2 - 6))
    }

    /// Whether the filter has fewer than 16 bits for each of `count` keys.
    func wantsRebuilding(for count: Int) -> Bool { words.isEmpty || count > (words.count << 6) / 16 }

    @inline(__always)
    private func bits(_ key: UInt64) -> (Int, Int) {
        let shift = UInt64(64 - bitsLog2)
        return (
            Int(truncatingIfNeeded: (key &* Self.multipliers.0) >> shift),
            Int(truncatingIfNeeded: (key &* Self.multipliers.1) >> shift)
        )
    }

    /// Adds `key` (a filter without bits takes none: it holds every key already).
    mutating func insert(_ key: UInt64) {
        guard !words.isEmpty else { return }
        let (a, b) = bits(key)
        words[a >> 6] |= 1 << (a & 63)
        words[b >> 6] |= 1 << (b & 63)
    }

    /// False only for a key that was never inserted.
    @inline(__always)
    func mayHold(_ key: UInt64) -> Bool {
        if words.isEmpty { return true }
        let (a, b) = bits(key)
        return words[a >> 6] & (1 << (a & 63)) != 0 && words[b >> 6] & (1 << (b & 63)) != 0
    }
}

/// The keys of a store's id index, kept by the store from one of its writes to the next, so
/// that an append does not seek each of its new ids in the index (`StoreTransaction.storedIDs`):
/// a key the filter does not hold is in neither table. Most ids an append brings are new.
///
/// The filter is only used where it holds every key the index holds, which the store knows
/// from the write transactions it runs itself (`LedgerStore.commit`):
/// - it was made, or last brought up to date, in this write transaction, which has as many
///   id rows now as then; or
/// - it held every key as the transaction before this one committed (LMDB numbers write
///   transactions one after another, and only a commit moves the number on), and the id rows
///   number the same.
///
/// So a write of any other kind (another process, the store's rebuild or upgrade, an import
/// in this transaction) leaves the filter unused until it is made again: it is made from the
/// index's keys once the appends have sought an eighth as many ids in the index as it holds
/// (each of them one search from the root of a B-tree). A store of more than `maxRows` id
/// rows keeps none.
struct StoredIDFilter {
    /// A write transaction (LMDB's number) and how many id rows it had.
    struct Mark: Equatable {
        var txn: Int
        var rows: Int
    }

    /// At most 2²² rows (4,194,304): the filter then takes 16 MiB.
    static let maxRows = 1 << 22

    private var filter = KeyFilter()
    /// How many keys `filter` was given.
    private var keys = 0
    /// The transaction whose id rows `filter` holds every key of, as they were committed.
    private var committed: Mark?
    /// The running transaction whose id rows `filter` holds every key of, as they are now.
    private var live: Mark?
    /// Ids sought in the index without the filter since it was last usable.
    private var soughtWithout = 0

    /// Whether the filter held every key of the index when the store's last write committed
    /// (for tests: the next append may use it).
    var holdsCommittedKeys: Bool { committed != nil }

    /// A write transaction numbered `txn` begins, with `rows` id rows.
    mutating func begin(txn: Int, rows: Int) {
        if let c = committed, c.txn == txn - 1, c.rows == rows {
            live = Mark(txn: txn, rows: rows)
        } else {
            live = nil
            committed = nil
        }
    }

    /// Whether the filter holds every key of the index as transaction `txn` has it now, with
    /// `rows` rows (see the type's rules). A check that finds otherwise drops it for the rest
    /// of the transaction.
    mutating func holdsEveryKey(txn: Int, rows: Int) -> Bool {
        if live == Mark(txn: txn, rows: rows) { return true }
        live = nil
        return false
    }

    /// The filter for a batch of `ids` about to be sought in the index of transaction `txn`
    /// (`rows` rows), made from the index's keys first when it is time (see the type); nil
    /// when the batch must seek every id.
    mutating func filter(
        forSeeking ids: Int, txn: Int, rows: Int, _ index: borrowing StoreTransaction
    ) throws -> KeyFilter? {
        if holdsEveryKey(txn: txn, rows: rows) { return filter }
        soughtWithout += ids
        guard rows <= Self.maxRows, soughtWithout >= rows / 8 else { return nil }
        try make(from: index, txn: txn, rows: rows)
        return filter
    }

    /// After transaction `txn` put `put` into the index, which had `before` id rows and has
    /// `after` now: the filter takes their keys, if it held every key before.
    mutating func added(_ put: [(key: IDWords, position: UInt64)], txn: Int, before: Int, after: Int, _ index: borrowing StoreTransaction) throws {
        guard holdsEveryKey(txn: txn, rows: before) else { return }
        keys += put.count
        if after > Self.maxRows {
            filter = KeyFilter()
            keys = 0
            live = nil
            return
        }
        if filter.wantsRebuilding(for: keys) {
            try make(from: index, txn: txn, rows: after)
            return
        }
        for row in put { filter.insert(IDIndex.key(row.key)) }
        live = Mark(txn: txn, rows: after)
    }

    /// The transaction `txn`, which ends with `rows` id rows, is about to commit.
    mutating func ending(txn: Int, rows: Int) { _ = holdsEveryKey(txn: txn, rows: rows) }

    /// The transaction `txn` committed.
    mutating func didCommit(txn: Int) {
        // Another thread's write may have begun meanwhile: its state is left as it is.
        guard let l = live, l.txn == txn else { return }
        committed = l
        live = nil
    }

    /// Made from every key of both tables of the index, as transaction `txn` has them.
    private mutating func make(from index: borrowing StoreTransaction, txn: Int, rows: Int) throws {
        var made = KeyFilter(for: max(rows, 1_024))
        var count = 0
        try index.forEachIDKey { key in
            made.insert(key)
            count += 1
        }
        filter = made
        keys = count
        soughtWithout = 0
        live = Mark(txn: txn, rows: rows)
    }
}
