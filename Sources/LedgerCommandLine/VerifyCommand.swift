import Foundation
import GoalLedger

enum VerifyCommand {
    static let spec = CommandSpec(
        name: "verify", summary: "check the file's pages, checksums, indexes, origin sequences and projections against a fresh replay",
        run: run)

    /// Set in the child process that runs the ledger's walk for a parent `verify`.
    static let childVariable = "LEDGER_VERIFY_CHILD"

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        // 1. The file's pages, read without LMDB: damage LMDB would stop the process on is
        //    named here, page by page, before LMDB maps the file.
        // (A child of a parent `verify` leaves it to the parent, which walked them already.)
        let damage = inv.environment[childVariable] == nil ? try LedgerStore.checkPages(at: inv.storePath) : []
        if let first = damage.first {
            if inv.json {
                try inv.printJSON(
                    .object([
                        ("ok", .bool(false)), ("damaged", .bool(true)),
                        ("problems", .array(damage.map { .string("damaged at \($0)") })),
                    ]))
            } else {
                for d in damage { inv.print("damaged at \(d)") }
            }
            throw LedgerError.storeDamaged(at: inv.storePath, "\(first)\(damage.count > 1 ? " (and \(damage.count - 1) more)" : "")")
        }
        // 2. The ledger's walk, in a child process when this is the executable: a page whose
        //    damage the page walk cannot see may still stop LMDB, and only the child dies.
        if let executable = CommandLineTool.executable, inv.environment[childVariable] == nil {
            return try runChild(executable, &inv)
        }
        try verifyInProcess(&inv)
    }

    /// The prefix of the progress lines a child writes on standard error.
    static let progressPrefix = "ledger-verify-progress "

    static func verifyInProcess(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        if inv.environment[childVariable] != nil {
            // For the parent: where the walk is, should LMDB stop it.
            store.verifyProgress = { check, position in
                FileHandle.standardError.write(Data("\(progressPrefix)\(check.rawValue) \(position)\n".utf8))
            }
        }
        let report = try store.reading { try $0.verify() }
        let problems = report.findings
        if inv.json {
            try inv.printJSON(
                .object([
                    ("ok", .bool(report.isClean)), ("events", .number(Double(report.events))), ("goals", .number(Double(report.goals))),
                    ("problems", .array(problems.map { .string($0.message) })),
                    ("setAside", .array(report.setAside.map(json))),
                ]))
        } else if report.isClean {
            inv.print("ok: \(report.events) events, \(report.goals) goals; pages, indexes, sequences and projections agree with the log")
            for e in report.setAside { inv.print("note: \(e.description); no projection reads it") }
        } else {
            for p in problems { inv.print(p.message) }
            for e in report.setAside { inv.print("note: \(e.description)") }
        }
        if !report.isClean {
            // Damage to the log or its indexes: said as every damaged store is.
            if let first = problems.first(where: { $0.check == .log || $0.check == .indexes || $0.check == .origins }) {
                throw LedgerError.storeDamaged(
                    at: store.path,
                    "\(first.position.map { "position \($0)" } ?? "its \(first.check.rawValue)") (\(first.message)); verify found \(problems.count) problem\(problems.count == 1 ? "" : "s")",
                    position: first.position)
            }
            throw LedgerError(.store, "verify found \(problems.count) problem\(problems.count == 1 ? "" : "s") in \(store.path)")
        }
    }

    /// Runs this command again in a child process of `executable` and reports what it found; a
    /// child stopped by a signal is damage LMDB met.
    static func runChild(_ executable: String, _ inv: inout Invocation) throws(LedgerError) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        var arguments = ["--store", inv.storePath]
        if let now = inv.options["--now"] { arguments += ["--now", now] }
        if inv.json { arguments.append("--json") }
        process.arguments = arguments + [spec.name]
        var environment = inv.environment
        environment[childVariable] = "1"
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        // Told of the child's exit as it happens: `waitUntilExit` polls every 50 ms, which a
        // verify of a small store would spend mostly waiting.
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do {
            try process.run()
        } catch {
            // No child: the walk runs here, guarded by the executable's signal handlers.
            return try verifyInProcess(&inv)
        }
        // Both pipes drained while the child runs, so that neither fills and blocks it.
        nonisolated(unsafe) var errorBytes = Data()
        let read = DispatchSemaphore(value: 0)
        let reader = Thread {
            errorBytes = err.fileHandleForReading.readDataToEndOfFile()
            read.signal()
        }
        reader.start()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        exited.wait()
        read.wait()
        inv.write(String(decoding: output, as: UTF8.self))
        var lines = String(decoding: errorBytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        // Where the walk was last: the check, and the log position it had reached.
        let progress = lines.last { $0.hasPrefix(progressPrefix) }.map { $0.dropFirst(progressPrefix.count).split(separator: " ") }
        lines.removeAll { $0.hasPrefix(progressPrefix) }
        let place: String
        if let p = progress, p.count == 2 {
            place =
                p[0] == "log"
                ? "a page LMDB could not read, in the log after position \(p[1])"
                : "a page LMDB could not read, in the \(p[0]) check (after the log's \(p[1]) events)"
        } else {
            place = "a page LMDB could not read"
        }
        let stoppedByGuard = process.terminationStatus == 5 && lines.last?.contains("damaged at a page LMDB could not read") == true
        if process.terminationReason == .uncaughtSignal || stoppedByGuard {
            // The child died inside LMDB (or its own handlers caught that): the same damage, said once.
            for line in lines where !line.contains("damaged at a page LMDB could not read") { inv.err += line + "\n" }
            throw LedgerError.storeDamaged(at: inv.storePath, place + " (the ledger's walk stopped there)")
        }
        let status = process.terminationStatus
        guard status != 0 else {
            for line in lines { inv.err += line + "\n" }
            return
        }
        // The child's last line is its error; the lines before it are notices.
        let last = lines.popLast() ?? "ledger: verify failed"
        for line in lines { inv.err += line + "\n" }
        let message = last.hasPrefix("ledger: ") ? String(last.dropFirst("ledger: ".count)) : last
        let code: LedgerError.Code =
            switch status {
            case 2: .invalidArgument
            case 3: .invalidInput
            case 4: .versionConflict
            case 5: .store
            default: .internal
            }
        throw LedgerError(code, message)
    }

    /// A set-aside event in the JSON forms of `verify` and `status`.
    static func json(_ e: SetAsideEvent) -> JSONValue {
        .object([
            ("position", .number(Double(e.position))), ("id", .string(e.id.uuidString)), ("origin", .string(e.origin)),
            ("sequence", .number(Double(e.sequence))), ("reason", .string(e.reason)),
        ])
    }
}
