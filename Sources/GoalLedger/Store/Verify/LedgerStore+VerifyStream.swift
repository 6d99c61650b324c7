import Foundation
import Synchronization
import LMDB
import Sodium

/// What the streaming check keeps of one origin's chain while the log is read: its last
/// sequence and hash, and only the few links trust needs (the unchained runs and the signed
/// events), never one entry per event.
struct OriginStream {
    /// The last sequence read: an origin's events come 1, 2, 3, … in a sound log.
    var head: UInt64 = 0
    var previous = Hash32(EventChain.genesis)
    /// The events that carry `previousHash`, and the first of them.
    var chained: UInt64 = 0
    var firstChained: UInt64?
    /// The sequences of the events without `previousHash`, as runs.
    var unchained: [ClosedRange<UInt64>] = []
    /// The events that carry a signature, in sequence order: its key, and whether the event is chained.
    var signed: [(sequence: UInt64, signer: [UInt8], chained: Bool)] = []
    /// The origin index's run the last event read belongs to (the rows before it are summed in
    /// ``LogStream/originRows``).
    var run: OriginRun?
}

/// An order-independent sum over the rows of a table (key and value): two sets of rows with the
/// same number of rows and the same sum are the same set but for a chance of about 2^-128, as
/// far as the rows' terms behave as random values. Each row's term is two 64-bit hashes of its
/// bytes (multiply-and-fold rounds, as in wyhash) keyed by a secret drawn at random by each
/// process, so the sums compare only within one process and no damage can be aimed at a
/// collision; they are not a cryptographic digest. It lets `verify` check an index against the
/// log with one ordered walk of each, where a lookup per event would jump around the index's
/// pages.
struct RowSum: Equatable {
    private var a: UInt64 = 0
    private var b: UInt64 = 0

    /// The process's secret: a key for each hash and one for its data.
    private static let secret: (UInt64, UInt64, UInt64, UInt64) = {
        var g = SystemRandomNumberGenerator()
        // Odd, so that no key is zero.
        return (g.next() | 1, g.next() | 1, g.next() | 1, g.next() | 1)
    }()

    /// The high and low halves of the 128-bit product, folded.
    @inline(__always)
    private static func fold(_ x: UInt64, _ y: UInt64) -> UInt64 {
        let p = x.multipliedFullWidth(by: y)
        return p.high ^ p.low
    }

    /// Takes `bytes` into both hashes, eight at a time (the last few zero-padded: the lengths
    /// taken in separately keep the rows apart).
    @inline(__always)
    private static func absorb(_ bytes: UnsafeRawBufferPointer, _ x: inout UInt64, _ y: inout UInt64) {
        let k = secret
        var i = 0
        while i + 8 <= bytes.count {
            let w = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            x = fold(x ^ k.0, w ^ k.2)
            y = fold(y ^ k.1, w ^ k.3)
            i += 8
        }
        if i < bytes.count {
            var w: UInt64 = 0
            for j in i..<bytes.count { w |= UInt64(bytes[j]) << UInt64(8 * (j - i)) }
            x = fold(x ^ k.0, w ^ k.2)
            y = fold(y ^ k.1, w ^ k.3)
        }
    }

    mutating func add(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let k = Self.secret
        var x = Self.fold(UInt64(key.count) ^ k.0, k.3)
        var y = Self.fold(UInt64(key.count) ^ k.1, k.2)
        Self.absorb(key, &x, &y)
        Self.absorb(value, &x, &y)
        let total = UInt64(key.count + value.count)
        a &+= Self.fold(x ^ total ^ k.2, k.0)
        b &+= Self.fold(y ^ total ^ k.3, k.1)
    }

    /// The sum over every row of `db`.
    static func of(_ db: Database, _ txn: borrowing StoreTransaction) throws -> RowSum {
        var sum = RowSum()
        try txn.scan(db) { k, v in
            sum.add(key: k, value: v)
            return true
        }
        return sum
    }

    /// The sum over the rows of both.
    static func + (l: RowSum, r: RowSum) -> RowSum {
        var sum = l
        sum.a &+= r.a
        sum.b &+= r.b
        return sum
    }
}

/// The state of the streaming check: what one read of the log gathers for the checks after it,
/// in memory that grows with the origins, the goals and what is set aside, not with the log.
struct LogStream {
    /// The rows the id index and the origin index should hold, as sums (see `RowSum`), and how
    /// many runs the origin index should hold.
    var idRows = RowSum()
    var originRows = RowSum()
    var originRuns = 0
    /// A buffer for an origin key, reused event after event.
    var keyBuffer: [UInt8] = []
    var events: UInt64 = 0
    var goalEvents = 0
    var deviceEvents = 0
    /// Each origin's stream, but the one `currentStream` holds while its events come.
    var origins: [String: OriginStream] = [:]
    /// The origin read last, and its stream, out of `origins`: a log holds long runs of one
    /// origin's events, each then found by a comparison of names instead of a lookup (hashing
    /// the name). Where origins alternate, each change costs a removal and an insertion.
    var currentOrigin: String?
    var currentStream = OriginStream()
    /// The trust events, each with whether it is chained (for the signature covering it).
    var trustEvents: [(origin: String, sequence: UInt64, key: CanonicalKey, change: TrustChange, chained: Bool)] = []
    /// A fresh replay of the device events only (the goals are folded one at a time).
    var devices: GoalProjection
    var setAside: [SetAsideEvent] = []
    var setAsidePositions: Set<UInt64> = []
    /// The rows `entries` should hold (`StreamedEvent.entriesRow` of each event folded): their
    /// sum and their number.
    var entriesRows = RowSum()
    var entriesRowCount = 0
    /// The sum of the goal index's pairs of goal and position the log calls for (see
    /// `GoalIndexPair`).
    var goalIndexRows = RowSum()
    /// The positions of the events that record an entry, which the goal walk does not read
    /// (one bit per event of the log).
    var entryPositions = PositionSet()
}

