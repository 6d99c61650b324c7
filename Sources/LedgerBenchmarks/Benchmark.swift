import Foundation
import GoalLedger
import LMDB
import LedgerFileCenter

/// One measured figure beside its raw-LMDB baseline from the same run.
public struct Figure: Sendable {
    public var name: String
    public var unit: String
    public var value: Double
    public var baseline: Double?
    public var baselineName: String?
    /// `value / baseline` for costs (time, bytes); the table says which way is better.
    public var ratio: Double? { baseline.map { $0 > 0 ? value / $0 : 0 } }
    public var note: String = ""
    /// The SQLite peer's figure for the same work in the same run, where it has one.
    public var peer: Double? = nil
    public var peerName: String? = nil
    /// `value / peer`, read the same way as `ratio`.
    public var peerRatio: Double? { peer.map { $0 > 0 ? value / $0 : 0 } }
    /// The peak resident memory of the process the figure timed, where it ran in one of its own.
    public var peakMiB: Double? = nil
    /// What the figure must reach (judged on a full run).
    public var target: Target? = nil

    public var json: JSONValue {
        .object([
            ("name", .string(name)), ("unit", .string(unit)), ("value", .number(value)),
            ("baseline", baseline.map { .number($0) } ?? .null), ("baselineName", baselineName.map { .string($0) } ?? .null),
            ("ratio", ratio.map { .number(($0 * 1000).rounded() / 1000) } ?? .null),
            ("peer", peer.map { .number($0) } ?? .null), ("peerName", peerName.map { .string($0) } ?? .null),
            ("peerRatio", peerRatio.map { .number(($0 * 1000).rounded() / 1000) } ?? .null), ("note", .string(note)),
            ("peakMiB", peakMiB.map { .number(($0 * 10).rounded() / 10) } ?? .null), ("target", target.map { .string($0.text) } ?? .null),
        ])
    }

    /// `json` with the target's verdict (`met`: true or false when judged, else null).
    public func json(judged: Bool) -> JSONValue {
        guard case .object(var members) = json else { return json }
        members.append(("met", judged ? target.map { .bool($0.isMet(self)) } ?? .null : .null))
        return .object(members)
    }
}

/// The sizes of a run; the full run uses the defaults, tests use tiny ones.
public struct BenchmarkSizes: Sendable {
    public var events = 1_000_000
    public var goals = 1_000
    public var syncEvents = 100_000
    public var reconcileGoalsSmall = 1_000
    public var reconcileGoalsLarge = 100_000
    /// The JSON lines of the `append --file` rate and the SQLite peer (the store the read
    /// commands are timed on holds `events`).
    public var lines = 200_000
    public init() {}

    public static let quick: BenchmarkSizes = {
        var s = BenchmarkSizes()
        s.events = 3_000
        s.goals = 50
        s.syncEvents = 1_000
        s.reconcileGoalsSmall = 20
        s.reconcileGoalsLarge = 200
        s.lines = 2_000
        return s
    }()
}

/// Runs every figure. Each ledger measurement has its raw-LMDB counterpart on the same bytes,
/// with the same commit sizes, in the same process.
public struct Benchmark {
    public var sizes: BenchmarkSizes
    public var directory: String
    /// The executable to run child processes with (for peak memory); nil skips those figures.
    public var executable: String?
    public var log: (String) -> Void = { _ in }

    public init(sizes: BenchmarkSizes, directory: String, executable: String?) {
        self.sizes = sizes
        self.directory = directory
        self.executable = executable
    }

    static let now = Instant(rfc3339: "2026-11-02T07:00:00Z")!
    /// The reminder time of the benchmark's goals, and one per minute of the hour.
    static let reminder = try! ReminderTime(hour: 7, minute: 30)
    static let reminders = (0..<60).map { try! ReminderTime(hour: 7, minute: $0) }

    public func run() throws -> [Figure] {
        var figures: [Figure] = []
        for batch in [1_000, 10_000] {
            figures += try appendFigures(batch: batch)
        }
        figures += try syncFigures()
        figures += try signatureFigures()
        figures += try commandFigures(rawAppend: figures.first { $0.name == "append (10000/commit)" }?.baseline)
        figures += try migrateFigures()
        figures += try reconcileFigures()
        return figures
    }

