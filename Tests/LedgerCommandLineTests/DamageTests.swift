import Foundation
import GoalLedger
import Testing

/// Damaged stores: copies of a store of two devices, each with one page overwritten (random
/// bytes, zeros or bit flips, at seeded pages in use: both meta pages, branch and leaf pages of
/// the log, its indexes and the projection) and one with its file cut short. The real `ledger`
/// runs every command on each: none may die by a signal, `verify` names the damage (exit 5),
/// and `recover --from PEER` builds a store that verifies and holds every event the peer held.
struct DamageTests {
    static let goal = "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1"

    struct Run {
        var arguments: [String]
        var status: Int32
        var signaled: Bool
        var stdout: String
        var stderr: String
    }

    /// Runs the `ledger` executable; a run longer than 60 s is stopped (and fails the test).
    static func ledger(_ arguments: [String], input: String? = nil) throws -> Run {
        let p = Process()
        p.executableURL = ledgerExecutable()
        p.arguments = ["--now", "2026-11-05T12:00:00Z"] + arguments
        p.environment = ["TZ": "UTC", "LANG": "C", "PATH": "/usr/bin:/bin"]
        let out = Pipe()
        let err = Pipe()
        let inPipe = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = input == nil ? FileHandle.nullDevice : inPipe
        try p.run()
        if let input {
            inPipe.fileHandleForWriting.write(Data(input.utf8))
            try inPipe.fileHandleForWriting.close()
        }
        nonisolated(unsafe) var errors = Data()
        let reader = Thread { errors = err.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let timer = DispatchWorkItem { if p.isRunning { p.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: timer)
        let output = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        timer.cancel()
        while !reader.isFinished { usleep(1000) }
        return Run(
            arguments: arguments, status: p.terminationStatus, signaled: p.terminationReason == .uncaughtSignal,
            stdout: String(decoding: output, as: UTF8.self), stderr: String(decoding: errors, as: UTF8.self))
    }

    static func progress(_ n: Int, amount: Int) -> String {
        (0..<n).map { _ in #"{"type":"progressRecorded","goal":"\#(goal)","amount":\#(amount)}"# }.joined(separator: "\n")
    }

    /// The event ids a store holds.
    static func eventIDs(_ path: String) throws -> Set<UUID> {
        let store = try LedgerStore.open(at: path)
        return Set(try store.reading { try $0.events(missingFrom: [:]) }.map(\.id))
    }

    @Test func damagedCopiesAreDiagnosedNeverCrashAndRecoverFromAPeer() throws {
        try #require(FileManager.default.isExecutableFile(atPath: ledgerExecutable().path), "build the ledger executable first")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-damage-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let phone = root + "/phone"
        let laptop = root + "/laptop"
        let creation =
            #"{"type":"goalCreated","goal":"\#(Self.goal)","title":"Run","cadence":"daily","progress":{"kind":"measurable","target":5,"unit":"km"}}"#

        // Two devices, a few hundred events, synced; then the phone writes on alone.
        #expect(try Self.ledger(["--store", phone, "init", "--device", "phone"]).status == 0)
        #expect(try Self.ledger(["--store", phone, "append"], input: creation + "\n" + Self.progress(200, amount: 1)).status == 0)
        #expect(try Self.ledger(["--store", laptop, "clone", phone, "--device", "laptop"]).status == 0)
        #expect(try Self.ledger(["--store", laptop, "append"], input: Self.progress(120, amount: 2)).status == 0)
        #expect(try Self.ledger(["--store", laptop, "sync", phone]).status == 0)
        #expect(try Self.ledger(["--store", phone, "append"], input: Self.progress(80, amount: 3)).status == 0)
        #expect(try Self.ledger(["--store", phone, "verify"]).status == 0)
        let peerIDs = try Self.eventIDs(laptop)
        #expect(peerIDs.count >= 300)

        // The damaged copies: both meta pages, then seeded pages in use, every kind of page.
        let pages = try LedgerStore.pagesInUse(at: phone)
        let inUse = pages.keys.sorted()
        let data = try Data(contentsOf: URL(fileURLWithPath: phone + "/data.mdb"))
        let pageSize = 4096
        #expect(data.count % pageSize == 0)
        var random = FuzzTests.Mutator(state: 0xDA_3A6E)
        var chosen: [Int] = [0, 1]
        // A branch page of the log and of another table, where there is one.
        for wanted in ["events branch", "events leaf", "goalPositions", "ids ", "origins", "p0.", "the table of tables", "the free list"] {
            let candidates = inUse.filter { pages[$0]!.hasPrefix(wanted) && !chosen.contains($0) }
            if !candidates.isEmpty { chosen.append(candidates[random.below(candidates.count)]) }
        }
        while chosen.count < 24 { chosen.append(inUse[random.below(inUse.count)]) }
        let modes = ["random bytes", "zeros", "bit flips"]

        struct Copy {
            var path: String
            var what: String
        }
        var copies: [Copy] = []
        for (i, page) in chosen.enumerated() {
            var bytes = [UInt8](data)
            let at = page * pageSize
            let mode = modes[i % 3]
            switch mode {
            case "random bytes": for j in at..<at + pageSize { bytes[j] = UInt8(truncatingIfNeeded: random.next()) }
            case "zeros": for j in at..<at + pageSize { bytes[j] = 0 }
            default: for _ in 0..<32 { bytes[at + random.below(pageSize)] ^= UInt8(1 << random.below(8)) }
            }
            let path = root + "/copy\(i)"
            try FileManager.default.copyItem(atPath: phone, toPath: path)
            try Data(bytes).write(to: URL(fileURLWithPath: path + "/data.mdb"))
            copies.append(Copy(path: path, what: "page \(page) (\(page < 2 ? "meta" : pages[page] ?? "?")), \(mode)"))
        }
        // The file cut short.
        let truncated = root + "/truncated"
        try FileManager.default.copyItem(atPath: phone, toPath: truncated)
        #expect(truncate(truncated + "/data.mdb", off_t(data.count / 2)) == 0)
        copies.append(Copy(path: truncated, what: "data.mdb cut to half"))

        var runs = 0
        var detected: [String] = []
        var undetected: [String] = []
        var recovered = 0
        for copy in copies {
            let commands: [([String], String?)] = [
                (["status"], nil), (["goals"], nil), (["log"], nil), (["verify"], nil),
                (["append"], Self.progress(1, amount: 4)), (["rebuild"], nil),
            ]
            var verifyRun: Run?
            for (arguments, input) in commands {
                let r = try Self.ledger(["--store", copy.path] + arguments, input: input)
                runs += 1
                #expect(!r.signaled, "\(copy.what): `ledger \(arguments.joined(separator: " "))` died by signal \(r.status): \(r.stderr)")
                #expect(
                    [0, 3, 5].contains(r.status),
                    "\(copy.what): `ledger \(arguments.joined(separator: " "))` exited \(r.status): \(r.stderr)")
                if r.status == 5 { #expect(r.stderr.contains("damaged") || r.stderr.contains("verify"), "\(copy.what): \(r.stderr)") }
                if arguments == ["verify"] { verifyRun = r }
                // No write lands far past the file's pages (a damaged free list once sent one 64 GiB out).
                let size = try FileManager.default.attributesOfItem(atPath: copy.path + "/data.mdb")[.size] as? Int ?? 0
                #expect(size <= data.count * 4, "\(copy.what): `ledger \(arguments.joined(separator: " "))` left data.mdb at \(size) bytes")
            }
            if let v = verifyRun, v.status == 5, v.stderr.contains("damaged at") || v.stdout.contains("damaged") {
                detected.append(copy.what)
            } else {
                undetected.append(copy.what)
            }

            // Recovery from the peer: never touches the damaged copy, verifies, holds the peer's events.
            let before = try Data(contentsOf: URL(fileURLWithPath: copy.path + "/data.mdb"))
            let out = copy.path + ".recovered"
            let r = try Self.ledger(["--store", copy.path, "recover", "--out", out, "--from", laptop])
            #expect(!r.signaled)
            #expect(r.status == 0, "\(copy.what): recover exited \(r.status): \(r.stderr)")
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: copy.path + "/data.mdb")) == before,
                "\(copy.what): recover changed the damaged store")
            guard r.status == 0 else { continue }
            let v = try Self.ledger(["--store", out, "verify"])
            #expect(v.status == 0, "\(copy.what): the recovered store does not verify: \(v.stdout) \(v.stderr)")
            let held = try Self.eventIDs(out)
            #expect(peerIDs.isSubset(of: held), "\(copy.what): \(peerIDs.subtracting(held).count) of the peer's events are missing")
            if v.status == 0, peerIDs.isSubset(of: held) { recovered += 1 }
        }
        print(
            "damage: \(copies.count) copies, \(runs) command runs, no signal; verify named the damage of \(detected.count), not of \(undetected.count) \(undetected); \(recovered) recovered from the peer"
        )
        // Every chosen page is in use, but a few bit flips can land on bytes nothing checks
        // (unused space in a page): most copies must be detected, the truncated one included.
        #expect(detected.count * 10 >= copies.count * 8)
        #expect(detected.contains("data.mdb cut to half"))
        #expect(recovered == copies.count)
    }
    /// A new store and a FIFO (which holds a command that reads it at a known point) in a
    /// directory of their own, named for `purpose`; the caller removes the directory.
    static func storeAndFIFO(_ purpose: String) throws -> (root: String, store: String, fifo: String) {
        try #require(FileManager.default.isExecutableFile(atPath: ledgerExecutable().path), "build the ledger executable first")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(purpose)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let store = root + "/store"
        #expect(try Self.ledger(["--store", store, "init", "--device", "phone"]).status == 0)
        let fifo = root + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        return (root, store, fifo)
    }