/// A pair of the goal index, as `verify` sums it: the goal's 16 bytes as the key and the
/// position's 8 big-endian bytes as the value.
enum GoalIndexPair {
    static func add(goal: UnsafeRawBufferPointer, _ position: UInt64, to sum: inout RowSum) {
        withUnsafeBytes(of: position.bigEndian) { sum.add(key: goal, value: $0) }
    }
}

extension LogStream {
    /// Runs `body` on the stream of `origin` (a new one for an origin not read before).
    mutating func withOrigin<R>(_ origin: String, _ body: (inout OriginStream) -> R) -> R {
        if currentOrigin != origin {
            settleOrigins()
            currentStream = origins.removeValue(forKey: origin) ?? OriginStream()
            currentOrigin = origin
        }
        return body(&currentStream)
    }

    /// Puts the stream of the origin read last back among `origins`, once the log is read.
    mutating func settleOrigins() {
        if let origin = currentOrigin { origins[origin] = currentStream }
        currentOrigin = nil
        currentStream = OriginStream()
    }

    /// Adds `origin`'s complete `run` to the rows the origin index should hold.
    mutating func addOriginRow(_ origin: String, _ run: OriginRun) {
        keyBuffer.removeAll(keepingCapacity: true)
        keyBuffer.append(contentsOf: origin.utf8)
        keyBuffer.append(0)
        withUnsafeBytes(of: run.first.bigEndian) { keyBuffer.append(contentsOf: $0) }
        let value = run.value
        keyBuffer.withUnsafeBytes { k in value.withUnsafeBytes { originRows.add(key: k, value: $0) } }
        originRuns += 1
    }
}

/// What the goal walk of the streaming check keeps between goals: how many rows each table
/// should hold and their sum (see `RowSum`), the digest's totals, and each goal's reminder
/// facts (for the pending rows, which depend on every device).
struct GoalWalkTotals {
    var rows: [Int] = Array(repeating: 0, count: ProjectionTables.tableNames.count)
    var sums: [RowSum] = Array(repeating: RowSum(), count: ProjectionTables.tableNames.count)
    var totals = LedgerDigest()
    var facts: [ReminderFacts] = []
    var existing = 0
    /// The goal index's pairs walked: their number and sum (see `GoalIndexPair`).
    var indexed = 0
    var goalIndexRows = RowSum()
    /// Records and rows read since the pages read were last let go.
    var read = 0

    /// Counts a row of `table` (an index in `ProjectionTables.tableNames`) and adds it to the table's sum.
    mutating func add(_ table: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        rows[table] += 1
        sums[table].add(key: key, value: value)
    }

    mutating func add(_ table: Int, key: [UInt8], value: [UInt8]) {
        key.withUnsafeBytes { k in value.withUnsafeBytes { add(table, key: k, value: $0) } }
    }

    mutating func add(_ table: ProjectionTable, key: [UInt8], value: [UInt8]) { add(table.index, key: key, value: value) }

    /// Takes in what another run of the walk counted.
    mutating func merge(_ other: GoalWalkTotals) {
        for i in rows.indices {
            rows[i] += other.rows[i]
            sums[i] = sums[i] + other.sums[i]
        }
        totals.sum += other.totals.sum
        totals.count &+= other.totals.count
        facts += other.facts
        existing += other.existing
        indexed += other.indexed
        goalIndexRows = goalIndexRows + other.goalIndexRows
    }
}

/// What the streaming check's read of the log takes in of one event: made from its record on a
/// decoder's thread (decoded, its chain hash taken, put through the gate), so that the thread
/// taking the events in handles no more than it reads, and an event is freed where it was made.
/// What only some events have is kept apart (`Rare`): a run of them is copied from thread to
/// thread, and a whole event inline would make each copy several times larger.
struct StreamedEvent {
    let id: UUID
    let origin: String
    let sequence: UInt64
    /// The event's goal; nil for a device event.
    let goal: UUID?
    /// Whether it records a progress entry: the goal walk takes the entry from the `entries`
    /// table (whose rows this read sums, `entriesRow`) instead of reading the event again.
    let recordsEntry: Bool
    /// The term (see `RowSum`) of the row `entries` holds for the event once it is folded: a
    /// recorded entry's or a history write's (`PendingTable.writeEntryDuplicate`,
    /// `writeHistoryDuplicate`); nil for other events.
    let entriesRow: RowSum?
    let previousHash: Hash32?
    /// The hash the next event of its chain names: an unsigned record hashes as stored; a
    /// signed one without its signature.
    let hash: Hash32
    /// Why every fold sets it aside (the gate's reason); nil when it passes.
    let setAsideReason: String?
    let rare: Rare?

    final class Rare: Sendable {
        /// A signed event's signature and key.
        let signed: (signature: [UInt8], signer: [UInt8])?
        /// A trust event's change, with its key (none for one the gate refuses).
        let trust: (key: CanonicalKey, change: TrustChange)?
        /// The event itself when it is of no goal and passes the gate: the devices' replay folds it.
        let deviceEvent: Event?