    // MARK: Workload

    /// Goal creations, then progress spread over the goals, with a few edits and tags.
    func workload(count: Int, goals: Int, seed: UInt64) -> [EventDraft] {
        var rng = SplitMix(seed: seed)
        let ids = (0..<goals).map { _ in rng.uuid() }
        var out: [EventDraft] = []
        out.reserveCapacity(count)
        for (i, id) in ids.enumerated() where out.count < count {
            out.append(
                EventDraft(
                    id: rng.uuid(), at: Instant(milliseconds: Self.now.milliseconds + Int64(i)),
                    payload: .goalCreated(
                        GoalCreated(
                            goal: id, title: "Goal \(i)", details: nil, cadence: [.daily, .weekly, .monthly][i % 3], targetDate: nil,
                            progressKind: .measurable, target: try! Amount("5"), unit: "km", reminder: Self.reminder, tags: ["bench"]))
                ))
        }
        var t = Self.now.milliseconds + Int64(goals)
        while out.count < count {
            t += 1_000
            let goal = ids[Int(rng.next() % UInt64(goals))]
            let payload: Payload
            switch rng.next() % 50 {
            case 0: payload = .goalEdited(GoalEdited(goal: goal, title: "Edited \(out.count)", replaces: [:]))
            case 1: payload = .tagAdded(TagAdded(goal: goal, tag: "t\(rng.next() % 5)"))
            default: payload = .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount(whole: Int64(rng.next() % 5)), completed: nil))
            }
            out.append(EventDraft(id: rng.uuid(), at: Instant(milliseconds: t), payload: payload))
        }
        return out
    }

    func fresh(_ name: String) throws -> String {
        let path = directory + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// Appends `drafts` to `store`, `batch` per commit, at the benchmark's clock.
    static func append(_ drafts: [EventDraft], to store: LedgerStore, batch: Int) throws {
        var i = 0
        while i < drafts.count {
            try store.writing { try $0.append(Array(drafts[i..<min(i + batch, drafts.count)]), now: now) }
            i += batch
        }
    }

    /// `drafts` without their ids: the library makes them, as it does for an app's typed calls.
    static func withoutIDs(_ drafts: [EventDraft]) -> [EventDraft] {
        drafts.map { d in
            var d = d
            d.id = nil
            return d
        }
    }

    /// The stored records of a ledger store, in position order.
    func records(of store: LedgerStore) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        try store.scanRawValues(of: "events") { out.append(Array($0)) }
        return out
    }

    /// The raw-LMDB baseline: a cursor scan of one of the store's tables, in seconds.
    static func rawScan(_ store: LedgerStore, _ table: String) throws -> Double {
        var bytes = 0
        let time = try seconds { try store.scanRawValues(of: table) { bytes &+= $0.count } }
        _ = bytes
        return time
    }

    /// For profiling the write path alone: appends the benchmark's workload of `sizes.events`
    /// events over `sizes.goals` goals to a new store at `path`, `batch` per commit, and
    /// returns the events per second.
    /// The library append alone (for profiling); with `libraryIDs`, the drafts carry no ids and
    /// the library makes them, as it does for an app's typed calls.
    public func appendOnly(at path: String, batch: Int, libraryIDs: Bool = false) throws -> Double {
        let given = workload(count: sizes.events, goals: sizes.goals, seed: 42)
        let drafts = libraryIDs ? Self.withoutIDs(given) : given
        let store = try LedgerStore.create(at: path, device: "bench")
        let time = try Self.seconds { try Self.append(drafts, to: store, batch: batch) }
        return Double(drafts.count) / time
    }

    // MARK: Append, replay, rebuild, memory, size

    func appendFigures(batch: Int) throws -> [Figure] {
        let n = sizes.events
        log("append: \(n) events, \(batch) per commit")
        let drafts = workload(count: n, goals: sizes.goals, seed: 42)
        let path = try fresh("append-\(batch)")
        let store = try LedgerStore.create(at: path + "/ledger", device: "bench")
        let ledgerTime = try Self.seconds { try Self.append(drafts, to: store, batch: batch) }
        // Size as appended: live data pages, and the file's extent (which also holds pages freed
        // by earlier transactions, kept for reuse).
        let storage = try store.storageReport()
        let liveBytes = storage.tables.reduce(0) { $0 + $1.bytes }
        let records = try records(of: store)
        let rawPath = try fresh("raw-\(batch)")
        let raw = try Environment(path: rawPath)
        let rawDB = try raw.database(named: "events", create: true)
        let rawTime = try Self.seconds {
            var i = 0
            while i < records.count {
                let end = min(i + batch, records.count)
                try raw.write { txn in
                    for p in i..<end {
                        try txn.put(rawDB, key: UInt64(p + 1).bigEndianKey, value: records[p], options: .append)
                    }
                }
                i = end
            }
        }
        var figures = [
            Figure(
                name: "append (\(batch)/commit)", unit: "events/s", value: Double(n) / ledgerTime, baseline: Double(n) / rawTime,
                baselineName: "raw MDB_APPEND of the same records", note: "higher is better; ratio = ledger/raw",
                target: batch == 10_000 ? .atLeast(300_000, "≥ 300,000 events/s") : nil)
        ]
        guard batch == 10_000 else { return figures }

        // The same appends without ids, as an app's typed calls make them: the library's ids
        // follow the store's clock, so the id index grows at one end.
        log("append: \(n) events, \(batch) per commit, ids made by the library")
        let unnamed = Self.withoutIDs(drafts)
        let own = try LedgerStore.create(at: try fresh("append-own-ids") + "/ledger", device: "bench")
        let ownTime = try Self.seconds { try Self.append(unnamed, to: own, batch: batch) }
        // The id index is two tables: `ids` and its newest rows, `recentIds`.
        func idIndexBytes(_ tables: [(name: String, bytes: Int)]) -> Int {
            tables.filter { $0.name == "ids" || $0.name == "recentIds" }.reduce(0) { $0 + $1.bytes }
        }
        let ownIDs = idIndexBytes(try own.storageReport().tables)
        let givenIDs = idIndexBytes(storage.tables)
        figures.append(
            Figure(
                name: "append (\(batch)/commit), ids made by the library", unit: "events/s", value: Double(n) / ownTime,
                baseline: Double(n) / rawTime, baselineName: "raw MDB_APPEND of the same records",
                note: String(
                    format: "higher is better; ratio = ledger/raw; id index %.1f MiB (%.1f MiB with the workload's random ids)",
                    Double(ownIDs) / 1_048_576, Double(givenIDs) / 1_048_576)))
        try? FileManager.default.removeItem(atPath: directory + "/append-own-ids")

        // Replay and rebuild of the same store against a raw cursor scan of its events table.
        log("replay and rebuild: \(n) events")
        let scanTime = try Self.rawScan(store, "events")
        var digest = ""
        let replayTime = try Self.seconds { digest = try store.reading { try $0.replay() }.digest }
        let rebuildTime = try Self.seconds { try store.rebuild() }
        figures.append(
            Figure(
                name: "replay", unit: "events/s", value: Double(n) / replayTime, baseline: Double(n) / scanTime,
                baselineName: "raw cursor scan of the events table", note: "higher is better; in process; digest \(digest.prefix(12))"))
        figures.append(
            Figure(
                name: "rebuild", unit: "events/s", value: Double(n) / rebuildTime, baseline: Double(n) / scanTime,
                baselineName: "raw cursor scan of the events table", note: "higher is better; in process",
                target: .atLeast(3_000_000, "≥ 3 M events/s")))

        figures += try readFigures(store, drafts: drafts)
        figures += try reminderFigures(store, path: path)

        // Peak resident memory of a replay in a child process, beside a raw scan in another.
        if let executable {
            // Each in a process of its own, timed through `measure` (see `measure(_:_:)`).
            let ledgerPeak = try measure(executable, ["--child-replay", store.path]).peakMiB
            let rawPeak = try measure(executable, ["--child-scan", store.path]).peakMiB
            figures.append(
                Figure(
                    name: "replay peak memory", unit: "MiB", value: ledgerPeak, baseline: rawPeak,
                    baselineName: "raw scan process", note: "lower is better; the library's replay in a process of its own",
                    target: .atMost(256, "≤ 256 MiB")))
        }
        let encoded = records.reduce(0) { $0 + $1.count }
        let perTable = storage.tables.filter { $0.bytes > 0 }.map { "\($0.name) \($0.bytes / 1_048_576)" }.joined(separator: ", ")
        figures.append(
            Figure(
                name: "store size (live pages)", unit: "MiB", value: Double(liveBytes) / 1_048_576, baseline: Double(encoded) / 1_048_576,
                baselineName: "encoded event bytes", note: "lower is better; MiB by table: \(perTable)",
                target: .ratio(2.0, higher: false, "≤ 2.0× the encoded events")))
        // The same events as the JSON lines `ledger append` reads, a line feed each.
        let lines = try drafts.reduce(0) { $0 + (try jsonLine($1)).utf8.count + 1 }
        figures.append(
            Figure(
                name: "store size (file)", unit: "MiB", value: Double(storage.fileBytes) / 1_048_576, baseline: Double(lines) / 1_048_576,
                baselineName: "the events as JSON lines", note: "lower is better; the data file's extent, including free pages LMDB reuses",
                target: .ratio(2.5, higher: false, "≤ 2.5× the JSON lines")))
        figures.append(
            Figure(
                name: "raw table size", unit: "MiB", value: Double(raw.usedBytes) / 1_048_576, baseline: Double(encoded) / 1_048_576,
                baselineName: "encoded event bytes", note: "LMDB's own overhead on the same records"))
        return figures
    }

    /// What a screen reads, in this process, on the large store: the list of goals with their
    /// views (no entries), and one goal with its entries and view; beside a raw cursor scan of
    /// the goal headers (the least the list can read).
    func readFigures(_ store: LedgerStore, drafts: [EventDraft]) throws -> [Figure] {
        log("reads: goals and one goal")
        let now = Instant(milliseconds: Self.now.milliseconds + Int64(sizes.events) * 1_000 + 86_400_000)
        let table = try store.activeTableName("goals")
        let raw = try Self.median(5) { try Self.rawScan(store, table) }
        var shown = 0
        let list = try Self.median(5) {
            try Self.seconds { shown = try store.reading { try $0.goals(now: now, includingEntries: false) }.count }
        }
        var digest = ""
        let status = try Self.median(5) { try Self.seconds { digest = try store.reading { try $0.status() }.digest } }
        let goal = drafts[0].payload.goal!
        var entries = 0
        let one = try Self.median(5) {
            try Self.seconds { entries = try store.reading { try $0.goal(goal, now: now) }?.goal.entries.count ?? 0 }
        }
        return [
            Figure(
                name: "goals, in process (\(shown) goals, no entries)", unit: "s", value: list, baseline: raw,
                baselineName: "raw cursor scan of the goal headers", note: "lower is better; median of 5",
                target: .atMost(0.005, "≤ 5 ms")),
            Figure(
                name: "one goal with its view, in process (\(entries) entries)", unit: "s", value: one, baseline: raw,
                baselineName: "raw cursor scan of the goal headers", note: "lower is better; median of 5",
                target: .atMost(0.005, "≤ 5 ms")),
            Figure(
                name: "status, in process", unit: "s", value: status, baseline: raw,
                baselineName: "raw cursor scan of the goal headers",
                note: "lower is better; counts, heads, enrolled devices and the digest (\(digest.prefix(12))); median of 5",
                target: .atMost(0.005, "≤ 5 ms")),
        ]
    }

    /// `pending` and a reconciliation pass after one change on the large store, once its
    /// device has reported settings and an authorization (every goal has a daily, weekly or
    /// monthly reminder, so the table is larger than the capacity and each pass ranks it).
    func reminderFigures(_ store: LedgerStore, path: String) throws -> [Figure] {
        log("pending and reconcile: \(sizes.events) events")
        try store.writing {
            try $0.append(
                [
                    EventDraft(payload: .deviceConfigured(DeviceConfigured(timeZone: "Europe/Berlin", firstWeekday: 2))),
                    EventDraft(payload: .notificationAuthorization(NotificationAuthorization(status: .authorized))),
                ], now: Self.now)
        }
        let scan = try Self.rawScan(store, "p0.pending") + Self.rawScan(store, "p1.pending")
        var plan: ReminderPlan?
        var times: [Double] = []
        for _ in 0..<5 {
            times.append(try Self.seconds { plan = try store.reading { try $0.pendingPlan(device: "bench", now: Self.now) }.1 })
        }
        let pending = times.sorted()[2]
        let reconciler = FileCenterReconciler(store: store, centerPath: path + "/center.json")
        _ = try reconciler.reconcile(now: Self.now)
        var passes: [Double] = []
        var report: ReconcileReport?
        guard let goal = plan?.requests.first?.goal else { throw LedgerError(.internal, "the benchmark's plan is empty") }
        for round in 0..<5 {
            try store.writing {
                try $0.append([EventDraft(payload: .goalEdited(GoalEdited(goal: goal, title: "Renamed \(round)")))], now: Self.now)
            }
            passes.append(try Self.seconds { report = try reconciler.reconcile(now: Self.now) })
        }
        return [
            Figure(
                name: "pending (\(sizes.events) events)", unit: "s", value: pending, baseline: scan,
                baselineName: "raw scan of the pending tables",
                note: "lower is better; in process; \(plan?.requests.count ?? 0) requests, median of 5", target: .atMost(0.005, "≤ 5 ms")),
            Figure(
                name: "reconcile after a change (\(sizes.events) events)", unit: "s", value: passes.sorted()[2], baseline: scan,
                baselineName: "raw scan of the pending tables",
                note:
                    "lower is better; \(report?.full == true ? "whole table (over capacity)" : "incremental"), file center, median of 5",
                target: .atMost(0.05, "≤ 50 ms")),
        ]
    }

    // MARK: Sync

    /// What signing costs: the same appends and the same sync on a ledger whose devices sign
    /// (a hash chain per origin, one Ed25519 signature per batch, verified on import) and on one
    /// founded before signing (no chain), in the same run.
    public func signatureFigures() throws -> [Figure] {
        let n = sizes.syncEvents
        log("signatures: \(n) events, signed and unsigned")
        let drafts = workload(count: n, goals: min(sizes.goals, n / 10 + 1), seed: 11)
        func appendAll(_ store: LedgerStore) throws { try Self.append(drafts, to: store, batch: 10_000) }
        var figures: [Figure] = []
        // Index 0 signed, 1 unsigned: the best of two rounds, the second in the other order, so
        // that neither case always runs first (on a colder machine) or second.
        var appendTimes: [Double] = [.infinity, .infinity]
        var syncTimes: [Double] = [.infinity, .infinity]
        var singleTimes: [Double] = [.infinity, .infinity]
        for round in 0..<2 {
            for signed in round == 0 ? [true, false] : [false, true] {
                let name = signed ? "signed" : "unsigned"
                let k = signed ? 0 : 1
                let a = try LedgerStore.create(at: try fresh("sig-\(name)-a") + "/s", device: "phone", signed: signed)
                appendTimes[k] = min(appendTimes[k], try Self.seconds { try appendAll(a) })
                // A new store receives the phone's whole history: every chain and signature checked.
                let d = try LedgerStore.create(
                    at: try fresh("sig-\(name)-d") + "/s", device: "laptop", ledger: a.ledgerID, signed: signed)
                let history = try a.reading { try $0.events(missingFrom: [:]) }
                syncTimes[k] = min(syncTimes[k], try Self.seconds { _ = try d.writing { try $0.importEvents(history, from: "bench") } })
                let one = [EventDraft(payload: drafts[drafts.count - 1].payload)]
                let rounds = 200
                singleTimes[k] = min(
                    singleTimes[k],
                    try Self.seconds { for _ in 0..<rounds { try a.writing { try $0.append(one, now: Self.now) } } } / Double(rounds))
            }
        }
        figures.append(
            Figure(
                name: "append with signatures (10000/commit)", unit: "events/s", value: Double(n) / appendTimes[0],
                baseline: Double(n) / appendTimes[1], baselineName: "the same appends, unsigned",
                note: "higher is better; ratio = signed/unsigned; best of two rounds in alternating order",
                target: .ratio(0.9, higher: true, "≥ 0.9× unsigned")))
        figures.append(
            Figure(
                name: "import with signature checks (\(n) events)", unit: "events/s", value: Double(n) / syncTimes[0],
                baseline: Double(n) / syncTimes[1], baselineName: "the same import, unsigned",
                note: "higher is better; ratio = signed/unsigned; best of two rounds in alternating order",
                target: .ratio(0.9, higher: true, "≥ 0.9× unsigned")))
        figures.append(
            Figure(
                name: "one-event append, signed", unit: "ms", value: singleTimes[0] * 1000, baseline: singleTimes[1] * 1000,
                baselineName: "the same, unsigned", note: "lower is better; in one process, commit included"))
        return figures
    }

    func syncFigures() throws -> [Figure] {
        let n = sizes.syncEvents
        log("sync: \(n) events")
        let a = try LedgerStore.create(at: try fresh("sync-a") + "/s", device: "phone")
        let drafts = workload(count: n, goals: min(sizes.goals, n / 10 + 1), seed: 7)
        try Self.append(drafts, to: a, batch: 10_000)
        let b = try LedgerStore.create(at: try fresh("sync-b") + "/s", device: "tablet", ledger: a.ledgerID)
        var first: SyncResult?
        let syncTime = try Self.seconds { first = try b.sync(with: a) }
        var second: SyncResult?
        let noopTime = try Self.seconds { second = try b.sync(with: a) }
        let records = try records(of: a)
        let raw = try Environment(path: try fresh("sync-raw"))
        let rawDB = try raw.database(named: "events", create: true)
        let rawTime = try Self.seconds {
            try raw.write { txn in
                for (p, r) in records.enumerated() { try txn.put(rawDB, key: UInt64(p + 1).bigEndianKey, value: r, options: .append) }
            }
        }
        return [
            Figure(
                name: "sync (\(n) events)", unit: "s", value: syncTime, baseline: rawTime,
                baselineName: "raw copy of the records in one transaction",
                note:
                    "lower is better; moved \(first!.pulled.imported), then \(second!.pulled.imported + second!.pushed.imported) on a second sync"
            ),
            Figure(
                name: "sync, nothing missing", unit: "s", value: noopTime, baseline: nil, baselineName: nil,
                note: "a second sync moves no events"),
        ]
    }

    // MARK: Migrate

    /// A schema-1 store of `events` events (goals, then history writes of up to five entries,
    /// each on the previous write of its goal), migrated to schema 2.
    public func migrateFigures() throws -> [Figure] {
        let n = sizes.events
        log("migrate: \(n) schema-1 events")
        let store = try LedgerStore.create(at: try fresh("migrate") + "/s", device: "phone", schema: 1)
        var rng = SplitMix(seed: 11)
        let goals = (0..<min(sizes.goals, max(1, n / 10))).map { _ in rng.uuid() }
        var drafts = goals.map {
            EventDraft(payload: .goalCreated(GoalCreated(goal: $0, title: "Read", cadence: .daily, progressKind: .measurable, target: try! Amount("20"))))
        }
        var last: [UUID: UUID] = [:]
        var histories: [UUID: [HistoryEntry]] = [:]
        var t = Self.now.milliseconds
        func flush() throws {
            try store.writing { try $0.append(drafts, now: Self.now) }
            drafts.removeAll(keepingCapacity: true)
        }
        for i in goals.count..<n {
            let g = goals[Int(rng.next() % UInt64(goals.count))]
            t += 1000
            var entries = histories[g] ?? []
            entries.append(HistoryEntry(id: rng.uuid(), amount: try! Amount(whole: Int64(i % 5)), occurredAt: Instant(milliseconds: t)))
            if entries.count > 5 { entries.removeFirst() }
            histories[g] = entries
            let id = rng.uuid()
            drafts.append(
                EventDraft(
                    id: id, at: Instant(milliseconds: t),
                    payload: .progressHistoryReplaced(
                        ProgressHistoryReplaced(goal: g, entries: entries, base: last[g]))))
            last[g] = id
            if drafts.count == 10_000 { try flush() }
        }
        try flush()
        var report: MigrationReport?
        let migrateTime = try Self.seconds { report = try store.migrate() }
        let scanTime = try Self.rawScan(store, "events")
        return [
            Figure(
                name: "migrate (\(n) events)", unit: "s", value: migrateTime, baseline: scanTime,
                baselineName: "raw cursor scan of the events table",
                note: "lower is better; schema \(report?.schema ?? 0), rebuilt \(report?.rebuilt ?? false)")
        ]
    }

    // MARK: Reconcile

    func reconcileFigures() throws -> [Figure] {
        try ReconcileBenchmark(benchmark: self).figures()
    }
}

