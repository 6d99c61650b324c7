import Foundation

/// Where a ``PageWalk`` reads each origin's events from: a hub's table, an export file,
/// another store.
package protocol PageSource {
    /// `origin`'s next events in sequence order, at most `count` (at least one unless the
    /// chunk ends the origin's read).
    mutating func read(_ origin: String, count: Int) throws(LedgerError) -> PageChunk
    /// How many events of `origin` after sequence `given` (nil: from its first) the source
    /// holds for the walk: what an import of everything would count as waiting from there.
    func remaining(_ origin: String, after given: UInt64?) -> Int
}

/// Each origin's sequences a ``PageSource`` reads in order: the first wanted, the next to read
/// and the last (a store's or a hub's head, read when the walk began).
package struct SequenceRanges {
    private var ranges: [String: (first: UInt64, next: UInt64, last: UInt64)] = [:]

    package init() {}

    /// Reads `origin` from sequence `first` through `last`.
    package mutating func add(_ origin: String, from first: UInt64, through last: UInt64) {
        ranges[origin] = (first, first, last)
    }

    /// The next sequence of `origin` to read and the last, unless all of it was read.
    package func unread(_ origin: String) -> (next: UInt64, last: UInt64)? {
        guard let r = ranges[origin], r.next <= r.last else { return nil }
        return (r.next, r.last)
    }

    /// Notes that `origin` was read through `sequence`.
    package mutating func read(_ origin: String, through sequence: UInt64) {
        ranges[origin]?.next = sequence &+ 1
    }

    /// How many of `origin`'s sequences after `given` (nil: from its first) the range holds.
    package func remaining(_ origin: String, after given: UInt64?) -> Int {
        guard let range = ranges[origin] else { return 0 }
        let from = given.map { $0 &+ 1 } ?? range.first
        return from > range.last || from == 0 ? 0 : Int(clamping: range.last - from + 1)
    }
}

/// A source that reads each origin from a first sequence through a last (a hub's table, another
/// store), keeping its ranges in `ranges`.
package protocol RangedPageSource: PageSource {
    var ranges: SequenceRanges { get set }
}

extension RangedPageSource {
    package func remaining(_ origin: String, after given: UInt64?) -> Int { ranges.remaining(origin, after: given) }
}

extension PageWalk where Source: RangedPageSource {
    /// Reads `origin` from sequence `first` through `last`.
    package mutating func add(_ origin: String, from first: UInt64, through last: UInt64) {
        source.ranges.add(origin, from: first, through: last)
        add(origin)
    }
}

/// A chunk of one origin's events read from a ``PageSource``.
package struct PageChunk {
    package var events: [Event] = []
    package var records: [[UInt8]] = []
    /// The unreadable record that ended the read, named with the page that gives the events
    /// before it (an import takes those, and lets the rest wait from there).
    package var unreadable: WaitingEvents?
    /// Whether nothing more of the origin is read after this chunk.
    package var ended = false

    package init() {}
}