        init?(signed: (signature: [UInt8], signer: [UInt8])?, trust: (key: CanonicalKey, change: TrustChange)?, deviceEvent: Event?) {
            guard signed != nil || trust != nil || deviceEvent != nil else { return nil }
            self.signed = signed
            self.trust = trust
            self.deviceEvent = deviceEvent
        }
    }

    var signed: (signature: [UInt8], signer: [UInt8])? { rare?.signed }
    var trust: (key: CanonicalKey, change: TrustChange)? { rare?.trust }
    var deviceEvent: Event? { rare?.deviceEvent }

    /// Nil when the record cannot be decoded. `rows`: a buffer for its row of `entries`.
    init?(_ record: UnsafeRawBufferPointer, rows: inout ByteWriter) {
        let event: Event
        do {
            event = try EventCodec.decode(record)
        } catch {
            return nil
        }
        id = event.id
        origin = event.origin
        sequence = event.sequence
        goal = event.payload.goal
        rows.bytes.removeAll(keepingCapacity: true)
        switch event.payload {
        case .progressRecorded(let p):
            recordsEntry = true
            let entry = ProgressEntry(event, p)
            PendingTable.writeEntryDuplicate(goal: p.goal, entry, into: &rows)
            entriesRow = Self.entriesRow(of: p.goal, rows)
        case .progressHistoryReplaced(let p):
            recordsEntry = false
            PendingTable.writeHistoryDuplicate(goal: p.goal, event: event.id, event.key, into: &rows)
            entriesRow = Self.entriesRow(of: p.goal, rows)
        default:
            recordsEntry = false
            entriesRow = nil
        }
        previousHash = event.previousHash.map { Hash32($0) }
        var signed: (signature: [UInt8], signer: [UInt8])?
        if let signature = event.signature, let signer = event.signer {
            signed = (signature, signer)
            hash = Hash32(EventChain.hash(event))
        } else {
            hash = Hash32(hashOfRecord: record)
        }
        do throws(FieldError) {
            try event.checkContent()
            setAsideReason = nil
        } catch {
            setAsideReason = SetAsideEvent.reason(error)
        }
        var trust: (key: CanonicalKey, change: TrustChange)?
        if let change = event.trustChange { trust = (event.key, change) }
        let folded = goal == nil && setAsideReason == nil
        // Most events have none of it: no object is made for them, and the event is not copied.
        rare = signed == nil && trust == nil && !folded ? nil : Rare(signed: signed, trust: trust, deviceEvent: folded ? event : nil)
    }

    /// The term of the row of `entries` under `goal` whose duplicate `duplicate` holds.
    private static func entriesRow(of goal: UUID, _ duplicate: ByteWriter) -> RowSum {
        var term = RowSum()
        withUnsafeBytes(of: goal.uuid) { key in duplicate.bytes.withUnsafeBytes { term.add(key: key, value: $0) } }
        return term
    }
}

extension LedgerStore {
    /// `verify` of a sound store in memory that does not grow with the log: one read of the log
    /// in position order (each record's checksum, its index entries by lookup, each origin's
    /// chain and signatures as they come), then trust re-derived from what that read kept, then
    /// one goal at a time through the goal index, its events folded and its rows compared with
    /// the stored projection. Nil as soon as anything differs from what the full check would
    /// find clean: the full check (which holds a fresh replay) then names every problem in its
    /// order. The report of a clean store is the full check's, field for field.
    func verifyStreaming(_ txn: borrowing StoreTransaction, rule: HistoryRule, plan: LogDecodingPlan) throws -> VerificationReport? {
        let progress = verifyProgress
        progress?(.log, 0)
        var s = LogStream(devices: GoalProjection(historyRule: rule))
        s.devices.revokedAfter = try txn.revocations()
        // The sums of the id index's rows and of the projection's, on a thread of its own while
        // the log is read (they need nothing the read finds): the log's read leaves a processor
        // part idle.
        let stored = StoredSums(self, snapshot: txn.snapshotID)
        defer { stored.stop() }
        guard try streamLog(&s, plan, txn) else { return nil }
        s.settleOrigins()
        for (origin, o) in s.origins { if let run = o.run { s.addOriginRow(origin, run) } }
        progress?(.indexes, s.events)
        let logged = Int(s.events)
        guard try txn.idIndexRowCount() == logged else { return nil }
        for (db, want) in [(layout.origins, s.originRuns), (layout.deviceEvents, s.deviceEvents)] where try txn.count(db) != want {
            return nil
        }
        // With their sizes equal, the two indexes hold exactly the rows the log calls for when
        // their sums match: one ordered walk of each instead of a lookup per event (the id
        // index's two tables summed).
        guard try (stored.idIndex() ?? idIndexSum(txn)) == s.idRows else { return nil }
        releaseMappedPages(txn)
        guard try RowSum.of(layout.origins, txn) == s.originRows else { return nil }
        releaseMappedPages(txn)
        progress?(.origins, s.events)
        let heads = try txn.originHeads()
        guard heads == s.origins.mapValues(\.head) else { return nil }
        progress?(.trust, s.events)
        let trust = deriveTrust(s, heads: heads, recorded: try recordedFounder(txn))
        guard try verifyTrust(txn, damaged: 0, trust).isEmpty else { return nil }
        progress?(.chains, s.events)
        guard let unsignedEvents = chainsVerify(s, trust) else { return nil }
        progress?(.projections, s.events)
        guard let goals = try projectionsVerify(&s, rule: rule, plan, stored, txn) else { return nil }

        var report = VerificationReport()
        report.events = s.events
        report.goals = goals
        report.unsignedEvents = unsignedEvents
        report.setAside = s.setAside
        return report
    }

