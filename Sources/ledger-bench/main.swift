import Foundation
import GoalLedger
import LMDB
import LedgerBenchmarks

// ledger-bench [--quick] [--json] [--events N] [--goals N] [--sync-events N] [--lines N] [--dir DIR]
//   [--hub-dir SOCKET_DIR [--hub-events N] [--hub-ledgers N] [--hub-other-events N]]
// With --hub-dir (a server `Tools/hub start` runs; `Tools/bench` passes it), the hub's figures too.
// Child modes (used for peak memory and whole-process times): --child-replay STORE,
// --child-scan STORE, --child-put STORE (one record put and committed: the raw cost of a
// process that appends one event), --child-rebuild-limit STORE OUT KEYS (the storage work of a
// rebuild alone, into a new environment at OUT: `Benchmark.rebuildLimit`).
setlocale(LC_ALL, "C")
let args = Array(CommandLine.arguments.dropFirst())

// Every option is known, and each that takes a value has one (a number where one is meant): a
// mistyped option stops here rather than starting a run of minutes without it.
let flags: Set = ["--quick", "--json", "--keep", "--library-ids", "--only-migrate", "--only-signatures", "--only-hub"]
let numbers: Set = [
    "--events", "--goals", "--sync-events", "--reconcile-goals", "--lines", "--only-append", "--only-lines", "--hub-events",
    "--hub-ledgers", "--hub-other-events",
]
let paths: Set = ["--dir", "--hub-dir", "--child-replay", "--child-scan", "--child-put", "--only-size"]
func usage(_ problem: String) -> Never {
    FileHandle.standardError.write(
        Data(
            """
            ledger-bench: \(problem)
            usage: ledger-bench [--quick] [--json] [--events N] [--goals N] [--sync-events N] [--reconcile-goals N] [--lines N]
                   [--dir DIR] [--hub-dir SOCKET_DIR [--hub-events N] [--hub-ledgers N] [--hub-other-events N]]
                   ledger-bench --only-append BATCH [--events N] [--dir DIR] [--keep] [--library-ids]
                   ledger-bench --only-lines N --dir DIR | --only-size STORE | --only-read STORE goals|pending|status
                   ledger-bench --only-migrate | --only-signatures | --only-hub --hub-dir SOCKET_DIR

            """.utf8))
    exit(2)
}
var index = 0
while index < args.count {
    let a = args[index]
    if flags.contains(a) {
        index += 1
    } else if numbers.contains(a) || paths.contains(a) {
        guard index + 1 < args.count else { usage("\(a) needs a value") }
        if numbers.contains(a), Int(args[index + 1]).map({ $0 > 0 }) != true { usage("\(a) needs a positive whole number, not \(args[index + 1])") }
        index += 2
    } else if a == "--child-rebuild-limit" {
        guard index + 3 < args.count, Int(args[index + 3]).map({ $0 > 0 }) == true else {
            usage("--child-rebuild-limit needs a store, a directory and a positive number of keys")
        }
        index += 4
    } else if a == "--only-read" {
        guard index + 2 < args.count, ["goals", "pending", "status"].contains(args[index + 2]) else {
            usage("--only-read needs a store and one of goals, pending, status")
        }
        index += 3
    } else {
        usage("unknown option \(a)")
    }
}
@MainActor func value(_ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

// A failure (a store that is not there, a full disk) ends the run with its message and exit 1,
// not a trap.
do {
    if let store = value("--child-replay") {
        let s = try LedgerStore.open(at: store)
        _ = try s.reading { try $0.replay() }.digest
        exit(0)
    }
    if let store = value("--child-scan") {
        let env = try Environment(path: store)
        let db = try env.existingDatabase(named: "events")
        var total = 0
        try env.read { txn in
            try txn.scan(db) { _, v in
                total &+= v.count
                return true
            }
        }
        exit(total >= 0 ? 0 : 1)
    }
    if let i = args.firstIndex(of: "--child-rebuild-limit") {
        _ = try Benchmark.rebuildLimit(store: args[i + 1], into: args[i + 2], keys: Int(args[i + 3])!)
        exit(0)
    }
    if let store = value("--child-put") {
        let env = try Environment(path: store)
        let db = try env.database(named: "raw-put", create: true)
        try env.write { txn in
            var last: UInt64 = 0
            try txn.scan(db) { key, _ in
                last = key.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
                return true
            }
            try txn.put(db, key: (last + 1).bigEndianKey, value: [UInt8](repeating: 7, count: 160), options: .append)
        }
        exit(0)
    }

    var sizes = args.contains("--quick") ? BenchmarkSizes.quick : BenchmarkSizes()
    if let v = value("--events").flatMap(Int.init) { sizes.events = v }
    if let v = value("--goals").flatMap(Int.init) { sizes.goals = v }
    if let v = value("--sync-events").flatMap(Int.init) { sizes.syncEvents = v }
    if let v = value("--reconcile-goals").flatMap(Int.init) { sizes.reconcileGoalsLarge = v }
    if let v = value("--lines").flatMap(Int.init) { sizes.lines = v }
    let dir = value("--dir") ?? FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-\(getpid())").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }

    var bench = Benchmark(sizes: sizes, directory: dir, executable: CommandLine.arguments[0])
    bench.log = { FileHandle.standardError.write(Data(("… " + $0 + "\n").utf8)) }
    // `--only-append BATCH`: the library append alone, into a new store under `--dir` (for profiling;
    // `--keep` keeps the store, at DIR/only-append; `--library-ids`: drafts without ids, the library
    // makes them).
    if let batch = value("--only-append").flatMap(Int.init) {
        let rate = try bench.appendOnly(at: dir + "/only-append", batch: batch, libraryIDs: args.contains("--library-ids"))
        print(String(format: "append (%d/commit): %.0f events/s", batch, rate))
        if !args.contains("--keep") { try? FileManager.default.removeItem(atPath: dir) }
        exit(0)
    }
    // `--only-lines N`: the command line's input of N lines (the workload as JSON lines) at
    // DIR/lines/lines.jsonl, kept, for timing `ledger append --file` and `rebuild` alone.
    if let count = value("--only-lines").flatMap(Int.init) {
        print(try bench.linesFile(count: count, name: "lines"))
        exit(0)
    }
    // `--only-size STORE`: the store's live pages by table (a walk of its file), in MiB.
    if let store = value("--only-size") {
        let report = try LedgerStore.open(at: store).storageReport()
        for (name, bytes) in report.tables where bytes > 0 {
            print(name.padding(toLength: 16, withPad: " ", startingAt: 0) + String(format: " %8.1f MiB", Double(bytes) / 1_048_576))
        }
        print(String(format: "live %.1f MiB, file %.1f MiB", Double(report.tables.reduce(0) { $0 + $1.bytes }) / 1_048_576, Double(report.fileBytes) / 1_048_576))
        exit(0)
    }
    // `--only-read STORE WHAT`: one in-process read (goals, pending or status) 200 times on an
    // existing store, for profiling; prints the median.
    if let store = value("--only-read"), let i = args.firstIndex(of: "--only-read"), i + 2 < args.count {
        let s = try LedgerStore.open(at: store)
        let now = Instant(rfc3339: "2026-12-01T07:00:00Z")!
        var times: [Double] = []
        for _ in 0..<200 {
            let start = DispatchTime.now().uptimeNanoseconds
            switch args[i + 2] {
            case "goals": _ = try s.read { try $0.goals(now: now, includingEntries: false) }.count
            case "pending": _ = try s.read { try $0.pendingPlan(device: s.device, now: now) }.1.requests.count
            default: _ = try s.read { try $0.status() }.digest
            }
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        print(args[i + 2], "median", times.sorted()[100], "s")
        exit(0)
    }
    // `--only-migrate`, `--only-signatures`: the schema-1 store's writing and migration, or the
    // signed and unsigned appends and imports, alone (for profiling).
    if args.contains("--only-migrate") || args.contains("--only-signatures") {
        let start = Date()
        for f in try args.contains("--only-migrate") ? bench.migrateFigures() : bench.signatureFigures() {
            print(f.name, f.value, f.unit, f.baseline.map { "baseline \($0), ratio \(f.ratio!)" } ?? "", "; whole run", Date().timeIntervalSince(start), "s")
        }
        try? FileManager.default.removeItem(atPath: dir)
        exit(0)
    }
    // `--only-hub`: the hub's figures alone (for profiling the sync paths).
    var figures = args.contains("--only-hub") ? [] : try bench.run()
    if let socket = value("--hub-dir") {
        var hubSizes = args.contains("--quick") ? HubBenchmark.Sizes.quick : HubBenchmark.Sizes()
        if let v = value("--hub-events").flatMap(Int.init) { hubSizes.events = v }
        if let v = value("--hub-ledgers").flatMap(Int.init) { hubSizes.otherLedgers = v }
        if let v = value("--hub-other-events").flatMap(Int.init) { hubSizes.otherEvents = v }
        var hub = HubBenchmark(sizes: hubSizes, socketDirectory: socket, directory: dir)
        hub.log = bench.log
        figures += try hub.run(base: bench)
    }
    // Targets are stated for the full sizes; a smaller run prints them unjudged.
    let judged = sizes.events >= 1_000_000 && sizes.lines >= 200_000 && sizes.goals == 1_000
    if args.contains("--json") {
        print(
            try JSONWriter.string(
                .object([
                    (
                        "sizes",
                        .object([
                            ("events", .number(Double(sizes.events))), ("goals", .number(Double(sizes.goals))),
                            ("syncEvents", .number(Double(sizes.syncEvents))),
                        ])
                    ),
                    ("judged", .bool(judged)), ("figures", .array(figures.map { $0.json(judged: judged) })),
                ])))
    } else {
        func fmt(_ v: Double) -> String { v >= 100 ? String(format: "%.0f", v) : String(format: "%.3g", v) }
        func column(_ s: String, _ width: Int) -> String { s.padding(toLength: width, withPad: " ", startingAt: 0) }
        print(
            column("figure", 50) + column("ledger", 12) + column("raw LMDB", 12) + column("ratio", 8) + column("SQLite peer", 12)
                + column("ratio", 8) + column("target", 44) + "unit / note")
        for f in figures {
            print(
                column(f.name, 50) + column(fmt(f.value), 12) + column(f.baseline.map(fmt) ?? "-", 12)
                    + column(f.ratio.map { String(format: "%.3f", $0) } ?? "-", 8) + column(f.peer.map(fmt) ?? "-", 12)
                    + column(f.peerRatio.map { String(format: "%.3f", $0) } ?? "-", 8) + column(f.targetColumn(judged: judged), 44) + f.unit
                    + (f.note.isEmpty ? "" : "; " + f.note))
        }
        let targets = figures.filter { $0.target != nil }
        let met = targets.filter { $0.verdict(judged: judged) == "met" }.count
        print(judged ? "targets: \(met) of \(targets.count) met" : "targets: \(targets.count), not judged (they are stated for the full sizes)")
    }
} catch {
    FileHandle.standardError.write(Data("ledger-bench: \(error)\n".utf8))
    exit(1)
}
