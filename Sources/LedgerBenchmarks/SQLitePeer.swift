import Foundation
import GoalLedger

/// The peer an app developer would pick: the same JSON lines stored by a small C program on
/// SQLite (WAL, full sync, `json_valid`, an index by goal, 10,000 rows per commit), and a
/// per-goal projection rebuilt in SQL (`Tools/sqlite-peer/sqlite-peer.c`, compiled here with
/// the system's C compiler against Debian's libsqlite3).
extension Benchmark {
    /// The peer's source, found from this file's place in the repository.
    static let peerSource = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/sqlite-peer/sqlite-peer.c").path

    func peerFigures() throws -> [Figure] {
        let n = sizes.events
        log("SQLite peer: \(n) lines")
        let peer = try fresh("sqlite-peer") + "/sqlite-peer"
        try run("/usr/bin/cc", ["-O2", "-o", peer, Self.peerSource, "-lsqlite3"])
        // The workload as the JSON lines `ledger append` reads.
        let lines = try workload(count: n, goals: sizes.goals, seed: 42).map { d in
            var members: [(String, JSONValue)] = [("id", .string(d.id!.uuidString)), ("type", .string(d.payload.type.name))]
            if let at = d.at { members.append(("at", .string(at.rfc3339))) }
            members += d.payload.jsonMembers
            return try JSONWriter.string(.object(members))
        }
        let file = try fresh("lines") + "/lines.jsonl"
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let output = try run(peer, [try fresh("peer-db") + "/events.db", file, "10000"])
        guard case .object = try JSONParser.parse(Array(output.utf8)), let parsed = try? JSONParser.parse(Array(output.utf8)),
            case .number(let peerAppend)? = parsed["append"], case .number(let peerRebuild)? = parsed["rebuild"]
        else { throw LedgerError(.internal, "the SQLite peer printed \(output)") }
        var figures: [Figure] = []
        // `ledger append --file` of the same lines in one process, when the executable is here.
        if let ledger = ledgerExecutable() {
            let store = try fresh("cli-append") + "/s"
            try run(ledger, ["--store", store, "init", "--device", "bench"])
            let cli = try Self.seconds { try run(ledger, ["--store", store, "--now", Self.now.rfc3339, "append", "--file", file]) }
            figures.append(
                Figure(
                    name: "append --file (\(n) lines, one process)", unit: "events/s", value: Double(n) / cli,
                    baseline: Double(n) / peerAppend, baselineName: "SQLite peer, same lines, 10000/commit",
                    note: "higher is better; ratio = ledger/peer; target ≥ 5"))
            let rebuild = try Self.seconds { try run(ledger, ["--store", store, "rebuild"]) }
            figures.append(
                Figure(
                    name: "rebuild (\(n) events, one process)", unit: "events/s", value: Double(n) / rebuild,
                    baseline: Double(n) / peerRebuild, baselineName: "SQLite peer, projection rebuilt in SQL",
                    note: "higher is better; ratio = ledger/peer; target ≥ 20"))
        }
        return figures
    }

    /// `ledger` beside the benchmark's own executable (or the test bundle), if built.
    func ledgerExecutable() -> String? {
        let candidates = [executable, CommandLine.arguments.first].compactMap { $0 }.map {
            URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("ledger").path
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
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
