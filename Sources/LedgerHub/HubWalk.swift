import Foundation
import GoalLedger
import PostgreSQL

/// A read of a ledger's events from the hub a page at a time, so that a pull or a clone of any
/// size holds one page in memory, never the whole backlog.
///
/// Each origin is read in sequence order, in chunks (`SELECT … ORDER BY sequence LIMIT`, by its
/// primary key). A page takes the origins' events in canonical order (clock, then origin): the
/// order one import of everything writes, in which every event comes after what it rests on
/// (its chain's predecessor, its device's enrolment, which its clock follows). Past its size, a
/// page takes each origin whose run is open on to the event whose signature closes it, since an
/// import takes a chained run only up to that signature; a run is at most
/// `LedgerStore.signedRunLength` events in a store that signs long batches in runs.
///
/// A record that is damaged, or that contradicts the columns the hub files it under, ends its
/// origin's read: it and the rest of its origin are named in the page's `unreadable`.
struct HubWalk {
    /// One origin's read.
    struct Stream {
        let origin: String
        /// The next sequence to read from the hub, and the last to read.
        var next: UInt64
        let last: UInt64
        /// Rows read and not yet given, from `taken` on.
        var events: [Event] = []
        var records: [[UInt8]] = []
        var taken = 0
        /// The last sequence a page gave.
        var given: UInt64?
        /// Whether nothing more is read (past `last`, an unreadable record, or stopped).
        var ended = false
        /// The unreadable record that ended the read, named with the page that gives the
        /// events before it (an import takes those, and lets the rest wait from there).
        var unreadable: WaitingEvents?
        /// Whether a page named it: it counts the rest of the origin.
        var named = false

        var peek: Event? { taken < events.count ? events[taken] : nil }
        var isDone: Bool { taken == events.count && (ended || next > last) }
    }

    /// A page: its change set, the records found unreadable while reading it, and each origin's
    /// last sequence in it.
    struct Page {
        var changes: ChangeSet
        var unreadable: [WaitingEvents]
        var given: [String: UInt64]
    }

    let ledger: UUID
    private var streams: [Stream] = []
    private var index: [String: Int] = [:]
    /// The events a page holds before only open runs go on (`Hub/pageEvents`: each page is an
    /// import of its own, which reads and writes the state of every goal it touches, so a page
    /// is large), and its record bytes.
    let pageEvents: Int
    var pageBytes = 32 << 20

    init(ledger: UUID, pageEvents: Int) {
        self.ledger = ledger
        self.pageEvents = max(1, pageEvents)
    }

    /// Whether every origin's read is done.
    var isDone: Bool { streams.allSatisfy(\.isDone) }

    /// Reads `origin` from sequence `first` through `last`.
    mutating func add(_ origin: String, from first: UInt64, through last: UInt64) {
        let stream = Stream(origin: origin, next: first, last: last)
        if let i = index[origin] {
            streams[i] = stream
        } else {
            index[origin] = streams.count
            streams.append(stream)
        }
    }

    /// Stops reading `origin`: how many of its events up to its last no page gave (the rest of
    /// an origin whose events wait, for the count an import of everything would name).
    mutating func stop(_ origin: String) -> Int {
        guard let i = index[origin], !streams[i].named else { return 0 }
        let from = streams[i].given.map { $0 + 1 } ?? (streams[i].peek?.sequence ?? streams[i].next)
        streams[i].events = []
        streams[i].records = []
        streams[i].taken = 0
        streams[i].ended = true
        let last = streams[i].last
        return from > last ? 0 : Int(clamping: last - from + 1)
    }

    /// The next page (empty once the walk is done).
    mutating func nextPage(_ hub: Hub) throws(LedgerError) -> Page {
        var unreadable: [WaitingEvents] = []
        var given = [UInt64?](repeating: nil, count: streams.count)
        var events: [Event] = []
        var records: [[UInt8]] = []
        var bytes = 0
        // Each origin's next event, read if need be; the earliest goes next.
        var heap = OriginHeap()
        for i in streams.indices.sorted(by: { String.bytesPrecede(streams[$0].origin, streams[$1].origin) }) {
            try fill(i, hub)
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
            try fill(i, hub)
        }
        while events.count < pageEvents && bytes < pageBytes, let i = heap.pop() {
            // While no other origin has an event before the page ends, this one's go in a run.
            var n = 1
            if heap.isEmpty {
                let t = streams[i].taken
                let end = min(streams[i].events.count, t + pageEvents - events.count)
                var b = bytes + streams[i].records[t].count
                while t + n < end && b < pageBytes {
                    b += streams[i].records[t + n].count
                    n += 1
                }
            }
            try take(i, n)
            if let e = streams[i].peek { heap.push(e.key, i) }
        }
        // Past the page's size: each open run on to its signature.
        for i in open.sorted(by: { String.bytesPrecede(streams[$0].origin, streams[$1].origin) }) {
            while streams[i].peek != nil && open.contains(i) { try take(i, 1) }
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
    /// the origins (at least 64 rows), so that what is read ahead stays about one page.
    private mutating func fill(_ i: Int, _ hub: Hub) throws(LedgerError) {
        guard streams[i].taken == streams[i].events.count, !streams[i].ended, streams[i].next <= streams[i].last else { return }
        let (origin, next, last) = (streams[i].origin, streams[i].next, streams[i].last)
        let chunk = max(64, pageEvents / max(1, streams.count))
        let rows = try hub.run { () throws(PostgreSQLError) in
            try hub.connection.query(
                """
                SELECT sequence, event_id, hlc, record FROM hub.events
                WHERE ledger = $1 AND origin = $2 AND sequence >= $3 AND sequence <= $4 ORDER BY sequence LIMIT $5
                """,
                [.uuid(ledger), .text(origin), .int64(Int64(clamping: next)), .int64(Int64(clamping: last)), .int64(Int64(chunk))])
        }
        var s = Stream(origin: origin, next: next, last: last)
        s.given = streams[i].given
        s.events.reserveCapacity(rows.rowCount)
        s.records.reserveCapacity(rows.rowCount)
        if rows.rowCount == 0 { s.ended = true }
        for r in 0..<rows.rowCount {
            let sequence = UInt64(bitPattern: rows.int64(r, 0))
            let id = rows.uuid(r, 1) ?? UUID()
            let hlc = rows.int64(r, 2)
            do throws(LedgerError) {
                try rows.withBytes(r, 3) { (b) throws(LedgerError) in
                    s.events.append(try hub.decode(b, origin: origin, sequence: sequence, id: id, hlc: hlc))
                    s.records.append(Array(b))
                }
                s.next = sequence &+ 1
            } catch {
                let rest = sequence > last ? 1 : Int(clamping: last - sequence + 1)
                s.unreadable = WaitingEvents(origin: origin, sequence: sequence, count: rest, cause: .malformed, reason: error.message)
                s.ended = true
                break
            }
        }
        streams[i] = s
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
