import Foundation
import GoalLedger
import HTTPServer
import LedgerHub
import LedgerService
import LedgerSync
import PostgreSQL

/// The hub's figures: push and pull of one ledger's events through a PostgreSQL hub, each beside
/// the same rows moved by PostgreSQL's own binary COPY (or a plain SELECT) in the same run, and
/// the cost of a sync that moves nothing; then the same on a hub that already holds many other
/// ledgers (loaded with binary COPY), which a ledger's sync should not notice.
public struct HubBenchmark {
    public struct Sizes: Sendable {
        public var events = 100_000
        public var otherLedgers = 10_000
        public var otherEvents = 5_000_000
        /// The load through the sync service: devices (each founding 10 ledgers) and seconds.
        public var loadDevices = 200
        public var loadSeconds = 20.0
        /// No-op syncs through the service, and the honest device under attack (300 slow
        /// clients and a forged flood): seconds each.
        public var noOpSeconds = 10.0
        public var attackSeconds = 30.0
        public init() {}
        public static let quick: Sizes = {
            var s = Sizes()
            s.events = 2_000
            s.otherLedgers = 20
            s.otherEvents = 20_000
            s.loadDevices = 20
            s.loadSeconds = 2
            s.noOpSeconds = 2
            s.attackSeconds = 4
            return s
        }()
    }

    public var sizes: Sizes
    /// The socket directory of a server to create databases on (`Tools/hub start`).
    public var socketDirectory: String
    /// Where the stores go.
    public var directory: String
    public var log: (String) -> Void = { _ in }

    public init(sizes: Sizes, socketDirectory: String, directory: String) {
        self.sizes = sizes
        self.socketDirectory = socketDirectory
        self.directory = directory
    }

    func url(_ database: String) -> String { "postgresql:///\(database)?host=\(socketDirectory)&user=postgres" }

    func newHub(_ name: String) throws -> String {
        let admin = try Connection(url("postgres"))
        try admin.execute("DROP DATABASE IF EXISTS \(name)")
        try admin.execute("CREATE DATABASE \(name)")
        try Hub(url: url(name)).initialize()
        return url(name)
    }

    public func run(base: Benchmark) throws -> [Figure] {
        let n = sizes.events
        log("hub: a store of \(n) events")
        let source = try LedgerStore.create(at: try base.fresh("hub-source") + "/s", device: "phone")
        let drafts = base.workload(count: n, goals: min(base.sizes.goals, n / 10 + 1), seed: 11)
        var i = 0
        while i < drafts.count {
            try source.writing { try $0.append(Array(drafts[i..<min(i + 10_000, drafts.count)]), now: Benchmark.now) }
            i += 10_000
        }
        var figures = try measure(source, hub: try newHub("bench_empty"), label: "")
        log("hub: loading \(sizes.otherLedgers) other ledgers, \(sizes.otherEvents) events, with binary COPY")
        let big = try newHub("bench_big")
        let loadTime = try Benchmark.seconds { try load(big, from: source) }
        figures.append(
            Figure(
                name: "hub load (\(sizes.otherEvents) events, \(sizes.otherLedgers) ledgers)", unit: "s", value: loadTime, baseline: nil,
                baselineName: nil, note: "binary COPY into the hub's events table"))
        figures += try measure(source, hub: big, label: " on a loaded hub")
        figures += try loadRun()
        figures += try serviceRuns()
        return figures
    }