    /// The order-independent sum of the id index's rows (both its tables).
    fileprivate func idIndexSum(_ txn: borrowing StoreTransaction) throws -> RowSum {
        try RowSum.of(layout.ids, txn) + RowSum.of(layout.recentIDs, txn)
    }

    /// The order-independent sum of each table's rows in `tables` (in the order of
    /// `ProjectionTables.tableNames`; a duplicate of `entries` as a row of its own), letting
    /// the pages read go every 65,536 rows.
    /// Nil when `stopping` turns true before the sums are made (it is read every 4,096 rows).
    fileprivate func projectionSums(
        _ tables: ProjectionTables, _ txn: borrowing StoreTransaction, stopping: (() -> Bool)? = nil
    ) throws -> [RowSum]? {
        var read = 0
        var sums: [RowSum] = []
        for db in tables.all {
            var sum = RowSum()
            var stopped = false
            try txn.scan(db) { k, v in
                sum.add(key: k, value: v)
                read += 1
                if read & 0xFFF == 0 {
                    if let stopping, stopping() {
                        stopped = true
                        return false
                    }
                    if read & 0xFFFF == 0 { releaseMappedPages(txn) }
                }
                return true
            }
            guard !stopped else { return nil }
            sums.append(sum)
        }
        return sums
    }

    /// Reads the log in order into `s` (`streamRecord`), its count into `s.events`; false at the
    /// first record out of place or out of form. A log of `plan`'s length or more is read and
    /// made into `StreamedEvent`s (decoded, hashed for its chain, put through the gate) by
    /// `plan`'s decoders (`SharedLogDecoders`), in this transaction's snapshot, while this
    /// thread takes them in.
    private func streamLog(_ s: inout LogStream, _ plan: LogDecodingPlan, _ txn: borrowing StoreTransaction) throws -> Bool {
        var expected: UInt64 = 1
        defer { s.events = expected - 1 }
        if try txn.lastPosition() >= plan.minimumEvents {
            var decoders = SharedLogDecoders<StreamedEvent?>(
                plan.decoders, env, layout: layout, from: 1, through: .max, runLength: plan.runLength, snapshot: txn.snapshotID
            ) {
                // A buffer for the events' rows of `entries`, used by one decoder's thread only.
                nonisolated(unsafe) var rows = ByteWriter(capacity: 128)
                return { _, record in StreamedEvent(record, rows: &rows) }
            }
            defer { decoders.stop() }
            while true {
                switch try decoders.next() {
                case .run(let run):
                    while let record = run.take() {
                        guard let event = record.item, try streamRecord(at: record.position, event, &expected, &s, txn) else { return false }
                    }
                case .end:
                    return true
                case .unavailable:
                    // Before any run, nothing was taken in yet: this thread reads the log. After
                    // some (only some decoders got a transaction), the full check takes over.
                    guard expected == 1 else { return false }
                    return try streamLogHere(&expected, &s, txn)
                }
            }
        }
        return try streamLogHere(&expected, &s, txn)
    }

    /// `streamLog`, decoding each record in this thread.
    private func streamLogHere(_ expected: inout UInt64, _ s: inout LogStream, _ txn: borrowing StoreTransaction) throws -> Bool {
        var sound = true
        var rows = ByteWriter(capacity: 128)
        try txn.scan(layout.events) { key, value in
            guard let event = StreamedEvent(value, rows: &rows),
                try streamRecord(at: key.count == 8 ? UInt64(bigEndianBytes: key) : nil, event, &expected, &s, txn)
            else {
                sound = false
                return false
            }
            return true
        }
        return sound
    }

    /// Takes in the record read at `position` (nil: its key is not a position), which must be
    /// `expected`; false when it is out of place or `streamEvent` refuses it.
    private func streamRecord(
        at position: UInt64?, _ event: borrowing StreamedEvent, _ expected: inout UInt64, _ s: inout LogStream,
        _ txn: borrowing StoreTransaction
    ) throws -> Bool {
        guard position == expected else { return false }
        if (expected - 1) & 255 == 0 { verifyProgress?(.log, expected) }
        // What was read is not kept resident: memory stays flat however large the log.
        if expected & 0xFFFF == 0 { releaseMappedPages(txn) }
        guard try streamEvent(event, at: expected, &s, txn) else { return false }
        expected += 1
        return true
    }

    /// Takes in the event read at `position`: checks its index entries, its place in its
    /// origin's sequence and chain and its signature; false when any differs.
    private func streamEvent(
        _ event: borrowing StreamedEvent, at position: UInt64, _ s: inout LogStream, _ txn: borrowing StoreTransaction
    ) throws -> Bool {
        // The row the id index should hold for this event (compared once the whole log is read).
        IDIndex.withValue(position) { p in
            withUnsafeBytes(of: IDIndex.key(IDWords(event.id)).bigEndian) { s.idRows.add(key: $0, value: p) }
        }
        if let goal = event.goal {
            s.goalEvents += 1
            withUnsafeBytes(of: goal.uuid) { GoalIndexPair.add(goal: $0, position, to: &s.goalIndexRows) }
            if event.recordsEntry { s.entryPositions.insert(position) }
        } else {
            guard try txn.get(layout.deviceEvents, key: position.bigEndianBytes) != nil else { return false }
            s.deviceEvents += 1
        }
        // The origin's stream is changed in place, its lists not copied.
        var completed: OriginRun?
        guard s.withOrigin(event.origin, { streamOrigin(&$0, event, at: position, completed: &completed) }) else {
            return false
        }
        if let completed { s.addOriginRow(event.origin, completed) }
        if let trust = event.trust {
            s.trustEvents.append((event.origin, event.sequence, trust.key, trust.change, event.previousHash != nil))
        }
        if let reason = event.setAsideReason {
            s.setAside.append(SetAsideEvent(position: position, id: event.id, origin: event.origin, sequence: event.sequence, reason: reason))
            s.setAsidePositions.insert(position)
        } else {
            // Folded, unless its device's events are revoked from before it (as
            // `GoalProjection.fold` decides): its row of `entries` is then due.
            if let row = event.entriesRow, !GoalProjection.isRevoked(origin: event.origin, sequence: event.sequence, s.devices.revokedAfter) {
                s.entriesRows = s.entriesRows + row
                s.entriesRowCount += 1
            }
            if let device = event.deviceEvent { s.devices.fold(device) }
        }
        return true
    }

