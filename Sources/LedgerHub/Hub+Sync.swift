import Foundation
import GoalLedger
import PostgreSQL

extension Hub {
    /// How a push sends its rows: binary `COPY` into a temporary table, then one `INSERT … SELECT`
    /// (row-level security refuses `COPY` straight into a table it guards), or batched `INSERT`s
    /// of arrays. Both are measured by the benchmark; `copy` is the default.
    public enum PushMethod: String, Sendable {
        /// Binary `COPY` into a temporary table, then one `INSERT … SELECT`.
        case copy
        /// Batched `INSERT`s of arrays.
        case insert
    }

    /// The last event the hub holds of one origin.
    struct Head {
        var sequence: UInt64
        var eventID: UUID
        var hlc: Int64
        var record: [UInt8]
    }

    /// Exchanges events with the hub both ways, in one PostgreSQL transaction (pushes of one
    /// ledger take turns) and one LMDB transaction: reads the hub's last sequence per origin,
    /// pushes what the hub lacks, pulls what the store lacks through the store's import checks.
    /// Any refusal rolls both back and names the event (exit 3); a hub that fails or goes away
    /// leaves the store unchanged (exit 5) and holds no part of the push.
    public func sync(_ store: LedgerStore) throws(LedgerError) -> SyncResult {
        try sync(store, method: .copy)
    }

