import Foundation
import GoalLedger
import LMDB
import LedgerBenchmarks

// ledger-bench [--quick] [--json] [--events N] [--goals N] [--sync-events N] [--dir DIR]
//   [--hub-dir SOCKET_DIR [--hub-events N] [--hub-ledgers N] [--hub-other-events N]]
// With --hub-dir (a server `Tools/hub start` runs; `Tools/bench` passes it), the hub's figures too.
// Child modes (used for peak memory): --child-replay STORE, --child-scan STORE.
setlocale(LC_ALL, "C")
let args = Array(CommandLine.arguments.dropFirst())
@MainActor func value(_ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

if let store = value("--child-replay") {
    let s = try LedgerStore.open(at: store)
    _ = try s.replay().digest
    print(Benchmark.peakResidentMiB())
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
    print(Benchmark.peakResidentMiB())
    exit(total >= 0 ? 0 : 1)
}

var sizes = args.contains("--quick") ? BenchmarkSizes.quick : BenchmarkSizes()
if let v = value("--events").flatMap(Int.init) { sizes.events = v }
if let v = value("--goals").flatMap(Int.init) { sizes.goals = v }
if let v = value("--sync-events").flatMap(Int.init) { sizes.syncEvents = v }
if let v = value("--reconcile-goals").flatMap(Int.init) { sizes.reconcileGoalsLarge = v }
let dir = value("--dir") ?? FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-\(getpid())").path
try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: dir) }

var bench = Benchmark(sizes: sizes, directory: dir, executable: CommandLine.arguments[0])
bench.log = { FileHandle.standardError.write(Data(("… " + $0 + "\n").utf8)) }
var figures = try bench.run()
if let socket = value("--hub-dir") {
    var hubSizes = args.contains("--quick") ? HubBenchmark.Sizes.quick : HubBenchmark.Sizes()
    if let v = value("--hub-events").flatMap(Int.init) { hubSizes.events = v }
    if let v = value("--hub-ledgers").flatMap(Int.init) { hubSizes.otherLedgers = v }
    if let v = value("--hub-other-events").flatMap(Int.init) { hubSizes.otherEvents = v }
    var hub = HubBenchmark(sizes: hubSizes, socketDirectory: socket, directory: dir)
    hub.log = bench.log
    figures += try hub.run(base: bench)
}
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
                ("figures", .array(figures.map(\.json))),
            ])))
} else {
    func fmt(_ v: Double) -> String { v >= 100 ? String(format: "%.0f", v) : String(format: "%.3g", v) }
    print(
        "figure".padding(toLength: 28, withPad: " ", startingAt: 0) + "ledger".padding(toLength: 14, withPad: " ", startingAt: 0)
            + "raw LMDB".padding(toLength: 14, withPad: " ", startingAt: 0) + "ratio   unit / note")
    for f in figures {
        let line =
            f.name.padding(toLength: 28, withPad: " ", startingAt: 0)
            + fmt(f.value).padding(toLength: 14, withPad: " ", startingAt: 0)
            + (f.baseline.map(fmt) ?? "-").padding(toLength: 14, withPad: " ", startingAt: 0)
            + (f.ratio.map { String(format: "%.3f", $0) } ?? "-").padding(toLength: 8, withPad: " ", startingAt: 0)
            + f.unit + (f.note.isEmpty ? "" : "; " + f.note)
        print(line)
    }
}
