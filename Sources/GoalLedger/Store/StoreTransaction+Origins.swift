import Foundation

/// A row of the origin index: `count` events of one origin at consecutive origin sequences from
/// `first` (the sequence in the row's key), stored at consecutive log positions from `position`.
///
/// A device's own appends make one run, however many events it writes, and an import makes one
/// per origin and stretch of the log it lands in, where the index used to keep a row per event
/// (format 1: a third of the indexes' pages).
struct OriginRun: Equatable {
    let first: UInt64
    let position: UInt64
    let count: UInt64

    /// The row's value: the first position, then the count (each u64 BE).
    static let valueSize = 16

    init(first: UInt64, position: UInt64, count: UInt64) {
        self.first = first
        self.position = position
        self.count = count
    }

    /// The run a stored row holds, when `key` is a row of the origin whose key prefix (name and
    /// 0x00) is `prefix` and `value` has a run's form: positions and sequences from 1, within
    /// the largest sequence a store holds, without overflow. Nil otherwise (another origin's row,
    /// or damage).
    init?(prefix: [UInt8], key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        guard key.count == prefix.count + 8, value.count == Self.valueSize, key.prefix(prefix.count).elementsEqual(prefix) else {
            return nil
        }
        let first = UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[prefix.count...]))
        let position = UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: value[0..<8]))
        let count = UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: value[8..<16]))
        guard (1...Event.largestSequence).contains(first), count >= 1, count - 1 <= Event.largestSequence - first, position >= 1,
            position <= UInt64.max - count
        else { return nil }
        self.init(first: first, position: position, count: count)
    }

    var value: [UInt8] { position.bigEndianBytes + count.bigEndianBytes }

    /// The sequence after the run's last.
    var next: UInt64 { first + count }

    /// The position of `sequence`, when the run holds it.
    func position(of sequence: UInt64) -> UInt64? {
        sequence >= first && sequence < next ? position + (sequence - first) : nil
    }

    /// Whether the event of `sequence` at `position` goes on from this run (the next sequence, at
    /// the next position).
    func isFollowed(by sequence: UInt64, at position: UInt64) -> Bool {
        sequence == next && position == self.position + count
    }

    /// The run with one more event.
    var lengthened: OriginRun { OriginRun(first: first, position: position, count: count + 1) }
}

// The origin index: for each origin, its events' positions by sequence, as runs.
extension StoreTransaction {
    /// The position of `origin`'s event of origin sequence `sequence`, through the origin index;
    /// nil when the store does not hold it.
    func position(origin: String, sequence: UInt64) throws -> UInt64? {
        try originRun(origin, atOrBefore: sequence)?.position(of: sequence)
    }

    /// `origin`'s run that starts at `sequence` or is the last to start before it; nil when it
    /// has none (or the row there is not a run's).
    func originRun(_ origin: String, atOrBefore sequence: UInt64) throws -> OriginRun? {
        let prefix = Array(origin.utf8) + [0]
        var found: OriginRun?
        try lmdb.scan(layout.origins, fromFloor: StoreLayout.originKey(origin, sequence)) { key, value in
            found = OriginRun(prefix: prefix, key: key, value: value)
            return false
        }
        guard let found, found.first <= sequence else { return nil }
        return found
    }

    /// Visits `origin`'s events from sequence `first` on, in sequence order, each with its log
    /// position, until `body` returns false, as the origin index holds them (one run after the
    /// other). A row of the origin that is not a run's is damage.
    func scanPositions(
        of origin: String, from first: UInt64, _ body: (_ sequence: UInt64, _ position: UInt64) throws -> Bool
    ) throws {
        let prefix = Array(origin.utf8) + [0]
        try lmdb.scan(layout.origins, fromFloor: StoreLayout.originKey(origin, first)) { key, value in
            guard key.count >= prefix.count, key.prefix(prefix.count).elementsEqual(prefix) else {
                // The floor of an origin's first run is the row of an origin before it.
                return key.lexicographicallyPrecedes(prefix)
            }
            guard let run = OriginRun(prefix: prefix, key: key, value: value) else {
                throw LedgerError.damaged("the origin index holds a row of \(origin) that is not a run of positions")
            }
            // The floor may be a run that ends before `first`.
            guard max(run.first, first) < run.next else { return true }
            for sequence in max(run.first, first)..<run.next {
                if try !body(sequence, run.position + (sequence - run.first)) { return false }
            }
            return true
        }
    }

    /// The origin index's rows of a batch: the batch's events of each origin (`origins`, each an
    /// event's index in `events` and its position) joined into runs, the first joined to the
    /// origin's stored last run when it goes on from it. An origin's new events always follow
    /// its head, so one run per origin and stretch of the log is written, not a row per event.
    func putOrigins(_ origins: inout [(at: Int, position: UInt64)], of events: [Event]) throws {
        origins.sort { a, b in
            let x = events[a.at]
            let y = events[b.at]
            return x.origin == y.origin ? x.sequence < y.sequence : String.bytesPrecede(x.origin, y.origin)
        }
        var i = 0
        while i < origins.count {
            let origin = events[origins[i].at].origin
            var runs: [OriginRun] = []
            while i < origins.count, events[origins[i].at].origin == origin {
                let (sequence, position) = (events[origins[i].at].sequence, origins[i].position)
                if let last = runs.last, last.isFollowed(by: sequence, at: position) {
                    runs[runs.count - 1] = last.lengthened
                } else {
                    runs.append(OriginRun(first: sequence, position: position, count: 1))
                }
                i += 1
            }
            var joined = false
            if let stored = try originRun(origin, atOrBefore: runs[0].first), stored.isFollowed(by: runs[0].first, at: runs[0].position) {
                runs[0] = OriginRun(first: stored.first, position: stored.position, count: stored.count + runs[0].count)
                joined = true
            }
            for (k, run) in runs.enumerated() {
                // A new run's key must be new: a second row for a sequence held is a broken write.
                try put(layout.origins, key: StoreLayout.originKey(origin, run.first), value: run.value, options: k == 0 && joined ? [] : .noOverwrite)
            }
        }
    }

    /// The origin index of a format-1 store (a row per event, its value the position) rewritten
    /// as runs, in this transaction.
    func rewriteOriginsAsRuns() throws {
        var rows: [(key: [UInt8], run: OriginRun)] = []
        var origin: [UInt8] = []
        try lmdb.scan(layout.origins) { key, value in
            let sequence = key.count > 9 ? UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...])) : 0
            let position = value.count == 8 ? UInt64(bigEndianBytes: value) : 0
            guard key.count > 9, key[key.count - 9] == 0, (1...Event.largestSequence).contains(sequence), position >= 1,
                position < UInt64(Int64.max)
            else {
                throw LedgerError.damaged("the origin index holds a row that is not an origin's sequence and a position")
            }
            let name = Array(key[..<(key.count - 9)])
            if name == origin, let last = rows.last?.run, last.isFollowed(by: sequence, at: position) {
                rows[rows.count - 1].run = last.lengthened
            } else {
                origin = name
                rows.append((Array(key), OriginRun(first: sequence, position: position, count: 1)))
            }
            return true
        }
        try clear(layout.origins)
        for row in rows { try put(layout.origins, key: row.key, value: row.run.value, options: .append) }
    }
}