    /// CPU seconds this process has used (user and system).
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Through the sync service on 127.0.0.1: syncs that move nothing, one after the other, per
    /// second and per CPU second of this process (the client and the service; PostgreSQL's own
    /// processes are not counted); then an honest device's sync latency while 300 connections
    /// trickle headers in and 4 threads push forged events.
    func serviceRuns() throws -> [Figure] {
        let url = try newHub("bench_attack")
        _ = try Hub(url: url).grantService(role: "bench_service")
        let serviceURL = url.replacingOccurrences(of: "user=postgres", with: "user=bench_service")
        let server = try ServiceAttackLoad.startService(hubURL: serviceURL)
        defer { server.stop() }
        let client = SyncServiceClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        let store = try LedgerStore.create(at: try fresh("service-device") + "/s", device: "phone")
        var drafts: [EventDraft] = []
        for _ in 0..<1_000 { drafts.append(EventDraft(payload: .notificationAuthorization(NotificationAuthorization(status: .authorized)))) }
        _ = try store.writing { try $0.append(drafts, now: Benchmark.now) }
        _ = try client.syncBlocking(store)
        log("hub: no-op syncs through the sync service for \(sizes.noOpSeconds) s")
        let cpu0 = Self.cpuSeconds()
        let t0 = Date()
        var syncs = 0
        while Date().timeIntervalSince(t0) < sizes.noOpSeconds {
            _ = try client.syncBlocking(store)
            syncs += 1
        }
        let elapsed = Date().timeIntervalSince(t0)
        let cpu = Self.cpuSeconds() - cpu0
        log("hub: an honest device under attack for \(sizes.attackSeconds) s")
        let attack = ServiceAttackLoad(slowClients: 300, floodThreads: 4, seconds: sizes.attackSeconds)
        let outcome = attack.run(port: server.port, store: store, client: client, now: Benchmark.now)
        let flood = outcome.floodStatuses.values.reduce(0, +)
        let note =
            "\(outcome.latencies.count) honest syncs, \(outcome.errors.count) failed; \(outcome.slowConnected) slow connections held; "
            + "\(flood) forged pushes (\(Int(Double(flood) / sizes.attackSeconds))/s), statuses \(outcome.floodStatuses.sorted { $0.key < $1.key })"
        return [
            Figure(
                name: "service: no-op syncs (1,000 events held)", unit: "syncs/s", value: Double(syncs) / elapsed, baseline: nil,
                baselineName: nil, note: "one after the other: a pull that moves nothing, no push"),
            Figure(
                name: "service: no-op syncs per CPU second", unit: "syncs/CPU s", value: cpu > 0 ? Double(syncs) / cpu : 0, baseline: nil,
                baselineName: nil, note: "client and service in this process; PostgreSQL's processes not counted"),
            Figure(
                name: "service under attack: honest sync p50", unit: "ms", value: outcome.percentile(0.5), baseline: nil, baselineName: nil,
                note: note),
            Figure(
                name: "service under attack: honest sync p99", unit: "ms", value: outcome.percentile(0.99), baseline: nil, baselineName: nil,
                note: "300 slow clients (16 per address) and 4 threads of forged pushes"),
        ]
    }

    /// The bounded load of the test command (`ServiceLoad`) on a hub of its own, through the
    /// service's own database role (row-level security on), HTTP on 127.0.0.1.
    func loadRun() throws -> [Figure] {
        let url = try newHub("bench_load")
        _ = try Hub(url: url).grantService(role: "bench_service")
        let server = try ServiceLoad.startService(hubURL: url.replacingOccurrences(of: "user=postgres", with: "user=bench_service"))
        defer { server.stop() }
        let load = ServiceLoad(devices: sizes.loadDevices, ledgersPerDevice: 10, seconds: sizes.loadSeconds)
        log("hub: load through the sync service, \(load.devices) devices over \(load.devices * 10) ledgers for \(load.seconds) s")
        let outcome = load.run(base: "http://127.0.0.1:\(server.port)")
        let what = "\(load.devices) devices, \(load.devices * 10) ledgers, \(Int(load.seconds)) s"
        let errors = "\(outcome.errors.count) errors"
        return [
            Figure(
                name: "service load: requests (\(what))", unit: "requests/s", value: outcome.requestsPerSecond, baseline: nil,
                baselineName: nil,
                note: "pushes of 1-4 signed events and pulls; \(outcome.eventsPushed) events pushed; \(errors)"),
            Figure(
                name: "service load: p50 latency", unit: "ms", value: outcome.percentile(0.5), baseline: nil, baselineName: nil,
                note: errors),
            Figure(
                name: "service load: p99 latency", unit: "ms", value: outcome.percentile(0.99), baseline: nil, baselineName: nil,
                note: errors),
        ]
    }