    /// Takes `event`, read at `position`, into its origin's stream `o`: its place in the
    /// origin's sequence and chain, its signature, and the origin index's run it goes on
    /// (`completed`: the run before it, when the event starts a new one). False when any
    /// differs.
    private func streamOrigin(
        _ o: inout OriginStream, _ event: borrowing StreamedEvent, at position: UInt64, completed: inout OriginRun?
    ) -> Bool {
        guard event.sequence == o.head + 1, event.sequence <= UInt64(Int32.max) else { return false }
        o.head = event.sequence
        // The origin index's rows: the run this event goes on, or a new one (the one before it
        // is then complete).
        if let run = o.run, run.isFollowed(by: event.sequence, at: position) {
            o.run = run.lengthened
        } else {
            completed = o.run
            o.run = OriginRun(first: event.sequence, position: position, count: 1)
        }
        if let h = event.previousHash {
            guard h == o.previous else { return false }
            o.chained += 1
            if o.firstChained == nil { o.firstChained = event.sequence }
        } else if let last = o.unchained.last, last.upperBound + 1 == event.sequence {
            o.unchained[o.unchained.count - 1] = last.lowerBound...event.sequence
        } else {
            o.unchained.append(event.sequence...event.sequence)
        }
        o.previous = event.hash
        if let signed = event.signed {
            let message = EventChain.message(ledger: ledgerID, origin: event.origin, sequence: event.sequence, hash: event.hash.bytes)
            guard Ed25519.verify(signature: signed.signature, message: message, publicKey: signed.signer) else { return false }
            o.signed.append((event.sequence, signed.signer, event.previousHash != nil))
        }
        return true
    }

    /// ``deriveTrust(_:heads:recorded:)`` from what the streaming read kept: the founder from the signed
    /// events, each trust event with the signature that covers it, each origin's cutoff walked
    /// over its unchained runs and signed events (a chained event without a signature changes
    /// nothing in the walk).
    private func deriveTrust(_ s: LogStream, heads: [String: UInt64], recorded: (name: String, key: [UInt8])?) -> DerivedTrust {
        var fold = TrustFold()
        if isSignedLedger {
            search: for (origin, o) in s.origins {
                for l in o.signed where isFounder(origin, l.signer) {
                    fold.founder = (origin, l.signer)
                    break search
                }
            }
            fold.founder = fold.founder ?? recorded
        }
        var inputs: [TrustFold.Input] = []
        for t in s.trustEvents {
            var covering: TrustFold.Signature?
            if t.chained, let signed = s.origins[t.origin]?.signed {
                // The first signature at or after the trust event, found by halving (`signed` is
                // in sequence order): a log of many trust events and many signatures costs no
                // more than their count times its logarithm.
                var low = 0
                var high = signed.count
                while low < high {
                    let middle = (low + high) / 2
                    if signed[middle].sequence < t.sequence { low = middle + 1 } else { high = middle }
                }
                if low < signed.count { covering = TrustFold.Signature(sequence: signed[low].sequence, signer: signed[low].signer) }
            }
            inputs.append(TrustFold.Input(origin: t.origin, sequence: t.sequence, key: t.key, covering: covering, change: t.change))
        }
        if !isSignedLedger {
            for (origin, o) in s.origins { if let first = o.firstChained { fold.firstChained[origin] = first } }
        }
        let trust = isSignedLedger && fold.founder == nil ? TrustState() : fold.fold(inputs)
        var cutoffs: [String: UInt64] = [:]
        for (origin, head) in heads {
            var walk = TrustState.CutoffWalk(origin, trust, signedLedger: isSignedLedger)
            let o = s.origins[origin] ?? OriginStream()
            let signed = o.signed.filter(\.chained)
            var r = 0
            var i = 0
            walk: while r < o.unchained.count || i < signed.count {
                if r < o.unchained.count, i == signed.count || o.unchained[r].lowerBound < signed[i].sequence {
                    for sequence in o.unchained[r] where !walk.step(sequence, chained: false, signer: nil) { break walk }
                    r += 1
                } else {
                    guard walk.step(signed[i].sequence, chained: true, signer: signed[i].signer) else { break }
                    i += 1
                }
            }
            if let c = walk.cut, c < head { cutoffs[origin] = c }
        }
        for (name, d) in trust.devices where heads[name] == nil { if let r = d.revokedAfter { cutoffs[name] = r } }
        return DerivedTrust(state: trust, cutoffs: cutoffs)
    }