    /// `sync(_:)` with a chosen way of pushing (for the benchmark).
    public func sync(_ store: LedgerStore, method: PushMethod) throws(LedgerError) -> SyncResult {
        // The hub's transaction commits inside the store's write transaction, last before it
        // commits: a hub that fails at its commit leaves the store unchanged.
        try begin()
        do throws(LedgerError) {
            try checkSchema()
            try lock(ledger: store.ledgerID)
            var hub = try heads(of: store.ledgerID)
            let local = try store.reading { try $0.originHeads() }
            var unreadable: [WaitingEvents] = []
            // Where both hold an origin, the event at the lower head must be the same one: else
            // the two histories of that device diverged (e.g. a store restored from an old backup
            // that wrote again), and that origin is left out both ways, named as waiting. Where
            // the hub is ahead, the pull's first event checks it.
            for (origin, head) in hub.sorted(by: { $0.key < $1.key }) where head.sequence <= (local[origin] ?? 0) {
                let reason: String
                do throws(LedgerError) {
                    let theirs = try decode(head.record, origin: origin, sequence: head.sequence, id: head.eventID, hlc: head.hlc)
                    let mine = try store.reading { try $0.event(origin: origin, sequence: head.sequence) }
                    if mine == theirs { continue }
                    reason =
                        "fork: event \(theirs.id.uuidString) (\(origin)/\(head.sequence)) there differs from \(mine.map { "event \($0.id.uuidString)" } ?? "the event") held here: the histories of device \(origin) diverged"
                } catch {
                    reason = error.message
                }
                unreadable.append(
                    WaitingEvents(
                        origin: origin, sequence: head.sequence, count: 1, cause: .malformed, reason: "the hub at \(name): " + reason))
                // Nothing of this origin moves: the hub seems to hold all of it already.
                hub[origin]!.sequence = local[origin] ?? 0
            }
            let hubSequences = hub.mapValues(\.sequence)
            var pushed = 0
            if local.contains(where: { $0.value > (hubSequences[$0.key] ?? 0) }) {
                pushed = try push(store, after: hubSequences, method: method)
            }
            var pulled = ImportResult()
            let behind = hub.filter { $0.value.sequence > (local[$0.key] ?? 0) }
            if !behind.isEmpty {
                // In a signed ledger, only origins that hold a key here, or that an event fetched
                // enrols, are fetched: rows of made-up origins (a hub role can write any) are not
                // downloaded again and again, only counted.
                let known = try knownOrigins(of: store, holding: local)
                var wanted = known.map { k in Set(behind.keys.filter { k.contains($0) }) } ?? Set(behind.keys)
                let wantedFirst = wanted
                // Each origin from the last event held here (so the import checks it is the same one).
                func read(_ origin: String, into walk: inout PageWalk<HubSource>) {
                    walk.add(origin, from: max(1, local[origin] ?? 1), through: behind[origin]!.sequence)
                }
                // Room for what is behind, before the one write: a write that fills the map runs
                // again from its start, and this one would read the hub again.
                let events = behind.saturatingSum { Int(clamping: $0.value.sequence - (local[$0.key] ?? 0)) }
                try store.reserveRoom(events, times: LedgerStore.roomPerEvent)
                pulled = try store.writing { (w) throws(LedgerError) in
                    // Made again if the write runs again (on a larger map).
                    var pages = PageWalk(hub: self, ledger: store.ledgerID, pageEvents: pageEvents)
                    for origin in wantedFirst { read(origin, into: &pages) }
                    wanted = wantedFirst
                    return try pages.importPages(
                        unreadable: unreadable,
                        page: { (page, walk) in
                            // An enrolment fetched brings its device's events along.
                            guard known != nil else { return }
                            for e in page.events {
                                guard case .deviceEnrolled(let p) = e.payload, behind[p.device] != nil, !wanted.contains(p.device) else {
                                    continue
                                }
                                wanted.insert(p.device)
                                read(p.device, into: &walk)
                            }
                        },
                        apply: { (changes, unreadable, last) throws(LedgerError) in
                            try w.apply(changes, from: "the hub at \(name)", unreadable: unreadable, beforeCommit: last ? commit : nil)
                        },
                        heads: { () throws(LedgerError) in try w.originHeads() },
                        rename: { (entry) throws(LedgerError) in try w.renameWaiting(entry) })
                }
                let skipped = behind.filter { !wanted.contains($0.key) }
                pulled.unknownOrigins += skipped.count
                let skippedEvents = skipped.saturatingSum { Int(clamping: $0.value.sequence - (local[$0.key] ?? 0)) }
                pulled.unknownOriginEvents = [pulled.unknownOriginEvents, skippedEvents].saturatingSum { $0 }
            } else {
                // Nothing to pull still completes an exchange (a restored store may append again).
                pulled = try store.writing {
                    try $0.apply(
                        ChangeSet(ledger: store.ledgerID, events: [], records: []), from: "the hub at \(name)", unreadable: unreadable,
                        beforeCommit: commit)
                }
            }
            return SyncResult(pulled: pulled, pushed: ImportResult(imported: pushed, alreadyPresent: 0))
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// In a signed ledger that trusts some device already: the origins that hold a key there,
    /// with the store's own device and every origin it holds events of; nil otherwise (a store
    /// that trusts nobody yet, a clone's first pull, takes every origin).
    func knownOrigins(of store: LedgerStore, holding local: [String: UInt64]) throws(LedgerError) -> Set<String>? {
        guard store.ledgerID.uuid.6 >> 4 == 8 else { return nil }
        let devices = try store.reading { try $0.enrolledDevices() }.map(\.device)
        guard !devices.isEmpty else { return nil }
        return Set(devices).union(local.keys).union([store.device])
    }

    private func commit() throws(LedgerError) {
        try run { () throws(PostgreSQLError) in try connection.execute("COMMIT") }
    }

    /// Creates a store at `path` for a new device of `ledger`, holding all of the hub's events of
    /// that ledger, read and written a page at a time (`PageWalk`), each page in a write
    /// transaction of its own. Nothing is left at `path` when it fails.
    public func clone(ledger: UUID, to path: String, device: String) throws(LedgerError) -> LedgerStore {
        let existed = FileManager.default.fileExists(atPath: path)
        do throws(LedgerError) {
            // Read in one bounded transaction (`begin`): no other session can stall it for ever.
            return try transaction { () throws(LedgerError) in
                try checkSchema()
                let heads = try self.heads(of: ledger)
                guard !heads.isEmpty else {
                    throw LedgerError(.store, "the hub at \(name) holds no events of ledger \(ledger.uuidString) that this role may read")
                }
                guard heads[device] == nil else {
                    throw LedgerError(
                        .invalidArgument, "device \(device) already belongs to ledger \(ledger.uuidString); choose another name")
                }
                // A ledger's stores take the newest schema its events were written under: an
                // origin's last event's (a device's schema only ever rises).
                let schemas = heads.values.compactMap { h in try? h.record.withUnsafeBytes { try EventCodec.decode($0).schema } }
                let store = try LedgerStore.create(
                    at: path, device: device, ledger: ledger, schema: Int(schemas.max() ?? UInt8(LedgerStore.currentSchema)))
                var walk = PageWalk(hub: self, ledger: ledger, pageEvents: pageEvents)
                for (origin, head) in heads { walk.add(origin, from: 1, through: head.sequence) }
                _ = try walk.importPages(
                    unreadable: [],
                    apply: { (changes, unreadable, _) throws(LedgerError) in
                        let result = try store.writing { try $0.apply(changes, from: "the hub at \(name)", unreadable: unreadable) }
                        try store.releaseMappedPages()
                        return result
                    },
                    heads: { () throws(LedgerError) in try store.reading { try $0.originHeads() } },
                    rename: { (entry) throws(LedgerError) in try store.writing { try $0.renameWaiting(entry) } })
                // A name the ledger enrolled (its device has not written yet) belongs to that device.
                if try (store.reading { try $0.enrolledDevices() }).contains(where: { $0.device == device }) {
                    throw LedgerError(
                        .invalidArgument, "device \(device) is enrolled in ledger \(ledger.uuidString) already; choose another name")
                }
                return store
            }
        } catch {
            if !existed { try? FileManager.default.removeItem(atPath: path) }
            throw error
        }
    }

    // MARK: Reading

    /// The hub's last event per origin of `ledger` (as far as this role may see).
    func heads(of ledger: UUID) throws(LedgerError) -> [String: Head] {
        let origins = try run { () throws(PostgreSQLError) in
            try connection.query("SELECT origin, head FROM hub.heads WHERE ledger = $1", [.uuid(ledger)])
        }
        var heads: [String: Head] = [:]
        for o in 0..<origins.rowCount {
            let (origin, head) = (origins.string(o, 0), origins.int64(o, 1))
            let rows = try run { () throws(PostgreSQLError) in
                try connection.query(Self.headQuery, [.uuid(ledger), .text(origin), .int64(head)])
            }
            // A head that is no sequence (below 1) names no event the hub may hold.
            guard rows.rowCount == 1, rows.int64(0, 0) == head, let sequence = UInt64(exactly: head), sequence > 0 else { continue }
            heads[origin] = Head(
                sequence: sequence, eventID: rows.uuid(0, 1) ?? UUID(), hlc: rows.int64(0, 2), record: rows.bytes(0, 3))
        }
        return heads
    }

    /// One origin's event at its head: `$1` ledger, `$2` origin, `$3` head. Asked as "the last
    /// at or below", the order only the primary key gives makes the planner look it up by its
    /// whole key; asked by equality it chose, with statistics from before a bulk insert, the
    /// (ledger, event id) index and read every row of the ledger (122 ms at 100,000 rows,
    /// against 0.2 ms).
    package static let headQuery = """
        SELECT sequence, event_id, hlc, record FROM hub.events
        WHERE ledger = $1 AND origin = $2 AND sequence <= $3 ORDER BY sequence DESC LIMIT 1
        """

    func decode(_ record: [UInt8], origin: String, sequence: UInt64, id: UUID, hlc: Int64) throws(LedgerError) -> Event {
        let result = record.withUnsafeBytes { b in
            Result { () throws(LedgerError) in try decode(b, origin: origin, sequence: sequence, id: id, hlc: hlc) }
        }
        return try result.get()
    }

    /// Decodes a record read from the hub; a damaged record, or one that does not say what its
    /// columns say, is refused naming the event.
    func decode(_ bytes: UnsafeRawBufferPointer, origin: String, sequence: UInt64, id: UUID, hlc: Int64) throws(LedgerError) -> Event {
        // Named only when something is wrong: formatting it costs more than the check.
        var what: String { "\(origin)/\(sequence) (event \(id.uuidString))" }
        let e: Event
        do {
            e = try EventCodec.decode(bytes)
        } catch {
            throw LedgerError(.invalidInput, "the hub at \(name) holds a damaged record for \(what): \(error.reason)")
        }
        guard e.origin == origin, e.sequence == sequence, e.id == id, e.hlc.rawValue == UInt64(bitPattern: hlc) else {
            throw LedgerError(
                .invalidInput,
                "the hub at \(name) files \(what) under columns its record contradicts: the record is \(e.origin)/\(e.sequence) (event \(e.id.uuidString), clock \(e.hlc))"
            )
        }
        return e
    }

    // MARK: Pushing

    /// Sends the store's events that the hub lacks; the hub's constraints and trigger refuse a
    /// gap, a taken sequence or event id, and a record that contradicts its columns.
    func push(_ store: LedgerStore, after heads: [String: UInt64], method: PushMethod) throws(LedgerError) -> Int {
        let ledger = store.ledgerID
        switch method {
        case .copy:
            try run { () throws(PostgreSQLError) in
                try connection.execute(
                    "CREATE TEMPORARY TABLE pushed (origin text, sequence bigint, event_id uuid, hlc bigint, record bytea) ON COMMIT DROP")
            }
            do {
                _ = try connection.copyIn("COPY pushed FROM STDIN (FORMAT binary)") { w in
                    try store.reading {
                        try $0.visitRecords(missingFrom: heads) { (e, bytes) throws(LedgerError) in
                            do throws(PostgreSQLError) {
                                try w.row(fields: 5)
                            } catch {
                                throw ledgerError(error)
                            }
                            w.text(e.origin)
                            w.int64(Int64(e.sequence))
                            w.uuid(e.id)
                            w.int64(Int64(bitPattern: e.hlc.rawValue))
                            w.bytes(bytes)
                        }
                    }
                }
            } catch let e as LedgerError {
                throw e
            } catch let e as PostgreSQLError {
                throw ledgerError(e)
            } catch {
                throw LedgerError(.internal, "pushing to the hub at \(name): \(error)")
            }
            return try run { () throws(PostgreSQLError) in
                try connection.query(
                    "INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record) SELECT $1, * FROM pushed", [.uuid(ledger)]
                ).affectedRows
            }
        case .insert:
            var batch = InsertBatch()
            var count = 0
            func send() throws(LedgerError) {
                guard !batch.origins.isEmpty else { return }
                try run { () throws(PostgreSQLError) in
                    try connection.query(
                        """
                        INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record)
                        SELECT $1, * FROM unnest($2::text[], $3::int8[], $4::uuid[], $5::int8[], $6::bytea[])
                        """,
                        [
                            .uuid(ledger), .textArray(batch.origins), .int64Array(batch.sequences), .uuidArray(batch.ids),
                            .int64Array(batch.clocks), .byteaArray(batch.records),
                        ])
                }
                count += batch.origins.count
                batch = InsertBatch()
            }
            try store.reading {
                try $0.visitRecords(missingFrom: heads) { (e, bytes) throws(LedgerError) in
                    batch.origins.append(e.origin)
                    batch.sequences.append(Int64(e.sequence))
                    batch.ids.append(e.id)
                    batch.clocks.append(Int64(bitPattern: e.hlc.rawValue))
                    batch.records.append(Array(bytes))
                    if batch.origins.count == InsertBatch.size { try send() }
                }
            }
            try send()
            return count
        }
    }

    private struct InsertBatch {
        static let size = 5_000
        var origins: [String] = []
        var sequences: [Int64] = []
        var ids: [UUID] = []
        var clocks: [Int64] = []
        var records: [[UInt8]] = []
    }
}