    /// Waits (10 s at most) until process `p` waits to open a FIFO.
    static func waitUntilItWaitsOnAFIFO(_ p: Process) {
        let wchan = "/proc/\(p.processIdentifier)/wchan"
        for _ in 0..<200 {
            if (try? String(contentsOfFile: wchan, encoding: .utf8))?.contains("wait_for_partner") == true { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// The executable's signal handlers: a stop inside a command with a store open is said as
    /// the store's damage (exit 5), one before any store is open as an internal error (exit 1);
    /// never a death by signal. (A FIFO holds each command at a known point.)
    @Test func aSignalIsAnExitCodeNeverADeath() throws {
        let (root, store, fifo) = try Self.storeAndFIFO("signal")
        defer { try? FileManager.default.removeItem(atPath: root) }
        // `import` opens the store, then waits on the FIFO; `append --file` waits on it first.
        for (arguments, signal, expected, words) in [
            (["import", fifo], SIGSEGV, Int32(5), "is damaged at"), (["import", fifo], SIGABRT, 5, "is damaged at"),
            (["import", fifo], SIGBUS, 5, "is damaged at"), (["append", "--file", fifo], SIGABRT, 1, "internal error"),
            (["import", fifo], SIGTRAP, 1, "internal error"),
        ] {
            let p = Process()
            p.executableURL = ledgerExecutable()
            p.arguments = ["--store", store] + arguments
            let err = Pipe()
            p.standardError = err
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            // Signalled once it waits on the FIFO (its handlers are installed at its start).
            Self.waitUntilItWaitsOnAFIFO(p)
            kill(p.processIdentifier, signal)
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            #expect(p.terminationReason == .exit, "\(arguments) \(signal): died by a signal")
            #expect(p.terminationStatus == expected, "\(arguments) \(signal): exit \(p.terminationStatus): \(text)")
            #expect(text.contains(words), "\(arguments) \(signal): \(text)")
        }
    }

    /// SIGTERM and SIGINT stop a busy command even when its parent left them ignored (an
    /// ignored disposition survives exec); the store it had open stays whole.
    @Test(arguments: [SIGTERM, SIGINT])
    func aCommandStopsWhenAskedEvenIfItsParentIgnoredTheSignal(_ signal: Int32) throws {
        let (root, store, fifo) = try Self.storeAndFIFO("stop")
        defer { try? FileManager.default.removeItem(atPath: root) }
        // The shell ignores both signals, then becomes `ledger import FIFO`, which opens the
        // store and waits on the FIFO.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", #"trap '' TERM INT; exec "$0" "$@""#, ledgerExecutable().path, "--store", store, "import", fifo]
        p.standardError = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        Self.waitUntilItWaitsOnAFIFO(p)
        kill(p.processIdentifier, signal)
        for _ in 0..<200 where p.isRunning { Thread.sleep(forTimeInterval: 0.05) }
        let stopped = !p.isRunning
        if !stopped {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
        #expect(stopped, "signal \(signal) did not stop the command")
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == signal, "\(p.terminationReason) \(p.terminationStatus)")
        #expect(try Self.ledger(["--store", store, "verify"]).status == 0)
    }
}