    /// Push (both ways of sending), raw COPY, pull, raw SELECT and a no-op sync on one hub.
    func measure(_ source: LedgerStore, hub url: String, label: String) throws -> [Figure] {
        let n = sizes.events
        let hub = try Hub(url: url)
        let admin = try Connection(url)
        let ledger = Parameter.uuid(source.ledgerID)
        func forget() throws {
            try admin.query("DELETE FROM hub.events WHERE ledger = $1", [ledger])
            try admin.query("DELETE FROM hub.heads WHERE ledger = $1", [ledger])
            try admin.execute("VACUUM ANALYZE hub.events")
        }
        log("hub\(label): push with batched INSERTs")
        let insertTime = try Benchmark.seconds { _ = try hub.sync(source, method: .insert) }
        try forget()
        log("hub\(label): push with COPY")
        var pushed = 0
        let copyTime = try Benchmark.seconds { pushed = try hub.sync(source, method: .copy).pushed.imported }
        // The limit: the same rows, already in memory, COPYed straight into the same table under
        // another ledger id (no store read, no checks).
        var rows: [(String, UInt64, UUID, UInt64, [UInt8])] = []
        try source.reading {
            try $0.visitRecords(missingFrom: [:]) { e, bytes in rows.append((e.origin, e.sequence, e.id, e.hlc.rawValue, Array(bytes))) }
        }
        let rawLedger = UUID()
        log("hub\(label): raw binary COPY of the same rows")
        let rawTime = try Benchmark.seconds {
            try admin.copyIn("COPY hub.events (ledger, origin, sequence, event_id, hlc, record) FROM STDIN (FORMAT binary)") { w in
                for r in rows {
                    try w.row(fields: 6)
                    w.uuid(rawLedger)
                    w.text(r.0)
                    w.int64(Int64(r.1))
                    w.uuid(r.2)
                    w.int64(Int64(bitPattern: r.3))
                    w.bytes(r.4)
                }
            }
        }
        try admin.query("DELETE FROM hub.events WHERE ledger = $1", [.uuid(rawLedger)])
        try admin.query("DELETE FROM hub.heads WHERE ledger = $1", [.uuid(rawLedger)])
        log("hub\(label): pull into a new store")
        let puller = try LedgerStore.create(at: try fresh("hub-pull") + "/s", device: "laptop", ledger: source.ledgerID)
        var pulled = 0
        let pullTime = try Benchmark.seconds { pulled = try Hub(url: url).sync(puller).pulled.imported }
        let selectTime = try Benchmark.seconds {
            let r = try admin.query("SELECT origin, sequence, event_id, hlc, record FROM hub.events WHERE ledger = $1", [ledger])
            precondition(r.rowCount == n)
        }
        // A sync that moves nothing, connection included: the median of 21.
        var noop: [Double] = []
        var moved = 0
        for _ in 0..<21 {
            noop.append(
                try Benchmark.seconds {
                    let r = try Hub(url: url).sync(puller)
                    moved += r.pulled.imported + r.pushed.imported
                })
        }
        noop.sort()

        // The same through the sync service, in this process on 127.0.0.1: signed requests, the
        // service's checks, HTTP.
        try forget()
        let service = SyncService(SyncService.Options(hubURL: url))
        var httpOptions = HTTPServer.Options()
        httpOptions.threads = 0
        httpOptions.maxBodyBytes = 1 << 30
        let server = try HTTPServer(options: httpOptions) { service.handle($0) }
        defer { server.stop() }
        let client = SyncServiceClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        log("hub\(label): push through the sync service")
        var servicePushed = 0
        let servicePushTime = try Benchmark.seconds { servicePushed = try client.syncBlocking(source).pushed.imported }
        log("hub\(label): pull through the sync service into a new store")
        let servicePuller = try LedgerStore.create(at: try fresh("hub-service-pull") + "/s", device: "tablet", ledger: source.ledgerID)
        var servicePulled = 0
        let servicePullTime = try Benchmark.seconds {
            servicePulled = try client.pullBlocking(into: servicePuller, signedBy: source).imported
        }
        var serviceNoop: [Double] = []
        for _ in 0..<21 { serviceNoop.append(try Benchmark.seconds { _ = try client.syncBlocking(source) }) }
        serviceNoop.sort()
        return [
            Figure(
                name: "service push (\(n) events)\(label)", unit: "events/s", value: Double(servicePushed) / servicePushTime,
                baseline: Double(pushed) / copyTime, baselineName: "the push straight to the hub with libpq (COPY)",
                note: "higher is better; signed request, the service's checks, HTTP on 127.0.0.1"),
            Figure(
                name: "service pull (\(n) events)\(label)", unit: "events/s", value: Double(servicePulled) / servicePullTime,
                baseline: Double(pulled) / pullTime, baselineName: "the pull straight from the hub with libpq",
                note: "higher is better", target: .atLeast(200_000, "≥ 200,000 events/s")),
            Figure(
                name: "service sync, nothing missing\(label)", unit: "ms", value: serviceNoop[serviceNoop.count / 2] * 1000, baseline: nil,
                baselineName: nil, note: "median of 21: a signed pull and nothing to push"),
            Figure(
                name: "hub push (\(n) events)\(label)", unit: "events/s", value: Double(pushed) / copyTime, baseline: Double(n) / rawTime,
                baselineName: "raw binary COPY of the same rows into the same table",
                note: "higher is better; ratio = push / raw COPY", target: .ratio(0.5, higher: true, "ratio ≥ 0.5")),
            Figure(
                name: "hub push, batched INSERT\(label)", unit: "events/s", value: Double(n) / insertTime, baseline: Double(n) / copyTime,
                baselineName: "the push with COPY", note: "why COPY is the push's default: ratio < 1"),
            Figure(
                name: "hub pull (\(n) events)\(label)", unit: "events/s", value: Double(pulled) / pullTime,
                baseline: Double(n) / selectTime,
                baselineName: "a binary SELECT of the same rows", note: "higher is better", target: .atLeast(300_000, "≥ 300,000 events/s")),
            Figure(
                name: "hub sync, nothing missing\(label)", unit: "ms", value: noop[noop.count / 2] * 1000, baseline: nil, baselineName: nil,
                note: "median of 21, connecting included; moved \(moved)", target: .atMost(20, "≤ 20 ms")),
        ]
    }

