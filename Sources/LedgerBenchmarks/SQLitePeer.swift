import Foundation
import GoalLedger

/// The command line as a user meets it, each command a whole process, beside raw LMDB and the
/// peer an app developer would pick: the same JSON lines stored by a small C program on SQLite
/// (WAL, full sync, `json_valid`, an index by goal, 10,000 rows per commit) with a per-goal
/// projection rebuilt in SQL (`Tools/sqlite-peer/sqlite-peer.c`, compiled here with the
/// system's C compiler against Debian's libsqlite3).
extension Benchmark {
    /// The peer's source, found from this file's place in the repository.
    static let peerSource = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/sqlite-peer/sqlite-peer.c").path

    /// What the peer measured on `sizes.lines` lines.
    struct PeerRun {
        var append: Double
        var rebuild: Double
        var read: Double
        var insertOne: Double
    }

    /// The workload as the JSON lines `ledger append` reads, written to a file.
    public func linesFile(count: Int, name: String) throws -> String {
        let lines = try workload(count: count, goals: sizes.goals, seed: 42).map(jsonLine)
        let file = try fresh(name) + "/lines.jsonl"
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// A draft of the workload as its JSON line (without the line feed).
    func jsonLine(_ d: EventDraft) throws -> String {
        var members: [(String, JSONValue)] = [("id", .string(d.id!.uuidString)), ("type", .string(d.payload.type.name))]
        if let at = d.at { members.append(("at", .string(at.rfc3339))) }
        members += d.payload.jsonMembers
        return try JSONWriter.string(.object(members))
    }

    /// One progress entry for the first goal of the workload, as a JSON line.
    func oneLine() throws -> String {
        let goal = workload(count: 1, goals: sizes.goals, seed: 42)[0].payload.goal!
        return try JSONWriter.string(
            .object([("type", .string("progressRecorded")), ("goal", .string(goal.uuidString)), ("amount", .number(1))]))
    }

    /// The peer, compiled into the benchmark's directory.
    func peerExecutable() throws -> String {
        let peer = try fresh("sqlite-peer") + "/sqlite-peer"
        try run("/usr/bin/cc", ["-O2", "-o", peer, Self.peerSource, "-lsqlite3"])
        return peer
    }

    /// One run of the peer on `file` into a fresh database: its append's and rebuild's seconds,
    /// as it times them, and the database.
    func peerOnce(_ peer: String, lines file: String) throws -> (append: Double, rebuild: Double, db: String) {
        let db = try fresh("peer-db") + "/events.db"
        let output = try run(peer, [db, file, "10000"])
        guard let parsed = try? JSONParser.parse(Array(output.utf8)), case .number(let a)? = parsed["append"],
            case .number(let r)? = parsed["rebuild"]
        else { throw LedgerError(.internal, "the SQLite peer printed \(output)") }
        return (a, r, db)
    }

    /// `ledger append --file` of `sizes.lines` lines and `rebuild` beside the peer; then one
    /// `append` of `sizes.events` lines (its peak memory), and on that store every read
    /// command, each timed as a whole process with its peak memory, beside a raw cursor scan
    /// of the events table in a process of its own; then one event appended by a new process.
    func commandFigures(rawAppend: Double?) throws -> [Figure] {
        guard let ledger = ledgerExecutable() else {
            log("command figures skipped: no `ledger` executable beside the benchmark")
            return []
        }
        log("SQLite peer and the command line: \(sizes.lines) lines")
        let file = try linesFile(count: sizes.lines, name: "lines")
        let peerProgram = try peerExecutable()
        let peerName = "SQLite peer, same lines"
        var figures: [Figure] = []

        // Each side's best of `peerRounds` runs, the two sides taking turns (the peer, then the
        // ledger's append and rebuild), so that a machine whose speed drifts during the run
        // (the peer waits on the disk, the ledger on the processors) weighs on both alike.
        var store = ""
        var db = ""
        var (cli, rebuild, peerAppend, peerRebuild) = (Double.infinity, Double.infinity, Double.infinity, Double.infinity)
        var limit = Double.infinity
        for _ in 0..<Self.peerRounds {
            let p = try peerOnce(peerProgram, lines: file)
            (peerAppend, peerRebuild, db) = (min(peerAppend, p.append), min(peerRebuild, p.rebuild), p.db)
            store = try fresh("cli-append") + "/s"
            try run(ledger, ["--store", store, "init", "--device", "bench"])
            cli = min(cli, try measure(ledger, ["--store", store, "--now", Self.now.rfc3339, "append", "--file", file]).seconds)
            rebuild = min(rebuild, try measure(ledger, ["--store", store, "rebuild"]).seconds)
            limit = min(limit, try rebuildLimitProcess(store))
        }
        let read = try Self.median(5) { try measure(peerProgram, ["--read", db]).seconds }
        let line = try oneLine()
        let insertOne = try Self.median(5) { try measure(peerProgram, ["--insert-one", db, line]).seconds }
        let peer = PeerRun(append: peerAppend, rebuild: peerRebuild, read: read, insertOne: insertOne)
        let n = Double(sizes.lines)
        figures.append(
            Figure(
                name: "append --file (\(sizes.lines) lines, one process)", unit: "events/s", value: n / cli, baseline: rawAppend,
                baselineName: rawAppend == nil ? nil : "raw MDB_APPEND, 10000/commit",
                note: "higher is better", peer: n / peer.append, peerName: peerName + ", 10000/commit",
                target: .peerRatio(2, higher: true, "≥ 2× the peer")))
        let scan = try scanProcess(store)
        figures.append(
            Figure(
                name: "rebuild (\(sizes.lines) events, one process)", unit: "events/s", value: n / rebuild, baseline: n / scan.seconds,
                baselineName: "raw cursor scan, one process", note: "higher is better",
                peer: n / peer.rebuild, peerName: "SQLite peer, projection rebuilt in SQL",
                target: .peerRatio(5, higher: true, "≥ 5× the peer")))
        // What the rebuild's storage work alone costs (`rebuildLimit`): beside the peer, it says
        // how far any rebuild that keeps a row per entry could go.
        figures.append(
            Figure(
                name: "a rebuild's storage (\(sizes.lines) events, one process)", unit: "events/s", value: n / limit,
                baseline: n / scan.seconds, baselineName: "raw cursor scan, one process",
                note: "higher is better; raw LMDB: the log scanned and a \(Self.limitRowSize)-byte row per event written by key as the "
                    + "ledger writes its entries, nothing decoded or folded; the ledger's rebuild takes "
                    + String(format: "%.2f", rebuild / limit) + "× its time",
                peer: n / peer.rebuild, peerName: "SQLite peer, projection rebuilt in SQL"))

        // The large store: one append of every line, then the reads on it.
        log("the command line on \(sizes.events) events")
        let bigFile = try linesFile(count: sizes.events, name: "big-lines")
        let big = try fresh("cli-big") + "/s"
        try run(ledger, ["--store", big, "init", "--device", "bench"])
        let bigAppend = try measure(ledger, ["--store", big, "--now", Self.now.rfc3339, "append", "--file", bigFile])
        let bigScan = try scanProcess(big)
        figures.append(
            Figure(
                name: "append --file (\(sizes.events) lines) peak memory", unit: "MiB", value: bigAppend.peakMiB,
                baseline: bigScan.peakMiB > 0 ? bigScan.peakMiB : nil, baselineName: bigScan.peakMiB > 0 ? "raw scan process" : nil, note: "lower is better; one atomic batch; \(String(format: "%.1f", bigAppend.seconds)) s",
                target: .atMost(512, "≤ 512 MiB")))
        let now = Instant(milliseconds: Self.now.milliseconds + Int64(sizes.events) * 1_000 + 86_400_000).rfc3339
        let goal = workload(count: 1, goals: sizes.goals, seed: 42)[0].payload.goal!.uuidString
        let events = Double(sizes.events)
        for (name, arguments, rate) in [
            ("replay", ["replay"], true), ("verify", ["verify"], true), ("goals", ["goals"], false), ("status", ["status"], false),
            ("pending", ["pending"], false), ("show", ["show", goal], false),
        ] {
            var peak = 0.0
            let seconds = try Self.median(rate ? 1 : 3) {
                let m = try measure(ledger, ["--store", big, "--now", now] + arguments)
                peak = max(peak, m.peakMiB)
                return m.seconds
            }
            let memory = "peak \(String(format: "%.0f", peak)) MiB (raw scan \(String(format: "%.0f", bigScan.peakMiB)) MiB)"
            if rate {
                figures.append(
                    Figure(
                        name: "\(name) (\(sizes.events) events, one process)", unit: "events/s", value: events / seconds,
                        baseline: events / bigScan.seconds, baselineName: "raw cursor scan, one process",
                        note: "higher is better; \(memory)", peer: n / peer.rebuild,
                        peerName: "SQLite peer, projection rebuilt in SQL (\(sizes.lines) lines)", peakMiB: peak,
                        target: name == "replay"
                            ? Target("≥ 3 M events/s, ≤ 256 MiB") { $0.value >= 3_000_000 && ($0.peakMiB ?? .infinity) <= 256 }
                            : Target("≥ 1.5 M events/s, ≤ 256 MiB") { $0.value >= 1_500_000 && ($0.peakMiB ?? .infinity) <= 256 }))
            } else {
                figures.append(
                    Figure(
                        name: "\(name) command (\(sizes.events) events)", unit: "s", value: seconds, baseline: bigScan.seconds,
                        baselineName: "raw cursor scan, one process", note: "lower is better; \(memory)",
                        peer: peer.read, peerName: "SQLite peer reading its goal projection, one process", peakMiB: peak,
                        target: .process(seconds: 0.05, mebibytes: 64, "≤ 50 ms, ≤ 64 MiB")))
            }
        }

        // One event, appended by a process of its own, as an app recording one entry.
        let one = try fresh("one-line") + "/one.jsonl"
        try Data((try oneLine() + "\n").utf8).write(to: URL(fileURLWithPath: one))
        let single = try Self.median(5) { try measure(ledger, ["--store", big, "--now", now, "append", "--file", one]).seconds }
        let rawPut = try executable.map { e in try Self.median(5) { try measure(e, ["--child-put", big]).seconds } }
        figures.append(
            Figure(
                name: "one-event append, new process", unit: "s", value: single, baseline: rawPut,
                baselineName: rawPut == nil ? nil : "raw LMDB put and commit, one process",
                note: "lower is better", peer: peer.insertOne, peerName: "SQLite peer inserting one row, one process",
                target: .peerRatio(1.5, higher: false, "≤ 1.5× the peer")))
        // The same events copied by a new store of the ledger, in chunked transactions (last:
        // the clone enrols its device in the store it copies).
        let copy = try fresh("cli-clone") + "/s"
        let clone = try measure(ledger, ["--store", copy, "--now", Self.now.rfc3339, "clone", big, "--device", "copy"])
        figures.append(
            Figure(
                name: "clone (\(sizes.events) events) peak memory", unit: "MiB", value: clone.peakMiB,
                baseline: bigScan.peakMiB > 0 ? bigScan.peakMiB : nil, baselineName: bigScan.peakMiB > 0 ? "raw scan process" : nil,
                note: "lower is better; copied in write transactions of about 100,000 events; \(String(format: "%.1f", clone.seconds)) s",
                target: .atMost(512, "≤ 512 MiB")))
        return figures
    }

    /// A raw cursor scan of a store's events table in a process of its own: its time and peak
    /// memory. Without the benchmark's executable (in tests), the scan runs in this process and
    /// its memory is not measured (0).
    func scanProcess(_ store: String) throws -> (seconds: Double, peakMiB: Double) {
        if let executable { return try measure(executable, ["--child-scan", store]) }
        let s = try LedgerStore.open(at: store)
        return (try Self.rawScan(s, "events"), 0)
    }

    /// `ledger` beside the benchmark's own executable (or the test bundle), if built.
    func ledgerExecutable() -> String? {
        let candidates = [executable, CommandLine.arguments.first].compactMap { $0 }.map {
            URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("ledger").path
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// How many times the figures judged against the peer (`append --file`, `rebuild`) are
    /// run on each side, the sides taking turns, the best kept.
    static let peerRounds = 3

    /// The median of `count` measurements.
    static func median(_ count: Int, _ body: () throws -> Double) rethrows -> Double {
        var values: [Double] = []
        for _ in 0..<count { values.append(try body()) }
        return values.sorted()[values.count / 2]
    }

    /// The source of `measure`, the small program that times a command and reads its peak
    /// memory (see `Tools/measure/measure.c`).
    static let meterSource = URL(fileURLWithPath: peerSource).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("measure/measure.c").path

    /// `measure`, compiled once per run into the benchmark's directory.
    func meter() throws -> String {
        let path = directory + "/measure"
        if !FileManager.default.isExecutableFile(atPath: path) { try run("/usr/bin/cc", ["-O2", "-o", path, Self.meterSource]) }
        return path
    }

    /// Runs a program to completion with its output discarded, through `measure`: its wall
    /// time, and its peak resident memory as the kernel accounts it for that process alone.
    func measure(_ program: String, _ arguments: [String]) throws -> (seconds: Double, peakMiB: Double) {
        let output = try run(try meter(), [program] + arguments)
        let fields = output.split(separator: " ").map { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard fields.count == 2, let seconds = fields[0], let kib = fields[1] else {
            throw LedgerError(.internal, "measure printed \(output)")
        }
        return (seconds, kib / 1024)
    }

    /// Runs a program to completion; its standard output, or an error with its standard error.
    @discardableResult
    func run(_ program: String, _ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw LedgerError(.internal, "\(program) exited \(p.terminationStatus): \(String(decoding: stderr, as: UTF8.self))")
        }
        return String(decoding: stdout, as: UTF8.self)
    }
}
