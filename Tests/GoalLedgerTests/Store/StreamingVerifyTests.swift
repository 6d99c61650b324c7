import Foundation
import LMDB
import Synchronization
import Testing

@testable import GoalLedger

/// `verify` checks a sound store one goal at a time, in memory that does not grow with the log:
/// on every kind of sound store it reports what the full check (a fresh replay of the whole
/// ledger) reports, and it finds every damage the full check names (`VerifyChecksTests`).
struct StreamingVerifyTests {
    let now = instant("2026-11-05T12:00:00Z")

    /// Whether two clean reports say the same.
    static func same(_ a: VerificationReport, _ b: VerificationReport) -> Bool {
        a.events == b.events && a.goals == b.goals && a.problems == b.problems && a.unsignedEvents == b.unsignedEvents
            && a.setAside == b.setAside
    }

    /// The store's report from the goal-at-a-time check, which must exist (the store is sound)
    /// and equal the full check's.
    @discardableResult
    func streamed(_ store: LedgerStore, _ comment: String = "") throws -> VerificationReport {
        let streamed = try #require(try store.reading { try $0.streamingVerification() }, "\(store.device) \(comment)")
        let full = try store.reading { try $0.fullVerification() }
        #expect(full.isClean, "\(comment): \(full.problems.prefix(3))")
        #expect(Self.same(streamed, full), "\(store.device) \(comment)")
        // The log read by decoders on threads of their own (one, two, three), in runs of 3: the same report.
        for decoders in 1...3 {
            let decoded = try #require(
                try store.reading {
                    try $0.streamingVerification(decoding: LogDecodingPlan(minimumEvents: 1, runLength: 3, decoders: decoders))
                },
                "\(store.device) \(comment), decoded ahead by \(decoders)")
            #expect(Self.same(decoded, full), "\(store.device) \(comment), decoded ahead by \(decoders)")
        }
        // The goal walk in batches of one or two goals (each batch's events read in position order).
        let batched = try #require(
            try store.reading { try $0.streamingVerification(decoding: LogDecodingPlan(goalBatchEvents: 2)) },
            "\(store.device) \(comment), small batches")
        #expect(Self.same(batched, full), "\(store.device) \(comment), small batches")
        return streamed
    }

    /// A store holding goals a and b, created, then `entries` progress entries taking turns
    /// between them; the goal-at-a-time check agrees with the full one.
    func twoGoals(entries: Int) throws -> (TemporaryStore, UUID, UUID) {
        let t = try TemporaryStore()
        let (a, b) = (UUID(), UUID())
        let created = [a, b].map { #"{"type":"goalCreated","goal":"\#($0)","title":"G","progress":{"kind":"measurable","target":5}}"# }
        try t.store.append(
            try drafts(created + (0..<entries).map { #"{"type":"progressRecorded","goal":"\#($0 % 2 == 0 ? a : b)","amount":\#($0 + 1)}"# }),
            now: now)
        try streamed(t.store)
        return (t, a, b)
    }

    /// The first row `entries` (the table `db`) holds for `goal`: its 36-byte key and its value.
    static func firstEntryRow(of goal: UUID, _ db: Database, _ txn: borrowing StoreTransaction) throws -> (key: [UInt8], value: [UInt8])? {
        var row: (key: [UInt8], value: [UInt8])?
        try txn.scanEntries(db, from: goal.bytes) { k, v in
            row = (Array(k), Array(v))
            return false
        }
        return row
    }

    /// A store of device "phone" holding `dayOne`, and a clone of it for `device`, in a
    /// directory that lasts as long as the caller keeps it.
    func phoneAndClone(_ device: String) throws -> (TemporaryDirectory, LedgerStore, LedgerStore) {
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        try phone.append(try drafts(dayOne), now: now)
        return (dir, phone, try phone.clone(to: dir.path + "/\(device)", device: device, now: now))
    }

    /// The goal-at-a-time check of `store` gives up (to the full check) in batches of each size.
    func expectStops(_ store: LedgerStore, _ comment: String = "", batches: [Int] = [LogDecodingPlan().goalBatchEvents, 1]) throws {
        for batch in batches {
            #expect(try store.reading { try $0.streamingVerification(decoding: LogDecodingPlan(goalBatchEvents: batch)) } == nil, "\(comment) \(batch)")
        }
    }

    /// A record that does not decode, a gap in the positions and a record whose chain breaks
    /// each stop the goal-at-a-time check, with the log read in this thread or by a decoder,
    /// and the full check names them.
    @Test(arguments: ["undecodable", "gap", "chain"])
    func damageToTheLogStopsTheCheckHoweverTheLogIsRead(_ damage: String) throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        let entry = #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":2}"#
        for _ in 0..<4 { try t.store.append(try drafts([entry, entry, entry]), now: now) }
        try streamed(t.store)
        let events = t.store.layout.events
        try t.store.writeTransaction { txn in
            switch damage {
            case "undecodable":
                try txn.put(events, key: UInt64(6).bigEndianBytes, value: [0, 1, 2, 3])
            case "gap":
                _ = try txn.delete(events, key: UInt64(6).bigEndianBytes)
            default:
                // Event 6 stored again as event 7's record: its sequence and chain are out of place.
                let seventh = try #require(try txn.get(events, key: UInt64(7).bigEndianBytes))
                try txn.put(events, key: UInt64(6).bigEndianBytes, value: seventh)
            }
        }
        for plan in [
            LogDecodingPlan(minimumEvents: .max), LogDecodingPlan(minimumEvents: 1, runLength: 1), LogDecodingPlan(minimumEvents: 1, runLength: 4),
            LogDecodingPlan(minimumEvents: 1, runLength: 2, decoders: 1), LogDecodingPlan(minimumEvents: 1, runLength: 2, decoders: 3),
        ] {
            #expect(try t.store.reading { try $0.streamingVerification(decoding: plan) } == nil, "\(damage), runs of \(plan.runLength)")
        }
        #expect(try !t.store.verify().isClean)
    }

    /// A store just created, nothing appended, verifies: its founder, recorded at creation, is
    /// the one the ledger's id names. A recorded founder the id does not name is not trusted.
    @Test func aNewStoreVerifiesBeforeItsFirstEvent() throws {
        let t = try TemporaryStore()
        let report = try streamed(t.store, "just created")
        #expect(report.events == 0 && report.goals == 0)
        // Another key recorded as the founder's (the trust table left as it was): the log holds
        // no signature yet, and the row is not the founder's, so the log trusts nobody where
        // the table trusts the store's key.
        try t.store.writeTransaction { txn in try txn.recordFounder("phone", [UInt8](repeating: 7, count: 32)) }
        #expect(try t.store.reading { try $0.streamingVerification() } == nil)
        #expect(try t.store.verify().problems.contains { $0.hasPrefix("trust: the keys of phone") })
    }

    /// The live trust takes a recorded founder only when the ledger's id names its key: a row
    /// altered to another key is looked for again (in the keys the table holds, the log's
    /// signatures), and the other key is never trusted.
    @Test func aFounderRowNamingAnotherKeyIsNotTrusted() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        let own = try #require(try t.store.reading { try $0.publicKey() })
        let forged = [UInt8](repeating: 7, count: 32)
        let keys = { try t.store.writeTransaction { txn in try txn.trustState().devices["phone"]?.keys.map(\.key) ?? [] } }
        #expect(try keys() == [own])
        try t.store.writeTransaction { txn in
            try txn.recordFounder("phone", forged)
            _ = try t.store.recomputeTrust(txn)
            // Found again from the store's own signatures, and recorded in place of the altered row.
            #expect(try txn.founder()?.key == own)
        }
        #expect(try keys() == [own])
        // The store goes on appending under its own key, and verifies clean.
        try t.store.append(try drafts([#"{"type":"progressRecorded","goal":"\#(runGoal)","amount":1}"#]), now: now)
        #expect(try t.store.verify().isClean)
    }

    @Test func signedDevicesWithARevocationAgreeWithTheFullCheck() throws {
        let (dir, phone, tablet) = try phoneAndClone("tablet")
        defer { withExtendedLifetime(dir) {} }
        let watch = try phone.clone(to: dir.path + "/watch", device: "watch", now: now)
        let entry = #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":2}"#
        for store in [phone, tablet, watch] { try store.append(try drafts([entry, entry]), now: now) }
        _ = try watch.sync(with: phone)
        _ = try tablet.sync(with: phone)
        try phone.revoke(device: "watch", now: now)
        // The watch's later events stay behind: its own store counts them, the others refuse them.
        try watch.append(try drafts([entry]), now: now)
        _ = try tablet.sync(with: phone)
        _ = try tablet.sync(with: watch)
        for store in [phone, tablet, watch] {
            let report = try streamed(store)
            #expect(report.goals == 3 && report.unsignedEvents == 0)
        }
    }

    /// From 128 goals the goal walk runs in parts on threads of their own: its report is the
    /// full check's, and a goal's damage in any part is found.
    @Test func aWalkInPartsAgreesWithTheFullCheckAndFindsDamageInEachPart() throws {
        let t = try TemporaryStore()
        let goals = (0..<300).map { _ in UUID() }
        try t.store.append(
            try drafts(
                goals.map { #"{"type":"goalCreated","goal":"\#($0)","title":"G","progress":{"kind":"measurable","target":5}}"# }
                    + goals.flatMap { g in (1...3).map { #"{"type":"progressRecorded","goal":"\#(g)","amount":\#($0)}"# } }), now: now)
        let report = try streamed(t.store)
        #expect(report.goals == 300)
        // One entry row altered in the first goal and in the last, in key order: each in another part.
        let sorted = goals.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
        for goal in [sorted.first!, sorted.last!] {
            let (key, value) = try t.store.writeTransaction { txn in
                let entries = try txn.activeProjection().entries
                let (key, value) = try #require(try Self.firstEntryRow(of: goal, entries, txn))
                try txn.putEntry(entries, key: key, value: value + [0])
                return (key, value)
            }
            #expect(try t.store.reading { try $0.streamingVerification() } == nil)
            #expect(try t.store.reading { try $0.streamingVerification(decoding: LogDecodingPlan(goalBatchEvents: 5)) } == nil)
            let problems = try t.store.verify().problems
            #expect(problems.count == 1 && problems[0].contains(goal.uuidString) && problems[0].hasSuffix("differs from a fresh replay"), "\(problems)")
            try t.store.writeTransaction { txn in try txn.putEntry(try txn.activeProjection().entries, key: key, value: value) }
            try streamed(t.store)
        }
    }

    /// The goal index's rows of two goals swapped (each goal's rows whole, so their counts
    /// still agree): the walk reads an event of the other goal where it expects one of its own,
    /// in one batch or in many, and stops; the full check names the damage.
    @Test func goalIndexRowsNamingAnotherGoalsEventsStopTheWalkInAnyBatch() throws {
        let (t, a, b) = try twoGoals(entries: 12)
        try t.store.writeTransaction { txn in
            var rows: [(key: [UInt8], value: [UInt8])] = []
            try txn.scan(txn.layout.goalPositions) { k, v in
                rows.append((Array(k), Array(v)))
                return true
            }
            #expect(rows.count >= 2)
            for row in rows { _ = try txn.delete(txn.layout.goalPositions, key: row.key) }
            for row in rows {
                let other = row.key.prefix(16).elementsEqual(a.bytes) ? b.bytes : a.bytes
                try txn.put(txn.layout.goalPositions, key: other + row.key[16...], value: row.value)
            }
        }
        try expectStops(t.store, batches: [LogDecodingPlan().goalBatchEvents, 1, 3])
        #expect(try !t.store.verify().isClean)
    }

    @Test(arguments: 0..<8)
    func randomUnsignedHistoriesAgreeWithTheFullCheck(_ seed: Int) throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        let events = PendingTableTests.events(seed: UInt64(seed) &+ 7, count: 90)
        var start = 0
        var rng = SeededRandom(seed: UInt64(seed))
        while start < events.count {
            let end = min(events.count, start + 1 + Int(rng.next() % 12))
            _ = try t.store.importEvents(Array(events[start..<end]), from: "test")
            start = end
            try streamed(t.store, "seed \(seed) after \(end) events")
        }
        #expect(try streamed(t.store).unsignedEvents > 0)
    }

    @Test func setAsideEventsOfAStoreWrittenBeforeTheGateAgreeWithTheFullCheck() throws {
        let dir = TemporaryDirectory()
        let paths = try EventGateTests.legacyFixture(in: dir)
        for path in [paths.phone, paths.laptop] {
            let store = try LedgerStore.open(at: path)
            let report = try streamed(store)
            if path == paths.phone { #expect(report.setAside.count == 3) }
        }
    }

    @Test func aSchemaOneStoreWithHistoryWritesAgreesWithTheFullCheck() throws {
        let dir = TemporaryDirectory()
        let store = try LedgerStore.create(at: dir.path + "/s", device: "phone", schema: 1)
        let goal = UUID(uuidString: "B0000000-0000-4000-8000-000000000001")!
        let entry = { (n: Int) in
            HistoryEntry(
                id: UUID(uuidString: String(format: "E0000000-0000-4000-8000-%012d", n))!, amount: try! Amount(whole: Int64(n)),
                occurredAt: instant("2026-10-0\(n)T20:00:00Z"))
        }
        try store.append(
            [
                EventDraft(
                    at: instant("2026-10-01T08:00:00Z"),
                    payload: .goalCreated(
                        GoalCreated(goal: goal, title: "Read", cadence: .daily, progressKind: .measurable, target: try! Amount("20")))),
                EventDraft(
                    at: instant("2026-10-03T21:00:00Z"),
                    payload: .progressHistoryReplaced(ProgressHistoryReplaced(goal: goal, entries: [entry(1), entry(2)], base: nil))),
                EventDraft(
                    at: instant("2026-10-04T21:00:00Z"),
                    payload: .progressHistoryReplaced(ProgressHistoryReplaced(goal: goal, entries: [entry(3)], base: nil))),
            ], now: now)
        try streamed(store)
        _ = try store.migrate()
        try streamed(store, "migrated")
    }

    @Test func aDamagedProjectionRowIsFoundAndNamedByTheFullCheck() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        try streamed(t.store)
        // One entry row of the stored projection altered: the goal walk sees it differ.
        try t.store.writeTransaction { txn in
            let tables = try txn.activeProjection()
            var first: ([UInt8], [UInt8])?
            try txn.scanAllEntries(tables.entries) { k, v in
                first = (Array(k), Array(v))
                return false
            }
            let (key, value) = try #require(first)
            try txn.putEntry(tables.entries, key: key, value: value + [0])
        }
        #expect(try t.store.reading { try $0.streamingVerification() } == nil)
        let report = try t.store.verify()
        #expect(report.problems.count == 1 && report.problems[0].hasSuffix("differs from a fresh replay"), "\(report.problems)")
    }

    /// The goal walk compares each table with the fold by its row count and an order-independent
    /// sum of its rows: a row of any table altered, two rows' values exchanged, or an entry's row
    /// moved under another goal (each keeping every table's count) stops it, and the full check
    /// names the damage; put back, the store is sound again.
    @Test(arguments: ProjectionTable.allCases.filter { $0 != .setAside })
    func anyTablesRowAlteredInPlaceStopsTheWalk(_ table: ProjectionTable) throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        try t.store.append(
            try drafts(
                (3...9).map { #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":\#($0),"at":"2026-11-0\#($0)T09:00:00Z"}"# }
                    + [
                        #"{"type":"progressRecorded","goal":"\#(meditateGoal)","completed":true,"at":"2026-11-05T09:00:00Z"}"#,
                        #"{"id":"20000000-0000-4000-8000-000000000001","type":"progressRecorded","goal":"\#(runGoal)","amount":1,"at":"2026-11-05T10:00:00Z"}"#,
                        #"{"type":"progressRemoved","goal":"\#(runGoal)","entry":"20000000-0000-4000-8000-000000000001","at":"2026-11-05T11:00:00Z"}"#,
                    ]),
            now: now)
        try streamed(t.store)
        typealias Row = (key: [UInt8], value: [UInt8])
        func rows() throws -> [Row] {
            try t.store.writeTransaction { txn in
                var rows: [Row] = []
                try txn.scan(try txn.activeProjection()[table]) { k, v in
                    rows.append((Array(k), Array(v)))
                    return true
                }
                return rows
            }
        }
        func put(_ r: Row, _ value: [UInt8], replacing old: [UInt8]) throws {
            try t.store.writeTransaction { txn in
                let db = try txn.activeProjection()[table]
                if table.hasDuplicates { _ = try txn.delete(db, key: r.key, value: old) }
                try txn.put(db, key: r.key, value: value)
            }
        }
        func expectStopped(_ what: String) throws {
            #expect(try t.store.reading { try $0.streamingVerification() } == nil, "\(table) \(what)")
            let problems = try t.store.verify().problems
            #expect(!problems.isEmpty && problems.allSatisfy { $0.hasPrefix("projection ") }, "\(table) \(what): \(problems)")
        }
        let stored = try rows()
        try #require(!stored.isEmpty, "\(table) holds no row")
        // One row's value altered (a byte more).
        try put(stored[0], stored[0].value + [0], replacing: stored[0].value)
        try expectStopped("one row altered")
        try put(stored[0], stored[0].value, replacing: stored[0].value + [0])
        try streamed(t.store, "\(table) restored")
        // Two rows' values exchanged: the table holds the same values under other keys.
        if let other = stored.firstIndex(where: { $0.key != stored[0].key && $0.value != stored[0].value }) {
            let (a, b) = (stored[0], stored[other])
            try put(a, b.value, replacing: a.value)
            try put(b, a.value, replacing: b.value)
            try expectStopped("two values exchanged")
            try put(a, a.value, replacing: b.value)
            try put(b, b.value, replacing: a.value)
            try streamed(t.store, "\(table) exchanged back")
        }
        // An entry's row moved under another goal, the same bytes.
        if table == .entries, let other = stored.first(where: { $0.key != stored[0].key }) {
            try t.store.writeTransaction { txn in
                let db = try txn.activeProjection()[table]
                _ = try txn.delete(db, key: stored[0].key, value: stored[0].value)
                try txn.put(db, key: other.key, value: stored[0].value)
            }
            try expectStopped("an entry under another goal")
        }
    }

    /// The walk takes each goal's entries from the stored `entries` table, and the read of the
    /// log sums the rows that table must hold: a row missing, a row of another goal's, or one
    /// whose goal is another, each stops the check (with every batch size), and the full check
    /// names the damage.
    @Test(arguments: ["missing", "extra", "moved"])
    func entryRowsTheLogDoesNotCallForStopTheWalk(_ damage: String) throws {
        let (t, a, b) = try twoGoals(entries: 10)
        try t.store.writeTransaction { txn in
            let entries = try txn.activeProjection().entries
            let (key, value) = try #require(try Self.firstEntryRow(of: a, entries, txn))
            switch damage {
            case "missing":
                #expect(try txn.deleteEntry(entries, key: key))
            case "extra":
                // The row again under goal b, goal a's kept.
                try txn.putEntry(entries, key: b.bytes + key[16...], value: value)
            default:
                #expect(try txn.deleteEntry(entries, key: key))
                try txn.putEntry(entries, key: b.bytes + key[16...], value: value)
            }
        }
        try expectStops(t.store, damage)
        #expect(try !t.store.verify().isClean, "\(damage)")
    }

    /// One entry's position moved from goal a's row of the goal index to goal b's and one of
    /// b's to a's (the rows' counts unchanged): the walk reads neither event (their entries come
    /// from `entries`), and the sum of the index's pairs against the log's stops the check.
    @Test func anEntrysPositionUnderAnotherGoalInTheGoalIndexStopsTheWalk() throws {
        let (t, _, _) = try twoGoals(entries: 10)
        try t.store.writeTransaction { txn in
            var rows: [(goal: [UInt8], positions: [UInt64], total: UInt64)] = []
            try txn.scan(txn.layout.goalPositions) { k, v in
                var row = GoalPositionRow.Decoded()
                let read = row.read(key: k, value: v)
                #expect(read)
                rows.append((Array(k.prefix(16)), row.positions, row.total))
                return true
            }
            // One row a goal: its creation first, then its entries.
            #expect(rows.count == 2 && rows.allSatisfy { $0.positions.count == 6 })
            for row in rows { _ = try txn.delete(txn.layout.goalPositions, key: row.goal + row.positions[0].bigEndianBytes) }
            // Each goal's last entry swapped with the other's.
            var swapped = rows
            swapped[0].positions[5] = rows[1].positions[5]
            swapped[1].positions[5] = rows[0].positions[5]
            for row in swapped {
                let positions = row.positions.sorted()
                var w = ByteWriter()
                for (p, q) in zip(positions, positions.dropFirst()) { w.varint(q - p) }
                try txn.put(
                    txn.layout.goalPositions, key: row.goal + positions[0].bigEndianBytes,
                    value: GoalPositionRow.value(total: row.total, distances: w.bytes))
            }
        }
        try expectStops(t.store)
        #expect(try !t.store.verify().isClean)
    }

    /// A device revoked after it recorded entries it had not yet learned of the revocation:
    /// once it learns, its own log keeps those entries, no fold reads them, and `entries` holds
    /// no row of them; the read of the log leaves them out of the rows it sums as the fold does.
    @Test func entriesOfARevokedDeviceAfterItsCutoffAreNotRowsTheLogCallsFor() throws {
        let (dir, phone, watch) = try phoneAndClone("watch")
        defer { withExtendedLifetime(dir) {} }
        let entry = #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":2}"#
        try watch.append(try drafts([entry, entry]), now: now)
        _ = try watch.sync(with: phone)
        try phone.revoke(device: "watch", now: now)
        try watch.append(try drafts([entry, entry, entry]), now: now)
        _ = try watch.sync(with: phone)
        var recorded: [Event] = []
        try watch.reading { snapshot in
            try snapshot.scanEvents { _, e in
                if case .progressRecorded = e.payload, e.origin == "watch" { recorded.append(e) }
                return true
            }
        }
        let counted = try watch.reading { try $0.goalState(UUID(uuidString: runGoal)!) }.recordedEntries.values.filter { $0.device == "watch" }
        #expect(recorded.count == 5)
        #expect(counted.count == 2)
        try streamed(watch)
        try streamed(phone)
    }

    /// The progress hook is called at the same depth however often it was read: reading it must
    /// not wrap it (a hook re-wrapped on every read was called through thousands of thunks by
    /// the end of a million-event `verify`, and a longer log would overflow the stack).
    @Test func theProgressHookIsCalledAtTheSameDepthEveryTime() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        let entry = #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":1}"#
        for _ in 0..<10 { try t.store.append(try drafts(Array(repeating: entry, count: 100)), now: now) }
        let depths = Mutex<[(check: VerificationCheck, position: UInt64, depth: Int)]>([])
        t.store.verifyProgress = { check, position in
            depths.withLock { $0.append((check, position, Thread.callStackReturnAddresses.count)) }
        }
        try streamed(t.store)
        // Reads of the log (goal at a time, the full check, decoded ahead, in small batches),
        // each saying where it is every 256 records, from one call site: one depth per read.
        var reads: [[Int]] = []
        for call in depths.withLock({ $0 }) where call.check == .log {
            if call.position == 0 { reads.append([]) } else if !reads.isEmpty { reads[reads.count - 1].append(call.depth) }
        }
        #expect(reads.count >= 3 && reads.allSatisfy { $0.count >= 4 }, "\(reads)")
        #expect(reads.allSatisfy { Set($0).count == 1 }, "depths of the log's progress calls, read by read: \(reads)")
        depths.withLock { $0.removeAll() }
        t.store.verifyProgress?(.log, 0)
        for _ in 0..<1_000 { _ = t.store.verifyProgress }
        t.store.verifyProgress?(.log, 1)
        let direct = depths.withLock { $0 }.map(\.depth)
        #expect(direct.count == 2 && direct[0] == direct[1], "\(direct)")
    }

    /// The log's read keeps the stream of the origin read last apart from the others: a log
    /// whose origins alternate event by event verifies as the full check does, and an event of
    /// one origin put in place of another of the same origin (its sequence then out of place)
    /// stops it, however often the origins changed in between.
    @Test func originsAlternatingEventByEventAgreeWithTheFullCheckAndKeepTheirSequences() throws {
        let (dir, phone, tablet) = try phoneAndClone("tablet")
        defer { withExtendedLifetime(dir) {} }
        let entry = #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":1}"#
        for _ in 0..<20 {
            try phone.append(try drafts([entry]), now: now)
            try tablet.append(try drafts([entry]), now: now)
            _ = try phone.sync(with: tablet)
        }
        try streamed(phone, "alternating")
        // The tablet's events in the phone's log, by position: two of them with one of the
        // phone's between.
        let events = phone.layout.events
        let (earlier, later) = try phone.writeTransaction { txn in
            var tablets: [(position: UInt64, sequence: UInt64)] = []
            for position in 1...(try txn.lastPosition()) {
                let e = try #require(try txn.event(at: position))
                if e.origin == "tablet" { tablets.append((position, e.sequence)) }
            }
            let pair = try #require(
                zip(tablets, tablets.dropFirst()).dropFirst(5).first { $0.1.position > $0.0.position + 1 && $0.1.sequence == $0.0.sequence + 1 })
            return pair
        }
        try phone.writeTransaction { txn in
            let record = try #require(try txn.get(events, key: later.position.bigEndianBytes))
            try txn.put(events, key: earlier.position.bigEndianBytes, value: record)
        }
        for plan in [LogDecodingPlan(minimumEvents: .max), LogDecodingPlan(minimumEvents: 1, runLength: 2, decoders: 2)] {
            #expect(try phone.reading { try $0.streamingVerification(decoding: plan) } == nil, "runs of \(plan.runLength)")
        }
        #expect(try !phone.verify().isClean)
    }

    /// An unsigned record's chain hash made into the hash's words directly is the chain's own
    /// hash of the record, for records of every length around BLAKE2b's 128-byte blocks.
    @Test func aRecordsChainHashMadeInPlaceIsTheChainsOwn() {
        var rng = SeededRandom(seed: 11)
        for length in [5, 6, 37, 132, 133, 134, 261, 262, 400] {
            let record = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let own = EventChain.hash(record: record)
            let made = record.withUnsafeBytes { Hash32(hashOfRecord: $0) }
            #expect(made == Hash32(own) && made.bytes == own, "a record of \(length) bytes")
        }
    }
}