    /// The ``VerificationCheck/chains`` check's remainder once trust is known (the links and
    /// signatures were checked as the log was read): no unchained event within what counts
    /// should be signed, and every signature within it is by the key trust gives. The events no
    /// signature covers; nil when anything differs.
    private func chainsVerify(_ s: LogStream, _ derived: DerivedTrust) -> Int? {
        let trust = derived.state
        var unsignedEvents = 0
        for (origin, o) in s.origins {
            let cutoff = derived.cutoffs[origin] ?? o.head
            for run in o.unchained where run.lowerBound <= cutoff {
                if isSignedLedger { return nil }
                for sequence in run.lowerBound...min(run.upperBound, cutoff) where trust.key(origin, at: sequence) != nil { return nil }
            }
            for l in o.signed where l.sequence <= cutoff && trust.key(origin, at: l.sequence) != l.signer { return nil }
            unsignedEvents += Int(o.head - o.chained)
        }
        return unsignedEvents
    }

    /// The ``VerificationCheck/projections`` check one goal at a time: each goal's events, found
    /// through the goal index (each entry must name an event of that goal; with the counts the
    /// read checked, the index then holds exactly the log's goal events), folded into a replay
    /// of that goal alone, whose rows are counted and summed table by table; then the rows of
    /// the whole ledger (devices, pending, set-aside, the digest's totals). Each stored table
    /// must hold as many rows as counted, with the same sum (`RowSum`, made by `stored` in one
    /// ordered walk of each table, where a lookup of each row would jump around its pages).
    /// The number of goals that exist; nil when anything differs.
    ///
    /// The goals are split into as many runs as the machine has processors (two at least, four
    /// at most; one below 128 goals), each walked on its own thread in a read transaction of its
    /// own on the same snapshot as `txn` (a later one, should a write land in between, makes the
    /// check give up to the full one, as does a part that gets no transaction because the map is
    /// being resized).
    private func projectionsVerify(
        _ s: inout LogStream, rule: HistoryRule, _ plan: LogDecodingPlan, _ stored: StoredSums, _ txn: borrowing StoreTransaction
    ) throws -> Int? {
        let status = try txn.projectionStatus()
        guard status.version == StoredProjection.version, status.checkpoint == s.events else { return nil }
        let setup = GoalWalkSetup(
            tables: layout.projections[status.generation], firstWeekday: s.devices.device(device).calendar.firstWeekday, rule: rule,
            revokedAfter: s.devices.revokedAfter, setAside: s.setAsidePositions, entryPositions: s.entryPositions, snapshot: txn.snapshotID,
            batchEvents: max(1, plan.goalBatchEvents))
        // Where each run of goals starts: the goals of the goal index's keys, split evenly.
        var goals: [[UInt8]] = []
        try txn.scanKeys(layout.goalPositions) { k in
            let goal = k.prefix(16)
            if goals.last.map({ !$0.elementsEqual(goal) }) ?? true { goals.append(Array(goal)) }
            return true
        }
        // Two runs at least from 128 goals (one processor interleaves them), at most four.
        let runs = max(1, min(4, max(2, ProcessInfo.processInfo.activeProcessorCount), goals.count / 64))
        let starts = (0..<runs).map { goals.isEmpty ? nil : goals[goals.count * $0 / runs] } + [nil]
        let results = Mutex<[Result<GoalWalkTotals?, any Error>?]>(Array(repeating: nil, count: runs))
        DispatchQueue.concurrentPerform(iterations: runs) { i in
            let result = Result<GoalWalkTotals?, any Error> {
                // Never waiting for a resize of the map: it would wait for `txn`, held by the
                // thread that waits for this part. Without a transaction the part gives up.
                try env.withReadTransactionIfAvailable { raw in
                    let part = StoreTransaction(raw, layout: layout)
                    guard part.snapshotID == setup.snapshot else { return nil }
                    return try walkGoals(from: i == 0 ? nil : starts[i], below: starts[i + 1], setup, part)
                } ?? nil
            }
            results.withLock { $0[i] = result }
        }
        var walk = GoalWalkTotals()
        for result in results.withLock({ $0 }) {
            guard let result, let part = try result.get() else { return nil }
            walk.merge(part)
        }
        // The goal index holds exactly the log's pairs of goal and position; `entries` exactly
        // the rows of the entries folded (which the walk took from it, instead of from the log).
        guard walk.indexed == s.goalEvents, walk.goalIndexRows == s.goalIndexRows else { return nil }
        walk.rows[GoalRows.Table.entries] = s.entriesRowCount
        walk.sums[GoalRows.Table.entries] = s.entriesRows
        guard try ledgerRowsVerify(s, setup.firstWeekday, &walk, setup.tables, txn) else { return nil }
        for (db, want) in zip(setup.tables.all, walk.rows) where try txn.count(db) != want { return nil }
        guard let sums = try stored.projection(generation: status.generation) ?? projectionSums(setup.tables, txn), sums == walk.sums
        else { return nil }
        return walk.existing
    }

    /// What every run of the goal walk reads with.
    struct GoalWalkSetup: Sendable {
        let tables: ProjectionTables
        let firstWeekday: Int
        let rule: HistoryRule
        let revokedAfter: [String: UInt64]
        let setAside: Set<UInt64>
        /// The positions of the events that record an entry: the walk takes their entries from
        /// `entries` (see `StreamedEvent.recordsEntry`).
        let entryPositions: PositionSet
        let snapshot: Int
        /// See `LogDecodingPlan.goalBatchEvents`.
        let batchEvents: Int
    }