extension UInt64 {
    public var bigEndianKey: [UInt8] { withUnsafeBytes(of: self.bigEndian) { Array($0) } }
}

/// SplitMix64: repeatable workloads.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func uuid() -> UUID {
        let a = next()
        let b = next()
        return withUnsafeBytes(of: (a, b)) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }
}

/// Reconcile at two ledger sizes: a full pass, and an incremental pass after one change. Most
/// goals have no reminder (as in life); 50 do, so the table fits the device's capacity and a
/// pass reads only the changed rows and the center.
struct ReconcileBenchmark {
    var benchmark: Benchmark

    func figures() throws -> [Figure] {
        var out: [Figure] = []
        var smallIncremental: Double?
        for goals in [benchmark.sizes.reconcileGoalsSmall, benchmark.sizes.reconcileGoalsLarge] {
            benchmark.log("reconcile: \(goals) goals")
            let path = try benchmark.fresh("reconcile-\(goals)")
            let store = try LedgerStore.create(at: path + "/s", device: "phone")
            try store.writing {
                try $0.append(
                    [
                        EventDraft(payload: .deviceConfigured(DeviceConfigured(timeZone: "Europe/Berlin", firstWeekday: 2))),
                        EventDraft(payload: .notificationAuthorization(NotificationAuthorization(status: .authorized))),
                    ], now: Benchmark.now)
            }
            var rng = SplitMix(seed: UInt64(goals))
            let ids = (0..<goals).map { _ in rng.uuid() }
            var i = 0
            while i < goals {
                let drafts = ids[i..<min(i + 10_000, goals)].enumerated().map { offset, id in
                    EventDraft(
                        payload: .goalCreated(
                            GoalCreated(
                                goal: id, title: "Goal \(i + offset)", cadence: .daily,
                                reminder: i + offset < 50 ? Benchmark.reminders[(i + offset) % 60] : nil)))
                }
                try store.writing { try $0.append(drafts, now: Benchmark.now) }
                i += 10_000
            }
            let reconciler = FileCenterReconciler(store: store)
            var first: ReconcileReport?
            let fullTime = try Benchmark.seconds { first = try reconciler.reconcile(now: Benchmark.now, full: true) }
            // A raw scan of the pending rows the full pass reads.
            let scanTime = try Benchmark.rawScan(store, "p0.pending")
            var times: [Double] = []
            for round in 0..<5 {
                try store.writing {
                    try $0.append(
                        [EventDraft(payload: .goalEdited(GoalEdited(goal: ids[round], title: "Renamed \(round)")))], now: Benchmark.now)
                }
                var r: ReconcileReport?
                times.append(try Benchmark.seconds { r = try reconciler.reconcile(now: Benchmark.now) })
                precondition(r?.full == false && r?.scheduled.count == 1, "an incremental pass after one change")
            }
            let incremental = times.sorted()[times.count / 2]
            out.append(
                Figure(
                    name: "reconcile full (\(goals) goals)", unit: "s", value: fullTime, baseline: scanTime,
                    baselineName: "raw scan of the pending rows", note: "lower is better; scheduled \(first?.scheduled.count ?? 0)"))
            out.append(
                Figure(
                    name: "reconcile incremental (\(goals) goals)", unit: "s", value: incremental, baseline: smallIncremental,
                    baselineName: smallIncremental == nil ? nil : "incremental at \(benchmark.sizes.reconcileGoalsSmall) goals",
                    note: smallIncremental == nil
                        ? "median of 5 passes after one change" : "the cost of a change does not grow with the ledger",
                    target: smallIncremental == nil ? nil : .ratio(1.5, higher: false, "ratio ≤ 1.5")))
            smallIncremental = smallIncremental ?? incremental
        }
        return out
    }
}
