import Foundation
import GoalLedger
import HubTestSupport
import LMDB
import Testing

@testable import LedgerBenchmarks

/// A quick run at tiny sizes: every figure is produced, with its baseline. Speed is not checked
/// here; `Tools/bench` measures it.
struct BenchmarkTests {
    @Test func aQuickRunProducesEveryFigure() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let figures = try Benchmark(sizes: .quick, directory: dir, executable: nil).run()
        let names = figures.map(\.name)
        for expected in [
            "append (1000/commit)", "append (10000/commit)", "replay", "rebuild", "store size (live pages)", "store size (file)",
            "sync (1000 events)", "migrate (3000 events)",
            "reconcile full (20 goals)", "reconcile incremental (20 goals)", "reconcile full (200 goals)",
            "reconcile incremental (200 goals)", "pending (3000 events)", "reconcile after a change (3000 events)",
            "append with signatures (10000/commit)", "import with signature checks (1000 events)", "one-event append, signed",
            "append --file (2000 lines, one process)", "rebuild (2000 events, one process)",
            "a rebuild's storage (2000 events, one process)", "append --file (3000 lines) peak memory",
            "replay (3000 events, one process)", "verify (3000 events, one process)", "goals command (3000 events)",
            "status command (3000 events)", "pending command (3000 events)", "show command (3000 events)",
            "one-event append, new process",
        ] {
            #expect(names.contains(expected), "missing \(expected) in \(names)")
        }
        for f in figures where f.baselineName != nil {
            #expect(f.value > 0 && (f.baseline ?? 0) > 0, "\(f.name)")
        }
        // The command line's figures stand beside the SQLite peer's, measured in the same run.
        for f in figures where f.name.contains("one process") || f.name.contains("command (") || f.name.hasPrefix("append --file (2000") || f.name.hasSuffix("new process") {
            #expect((f.peer ?? 0) > 0 && f.peerName != nil, "\(f.name) has no peer figure")
        }
        let sync = try #require(figures.first { $0.name.hasPrefix("sync (") })
        #expect(sync.note.contains("moved 1000, then 0"))
        // Every target of the store's figures is printed beside its figure (judged on a full run).
        let targets = Dictionary(figures.compactMap { f in f.target.map { (f.name, $0.text) } }, uniquingKeysWith: { a, _ in a })
        for (name, text) in [
            ("append (10000/commit)", "≥ 300,000 events/s"), ("rebuild", "≥ 3 M events/s"),
            ("append --file (2000 lines, one process)", "≥ 2× the peer"), ("rebuild (2000 events, one process)", "≥ 5× the peer"),
            ("replay (3000 events, one process)", "≥ 3 M events/s, ≤ 256 MiB"),
            ("verify (3000 events, one process)", "≥ 1.5 M events/s, ≤ 256 MiB"), ("status, in process", "≤ 5 ms"),
            ("status command (3000 events)", "≤ 50 ms, ≤ 64 MiB"), ("goals, in process (50 goals, no entries)", "≤ 5 ms"),
            ("goals command (3000 events)", "≤ 50 ms, ≤ 64 MiB"), ("show command (3000 events)", "≤ 50 ms, ≤ 64 MiB"),
            ("pending (3000 events)", "≤ 5 ms"), ("pending command (3000 events)", "≤ 50 ms, ≤ 64 MiB"),
            ("one-event append, new process", "≤ 1.5× the peer"), ("store size (live pages)", "≤ 2.0× the encoded events"),
            ("append --file (3000 lines) peak memory", "≤ 512 MiB"), ("clone (3000 events) peak memory", "≤ 512 MiB"),
        ] {
            #expect(targets[name] == text, "\(name): \(targets[name] ?? "no target")")
        }
        #expect(figures.allSatisfy { $0.target == nil || $0.verdict(judged: false) == "not judged" })
    }

    /// The rebuild's storage alone writes a row per event of the log, made of its clock reading,
    /// under as many keys as asked.
    @Test func theRebuildsStorageAloneWritesARowPerEventByKey() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-limit-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir + "/limit", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bench = Benchmark(sizes: .quick, directory: dir, executable: nil)
        let store = try LedgerStore.create(at: dir + "/s", device: "bench")
        try Benchmark.append(bench.workload(count: 700, goals: 9, seed: 3), to: store, batch: 250)
        var clocks: [[UInt8]] = []
        try store.scanRawValues(of: "events") { clocks.append(Array($0[21..<29])) }
        #expect(try Benchmark.rebuildLimit(store: dir + "/s", into: dir + "/limit", keys: 5) == 700)

        let out = try Environment(path: dir + "/limit")
        let table = try out.existingDatabase(named: "entries", duplicates: .anySize)
        var rows: [(key: [UInt8], value: [UInt8])] = []
        try out.read { txn in
            try txn.scan(table) { k, v in
                rows.append((Array(k), Array(v)))
                return true
            }
        }
        #expect(rows.count == 700)
        #expect(Set(rows.map(\.key)).count == 5)
        #expect(rows.allSatisfy { $0.key.count == 16 && $0.value.count == Benchmark.limitRowSize })
        // Every record's clock reading is in one row, after the day made of its high half.
        #expect(rows.map { Array($0.value[4..<12]) }.sorted { $0.lexicographicallyPrecedes($1) } == clocks.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(rows.allSatisfy { $0.value[0..<4].elementsEqual($0.value[4..<8]) })
    }

    /// A target is met or missed by the figure's value, its ratios and its process's peak memory.
    @Test func targetsJudgeTheirFigure() {
        var f = Figure(name: "x", unit: "s", value: 0.04, baseline: 0.01, baselineName: "raw", peer: 0.02, peerName: "peer", peakMiB: 60)
        f.target = .process(seconds: 0.05, mebibytes: 64, "")
        #expect(f.verdict(judged: true) == "met")
        f.peakMiB = 65
        #expect(f.verdict(judged: true) == "missed")
        f.target = .peerRatio(1.5, higher: false, "")
        #expect(f.verdict(judged: true) == "missed")  // 0.04 / 0.02 = 2
        f.target = .peerRatio(2, higher: false, "")
        #expect(f.verdict(judged: true) == "met")
        f.target = .ratio(4, higher: true, "")
        #expect(f.verdict(judged: true) == "met")  // 0.04 / 0.01 = 4
        f.target = .atLeast(0.05, "")
        #expect(f.verdict(judged: true) == "missed")
        f.target = .atMost(0.04, "≤ 40 ms")
        #expect(f.verdict(judged: true) == "met")
        #expect(f.targetColumn(judged: true) == "≤ 40 ms: met")
        #expect(f.targetColumn(judged: false) == "≤ 40 ms: not judged")
        f.target = nil
        #expect(f.verdict(judged: true) == nil)
    }

    @Test func aQuickHubRunProducesEveryHubFigure() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-hub-bench-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var sizes = HubBenchmark.Sizes.quick
        sizes.events = 500
        sizes.otherLedgers = 5
        sizes.otherEvents = 2_000
        sizes.loadDevices = 5
        sizes.loadSeconds = 1
        sizes.noOpSeconds = 1
        sizes.attackSeconds = 3
        let base = Benchmark(sizes: .quick, directory: dir, executable: nil)
        let figures = try HubBenchmark(sizes: sizes, socketDirectory: try TestServer.socketDirectory(), directory: dir).run(base: base)
        let names = figures.map(\.name)
        for suffix in ["", " on a loaded hub"] {
            for name in ["hub push (500 events)", "hub push, batched INSERT", "hub pull (500 events)", "hub sync, nothing missing",
                "service push (500 events)", "service pull (500 events)", "service sync, nothing missing",
            ] {
                #expect(names.contains(name + suffix), "missing \(name + suffix) in \(names)")
            }
        }
        for f in figures where f.baselineName != nil {
            #expect(f.value > 0 && (f.baseline ?? 0) > 0, "\(f.name)")
        }
        #expect(figures.first { $0.name == "hub pull (500 events)" }?.target?.text == "≥ 300,000 events/s")
        let noop = try #require(figures.first { $0.name == "hub sync, nothing missing" })
        #expect(noop.note.contains("moved 0"))
        // Through the service: no-op syncs, and the honest device under attack, every sync done.
        for name in ["service: no-op syncs (1,000 events held)", "service: no-op syncs per CPU second"] {
            #expect((figures.first { $0.name == name }?.value ?? 0) > 0, "missing \(name)")
        }
        let attacked = try #require(figures.first { $0.name == "service under attack: honest sync p50" })
        #expect(attacked.value > 0 && attacked.note.contains(" 0 failed"), "\(attacked.note)")
        #expect(figures.contains { $0.name == "service under attack: honest sync p99" })
        // The load run: 5 devices founding 50 ledgers, every request answered.
        let load = try #require(figures.first { $0.name.hasPrefix("service load: requests (5 devices, 50 ledgers") })
        #expect(load.value > 0 && load.note.contains("0 errors"), "\(load.note)")
        for name in ["service load: p50 latency", "service load: p99 latency"] {
            let f = try #require(figures.first { $0.name == name })
            #expect(f.value > 0 && f.note == "0 errors")
        }
    }
}