    func fresh(_ name: String) throws -> String {
        let path = directory + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Other people's ledgers: `otherEvents` rows spread over `otherLedgers` ledgers of two
    /// devices each, made from the source's records with their id and clock rewritten (the hub
    /// checks those against the columns; their checksums are never read here).
    func load(_ url: String, from source: LedgerStore) throws {
        var templates: [[UInt8]] = []
        try source.reading {
            try $0.visitRecords(missingFrom: [:]) { _, bytes in
                if templates.count < 64 { templates.append(Array(bytes)) }
            }
        }
        let admin = try Connection(url)
        let perLedger = max(1, sizes.otherEvents / sizes.otherLedgers)
        var rng = SplitMix(seed: 99)
        var ledger = 0
        // In pieces, so each COPY stays one reasonable transaction.
        while ledger < sizes.otherLedgers {
            let last = min(sizes.otherLedgers, ledger + max(1, 500_000 / perLedger))
            try admin.copyIn("COPY hub.events (ledger, origin, sequence, event_id, hlc, record) FROM STDIN (FORMAT binary)") { w in
                for _ in ledger..<last {
                    let id = rng.uuid()
                    for k in 0..<perLedger {
                        let origin = k % 2 == 0 ? "phone" : "laptop"
                        let sequence = Int64(k / 2 + 1)
                        let event = rng.uuid()
                        let hlc = Int64(1 << 40) + Int64(k)
                        var record = templates[k % templates.count]
                        withUnsafeBytes(of: event.uuid) { for (j, b) in $0.enumerated() { record[5 + j] = b } }
                        withUnsafeBytes(of: hlc.bigEndian) { for (j, b) in $0.enumerated() { record[21 + j] = b } }
                        try w.row(fields: 6)
                        w.uuid(id)
                        w.text(origin)
                        w.int64(sequence)
                        w.uuid(event)
                        w.int64(hlc)
                        w.bytes(record)
                    }
                }
            }
            ledger = last
        }
        try admin.execute("VACUUM ANALYZE hub.events")
        try admin.execute("VACUUM ANALYZE hub.heads")
    }
}