    /// The goals of the goal index from the key `start` (the first, when nil) up to the key
    /// `end` (the last, when nil), folded and compared with their stored rows a batch of whole
    /// goals at a time; what they count, or nil when anything differs.
    private func walkGoals(from start: [UInt8]?, below end: [UInt8]?, _ setup: GoalWalkSetup, _ txn: borrowing StoreTransaction) throws
        -> GoalWalkTotals?
    {
        let progress = verifyProgress
        var walk = GoalWalkTotals()
        var batch = GoalBatch(setup)
        var sound = true
        let complete = try txn.scanGoalPositions(from: start) { k, position in
            if let end, !k.lexicographicallyPrecedes(end) { return false }
            let id = StoredProjection.uuid(k)
            if id != batch.goals.last {
                if batch.events >= setup.batchEvents {
                    guard try walkBatch(&batch, setup, &walk, txn) else {
                        sound = false
                        return false
                    }
                }
                batch.goals.append(id)
                batch.counts.append(0)
            }
            batch.counts[batch.counts.count - 1] += 1
            batch.events += 1
            walk.indexed += 1
            if walk.indexed & 4095 == 0 { progress?(.projections, position) }
            GoalIndexPair.add(goal: UnsafeRawBufferPointer(rebasing: k.prefix(16)), position, to: &walk.goalIndexRows)
            if !setup.entryPositions.contains(position) {
                batch.reads.append(GoalBatch.Read(position: position, goal: Int32(truncatingIfNeeded: batch.goals.count - 1)))
            }
            return true
        }
        guard sound, complete, try walkBatch(&batch, setup, &walk, txn) else { return nil }
        return walk
    }

    /// Whole goals of the goal walk, their events to read.
    struct GoalBatch {
        struct Read {
            var position: UInt64
            /// The event's goal, an index into `goals`.
            var goal: Int32
        }

        /// The goals, in the goal index's order.
        var goals: [UUID] = []
        /// How many events each goal has in the goal index (the room its fold makes for entries).
        var counts: [Int] = []
        /// How many events the goals have in all.
        var events = 0
        /// Their events to read from the log (from the goal index): all but those that record
        /// an entry.
        var reads: [Read] = []
        /// A fold of the batch's events.
        var replay: GoalProjection

        init(_ setup: GoalWalkSetup) {
            replay = GoalProjection(historyRule: setup.rule)
            replay.revokedAfter = setup.revokedAfter
        }
    }

    /// Reads the events of `batch` in position order through one cursor (each read starts from
    /// the page the last one left it on), each of which must be of the goal the goal index
    /// names, and folds them; folds each goal's entries, read from `entries`; sums each goal's
    /// rows, and empties the batch. False when anything differs.
    private func walkBatch(_ batch: inout GoalBatch, _ setup: GoalWalkSetup, _ walk: inout GoalWalkTotals, _ txn: borrowing StoreTransaction)
        throws -> Bool
    {
        batch.reads.sort { $0.position < $1.position }
        var sound = true
        try txn.records(batch.reads, at: \.position) { read, record in
            // The kernel maps the pages around a page read (up to 16): reads this far apart each
            // bring in as many pages as a run of entries does rows.
            readSome(&walk, txn, 16)
            // The log's read checked every chain and every record's checksum, in this snapshot:
            // the fold needs no hash or signature, and the bytes are those it checked.
            guard let record, let event = try? EventCodec.decode(record, keepingChain: false, checksumKnownGood: true),
                event.payload.goal == batch.goals[Int(read.goal)]
            else {
                sound = false
                return false
            }
            if setup.setAside.isEmpty || !setup.setAside.contains(read.position) {
                batch.replay.fold(event, goalEvents: batch.counts[Int(read.goal)])
            }
            return true
        }
        guard sound else { return false }
        for (goal, events) in zip(batch.goals, batch.counts) {
            guard try foldEntries(of: goal, events: events, into: &batch.replay, setup, txn) else { return false }
            readSome(&walk, txn, events)
        }
        for goal in batch.goals { try sumGoal(goal, batch.replay, setup.firstWeekday, &walk) }
        batch.goals.removeAll(keepingCapacity: true)
        batch.counts.removeAll(keepingCapacity: true)
        batch.events = 0
        batch.reads.removeAll(keepingCapacity: true)
        batch.replay.goals.removeAll(keepingCapacity: true)
        return true
    }

    /// The ledger's rows, once every goal's were summed: devices, pending requests (every
    /// device's, of every goal's reminder), set-aside events, the digest's totals, the
    /// calendar, each counted and summed as the goals' rows are. False when the stored calendar
    /// row names another first weekday.
    private func ledgerRowsVerify(
        _ s: LogStream, _ firstWeekday: Int, _ walk: inout GoalWalkTotals, _ t: ProjectionTables, _ txn: borrowing StoreTransaction
    ) throws -> Bool {
        for (name, d) in s.devices.devices { walk.add(.devices, key: Array(name.utf8), value: ProjectionCodec.encodeDevice(d)) }
        let routing = ReminderRouting(devices: s.devices.devices.values)
        for device in s.devices.devices.values {
            let context = ReminderPlan.Context(device)
            for f in walk.facts {
                guard let row = ReminderPlan.row(f, context, routing: routing, device: device.name) else { continue }
                walk.add(.pending, key: PendingTable.rowKey(device: device.name, goal: f.goal), value: PendingTable.encode(row))
            }
        }
        for e in s.setAside { walk.add(.setAside, key: e.position.bigEndianBytes, value: Array(e.reason.utf8)) }
        if walk.totals.count > 0 { walk.add(.digest, key: ProjectionTables.ledgerKey, value: walk.totals.bytes) }
        // The calendar row is kept only by stores that set one: where it is, it must name the
        // device's first weekday.
        if let calendar = try txn.get(t.runs, key: ViewTables.calendarKey) {
            guard calendar == [UInt8(firstWeekday)] else { return false }
            walk.add(.runs, key: ViewTables.calendarKey, value: calendar)
        }
        return true
    }