/// The benchmark's executable refuses what it does not know before it runs anything: an unknown
/// option, a size that is not a positive whole number, an option without its value.
struct BenchmarkArgumentTests {
    /// The built `ledger-bench`, next to the test bundle.
    func executable() -> URL? {
        [
            Bundle.main.bundleURL.appendingPathComponent("ledger-bench"),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ledger-bench"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("ledger-bench"),
        ].first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    @Test(arguments: [
        (["--help"], "unknown option --help"), (["--events", "lots"], "--events needs a positive whole number, not lots"),
        (["--quick", "--goals", "0"], "--goals needs a positive whole number, not 0"), (["--dir"], "--dir needs a value"),
        (["--only-read", "/nowhere", "everything"], "--only-read needs a store and one of goals, pending, status"),
        (["--child-rebuild-limit", "/nowhere", "/elsewhere", "0"], "--child-rebuild-limit needs a store, a directory and a positive number of keys"),
    ])
    func aBadArgumentStopsItBeforeAnythingRuns(_ arguments: [String], _ message: String) throws {
        let bench = try #require(executable(), "ledger-bench is built with the tests")
        let process = Process()
        process.executableURL = bench
        process.arguments = arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 2)
        #expect(said.hasPrefix("ledger-bench: \(message)\nusage: ledger-bench"), "\(said)")
    }
}