/// A read of a ledger's events a page at a time, so that a pull, a clone, a sync or an import
/// of any size holds one page in memory, never the whole backlog.
///
/// Each origin is read in sequence order, in chunks. A page takes the origins' events in
/// canonical order (clock, then origin): the order one import of everything writes, in which
/// every event comes after what it rests on (its chain's predecessor, its device's enrolment,
/// which its clock follows). Past its size, a page takes each origin whose run is open on to
/// the event whose signature closes it, since an import takes a chained run only up to that
/// signature; a run is at most `LedgerStore.signedRunLength` events in a store that signs long
/// batches in runs.
package struct PageWalk<Source: PageSource> {
    /// One origin's read.
    struct Stream {
        let origin: String
        /// Events read and not yet given, from `taken` on.
        var events: [Event] = []
        var records: [[UInt8]] = []
        var taken = 0
        /// The last sequence a page gave.
        var given: UInt64?
        /// Whether nothing more is read (the source's end, an unreadable record, or stopped).
        var ended = false
        var unreadable: WaitingEvents?
        /// Whether a page named `unreadable`: it counts the rest of the origin.
        var named = false

        var peek: Event? { taken < events.count ? events[taken] : nil }
        var isDone: Bool { taken == events.count && ended }
    }

    /// A page: its change set, the records found unreadable while reading it, and each origin's
    /// last sequence in it.
    package struct Page {
        package var changes: ChangeSet
        package var unreadable: [WaitingEvents]
        package var given: [String: UInt64]
    }

    package let ledger: UUID
    package var source: Source
    private var streams: [Stream] = []
    private var index: [String: Int] = [:]
    /// The events a page holds before only open runs go on (each page is an import of its own,
    /// which reads and writes the state of every goal it touches, so a page is large), and its
    /// record bytes.
    package let pageEvents: Int
    package let pageBytes = 32 << 20

    package init(ledger: UUID, source: Source, pageEvents: Int) {
        self.ledger = ledger
        self.source = source
        self.pageEvents = max(1, pageEvents)
    }

    /// Whether every origin's read is done.
    package var isDone: Bool { streams.allSatisfy(\.isDone) }

    /// Reads `origin` (again, from what the source now gives, if it was read already).
    package mutating func add(_ origin: String) {
        let stream = Stream(origin: origin)
        if let i = index[origin] {
            streams[i] = stream
        } else {
            index[origin] = streams.count
            streams.append(stream)
        }
    }

    /// Stops reading `origin`: how many of its events no page gave (the rest of an origin whose
    /// events wait, for the count an import of everything would name).
    package mutating func stop(_ origin: String) -> Int {
        guard let i = index[origin], !streams[i].named else { return 0 }
        let rest = source.remaining(origin, after: streams[i].given)
        streams[i].events = []
        streams[i].records = []
        streams[i].taken = 0
        streams[i].ended = true
        return rest
    }

    /// The next page (empty once the walk is done).
    package mutating func nextPage() throws(LedgerError) -> Page {
        var unreadable: [WaitingEvents] = []
        var given = [UInt64?](repeating: nil, count: streams.count)
        var events: [Event] = []
        var records: [[UInt8]] = []
        var bytes = 0
        // Each origin's next event, read if need be; the earliest goes next.
        var heap = OriginHeap()
        for i in streams.indices.sorted(by: { String.bytesPrecede(streams[$0].origin, streams[$1].origin) }) {
            try fill(i)
            if let e = streams[i].peek { heap.push(e.key, i) }
        }
        var open = Set<Int>()
        // Takes stream `i`'s next `n` events (`n` at most what it holds read).
        func take(_ i: Int, _ n: Int) throws(LedgerError) {
            let t = streams[i].taken
            for r in t..<(t + n) { bytes += streams[i].records[r].count }
            if events.isEmpty && t == 0 && n == streams[i].events.count {
                // A whole chunk that starts the page (one origin, or one read ahead): moved, not copied.
                swap(&events, &streams[i].events)
                swap(&records, &streams[i].records)
            } else {
                events.append(contentsOf: streams[i].events[t..<(t + n)])
                records.append(contentsOf: streams[i].records[t..<(t + n)])
                streams[i].taken = t + n
                if t + n == streams[i].events.count {
                    streams[i].events = []
                    streams[i].records = []
                    streams[i].taken = 0
                }
            }
            let event = events[events.count - 1]
            streams[i].given = event.sequence
            given[i] = event.sequence
            if event.previousHash != nil && event.signature == nil { open.insert(i) } else { open.remove(i) }
            try fill(i)
        }
        while events.count < pageEvents && bytes < pageBytes, let i = heap.pop() {
            // While no other origin has an event before the page ends, this one's go in a run.
            var n = 1
            if heap.isEmpty {
                let t = streams[i].taken
                let end = t + min(streams[i].events.count - t, pageEvents - events.count)
                var b = bytes + streams[i].records[t].count
                while t + n < end && b < pageBytes {
                    b += streams[i].records[t + n].count
                    n += 1
                }
            }
            try take(i, n)
            if let e = streams[i].peek { heap.push(e.key, i) }
        }
        // Past the page's size: records that claim the sequence a page gave last go with it (a
        // file may hold an event twice, or two events at one place: a fork the import names as
        // an import of everything would), and each open run goes on to its signature.
        for i in given.indices where given[i] != nil {
            while let e = streams[i].peek, e.sequence == given[i] { try take(i, 1) }
        }
        for i in open.sorted(by: { String.bytesPrecede(streams[$0].origin, streams[$1].origin) }) {
            while let e = streams[i].peek, open.contains(i) || e.sequence == given[i] { try take(i, 1) }
        }
        for i in streams.indices where streams[i].taken == streams[i].events.count {
            if let w = streams[i].unreadable, !streams[i].named {
                unreadable.append(w)
                streams[i].named = true
            }
        }
        var gave: [String: UInt64] = [:]
        for i in given.indices { if let g = given[i] { gave[streams[i].origin] = g } }
        return Page(changes: ChangeSet(ledger: ledger, events: events, records: records), unreadable: unreadable, given: gave)
    }

    /// Reads stream `i`'s next chunk when all it read was given: the page's size shared among
    /// the origins (at least 64 events), so that what is read ahead stays about one page.
    private mutating func fill(_ i: Int) throws(LedgerError) {
        guard streams[i].taken == streams[i].events.count, !streams[i].ended else { return }
        let chunk = try source.read(streams[i].origin, count: max(64, pageEvents / max(1, streams.count)))
        streams[i].events = chunk.events
        streams[i].records = chunk.records
        streams[i].taken = 0
        streams[i].ended = chunk.ended || chunk.events.isEmpty
        if let w = chunk.unreadable {
            streams[i].unreadable = w
            streams[i].ended = true
        }
    }

    /// Applies the walk's pages one after another through `apply` (`last`: the page after which
    /// the walk is done; an empty one ends a walk whose last origins stopped), `unreadable` with
    /// the first; `page` sees each page before it is applied, and may add origins to the walk.
    /// What the pages did is added up as one import of everything would report it: an origin
    /// whose events wait, or that holds no key, is read no further, and the events of it no page
    /// gave are counted with what waits of it (`heads` tells from the store which origins a page
    /// took nothing of; `rename` names the whole count in the store).
    package mutating func importPages(
        unreadable: [WaitingEvents], page: (ChangeSet, inout PageWalk) -> Void = { _, _ in },
        apply: (_ changes: ChangeSet, _ unreadable: [WaitingEvents], _ last: Bool) throws(LedgerError) -> ImportResult,
        heads: () throws(LedgerError) -> [String: UInt64], rename: (WaitingEvents) throws(LedgerError) -> Void
    ) throws(LedgerError) -> ImportResult {
        var total = ImportResult()
        var waiting: [String: WaitingEvents] = [:]
        var revoked: [RevokedEvents] = []
        var before = unreadable
        while true {
            let next = try nextPage()
            page(next.changes, &self)
            let last = isDone
            let r = try apply(next.changes, before + next.unreadable, last)
            before = []
            total.imported += r.imported
            total.alreadyPresent += r.alreadyPresent
            total.setAside += r.setAside
            total.unknownOrigins += r.unknownOrigins
            total.unknownOriginEvents = [total.unknownOriginEvents, r.unknownOriginEvents].saturatingSum { $0 }
            for e in r.revoked {
                if let i = revoked.firstIndex(where: { $0.origin == e.origin }) { revoked[i].count += e.count } else { revoked.append(e) }
            }
            // Counts a source gives (a hub's heads can be any number up to 2^63) are added
            // saturating: an import says "at least Int.max" rather than trap.
            for w in r.waiting {
                var merged = waiting[w.origin] ?? w
                if waiting[w.origin] != nil { merged.count = [merged.count, w.count].saturatingSum { $0 } }
                merged.count = [merged.count, stop(w.origin)].saturatingSum { $0 }
                waiting[w.origin] = merged
                if merged.count != w.count { try rename(merged) }
            }
            if r.unknownOrigins > 0 {
                // The origins the page offered that it took nothing of, and that do not wait.
                let held = try heads()
                for (origin, given) in next.given
                where waiting[origin] == nil && !r.revoked.contains(where: { $0.origin == origin }) && (held[origin] ?? 0) < given {
                    total.unknownOriginEvents = [total.unknownOriginEvents, stop(origin)].saturatingSum { $0 }
                }
            }
            if last { break }
        }
        total.revoked = revoked
        total.waiting = waiting.values.sorted { String.bytesPrecede($0.origin, $1.origin) }
        return total
    }
}

/// The origins a page reads from, by the canonical key of each one's next event: a binary heap,
/// so that a page of many origins costs a logarithm of their number per event.
private struct OriginHeap {
    private var items: [(key: CanonicalKey, stream: Int)] = []

    mutating func push(_ key: CanonicalKey, _ stream: Int) {
        items.append((key, stream))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].key < items[parent].key else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    var isEmpty: Bool { items.isEmpty }

    /// The stream whose next event comes first, removed.
    mutating func pop() -> Int? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var i = 0
        while true {
            let (l, r) = (2 * i + 1, 2 * i + 2)
            var least = i
            if l < items.count && items[l].key < items[least].key { least = l }
            if r < items.count && items[r].key < items[least].key { least = r }
            guard least != i else { break }
            items.swapAt(i, least)
            i = least
        }
        return top.stream
    }
}