    /// Counts `count` rows read (or their worth), letting the pages read go every 32,768 (every
    /// run reads pages of its own, so each lets them go twice as often as one would).
    private func readSome(_ walk: inout GoalWalkTotals, _ txn: borrowing StoreTransaction, _ count: Int) {
        walk.read += count
        if walk.read >= 0x8000 {
            releaseMappedPages(txn)
            walk.read = 0
        }
    }

    /// Folds the entries `entries` holds for `goal` into `replay` (`events`: the goal's events
    /// in the goal index, the room its state makes for entries), as the fold of their events
    /// would: the read of the log summed the rows `entries` must hold, and the sums are compared
    /// once the walk ends, so the entries taken here are those of the log's events. A history
    /// write's row is passed over (its event is read from the log). False at a row out of form.
    private func foldEntries(
        of goal: UUID, events: Int, into replay: inout GoalProjection, _ setup: GoalWalkSetup, _ txn: borrowing StoreTransaction
    ) throws -> Bool {
        // The goal's state taken out of the fold while its entries go in: looked up once, not
        // once an entry, and changed in place.
        var state: GoalState
        var keep = true
        if let held = replay.goals.removeValue(forKey: goal) {
            state = held
        } else {
            state = GoalState(id: goal, rule: setup.rule, entries: events)
            // A goal whose every event was set aside has no state: none is made for it unless
            // an entry is folded.
            keep = false
        }
        defer { if keep { replay.goals[goal] = state } }
        do {
            try txn.forEachRecordedEntry(setup.tables.entries, goal: goal) { entry in
                state.foldEntry(entry)
                keep = true
            }
        } catch is RecordDecodingError {
            return false
        }
        return true
    }

    /// Counts and sums the rows of `goal` that `replay`, a fresh replay of its batch's goals,
    /// gives (no other goal's events change its state): its rows in every table but `entries`,
    /// whose rows the read of the log summed.
    private func sumGoal(_ goal: UUID, _ replay: GoalProjection, _ firstWeekday: Int, _ walk: inout GoalWalkTotals) throws {
        guard let made = try GoalRows(goal, in: replay, firstWeekday: firstWeekday) else { return }
        if made.exists { walk.existing += 1 }
        walk.totals.replace(nil, with: made.goalHash)
        if let f = made.facts { walk.facts.append(f) }
        for row in made.rows { walk.add(row.table, key: row.key, value: row.value) }
    }
}

/// The sums of stored rows `verify` compares with what the log calls for, made on a thread of
/// their own in a read transaction on a given snapshot: first the id index's
/// (`LedgerStore.idIndexSum`), then each table's of the projection's generation there
/// (`LedgerStore.projectionSums`).
private final class StoredSums: @unchecked Sendable {
    private let idIndexDone = DispatchSemaphore(value: 0)
    private let projectionDone = DispatchSemaphore(value: 0)
    /// Written by the thread before it signals the semaphore after them, read only after
    /// waiting for it.
    private var idIndexSum: RowSum?
    private var projection: (generation: Int, sums: [RowSum])?
    private var waitedForIDIndex = false
    private var waitedForProjection = false
    /// Set when the sums are no longer wanted: the thread stops summing.
    private let stopping = Atomic<Bool>(false)

    init(_ store: LedgerStore, snapshot: Int) {
        let thread = Thread { [self] in
            var idIndexSignalled = false
            defer {
                if !idIndexSignalled { idIndexDone.signal() }
                projectionDone.signal()
            }
            // Without a transaction on that snapshot (the map is being resized), or on an
            // error, no sums: the caller makes them.
            _ = try? store.env.withReadTransactionIfAvailable { raw in
                let txn = StoreTransaction(raw, layout: store.layout)
                guard txn.snapshotID == snapshot else { return }
                idIndexSum = try? store.idIndexSum(txn)
                idIndexSignalled = true
                idIndexDone.signal()
                let generation = try txn.projectionStatus().generation
                if let sums = try store.projectionSums(
                    store.layout.projections[generation], txn, stopping: { self.stopping.load(ordering: .relaxed) })
                {
                    projection = (generation, sums)
                }
            }
        }
        thread.name = "ledger stored sums"
        thread.start()
    }

    /// The id index's sum, once made (the first call waits; from one thread only); nil when
    /// the thread made none.
    func idIndex() -> RowSum? {
        if !waitedForIDIndex {
            idIndexDone.wait()
            waitedForIDIndex = true
        }
        return idIndexSum
    }

    /// The sums of the projection's tables of `generation`, once made (as `idIndex`); nil when
    /// the thread made none, or made them for another generation.
    func projection(generation: Int) -> [RowSum]? {
        waitForProjection()
        return projection.flatMap { $0.generation == generation ? $0.sums : nil }
    }

    private func waitForProjection() {
        if !waitedForProjection {
            projectionDone.wait()
            waitedForProjection = true
        }
    }

    /// Stops the thread and waits for it, which uses the store: before the caller's
    /// transaction ends (the check may have stopped before it took the sums).
    func stop() {
        stopping.store(true, ordering: .relaxed)
        _ = idIndex()
        waitForProjection()
    }
}
