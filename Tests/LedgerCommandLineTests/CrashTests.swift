import Foundation
import LedgerFileCenter
import GoalLedger
import Testing

/// Runs a `ledger` child process and kills it with SIGKILL at seeded random moments within
/// the time a whole run takes, then checks the store it left behind.
struct KillLoop {
    let binary = ledgerExecutable()
    var seed: UInt64

    struct Outcome {
        /// What the child printed before it died (a command prints only after its commit).
        var stdout: String
        var attempt: Int
    }

    func spawn(_ arguments: [String], stdout: Pipe? = nil) throws -> Process {
        let p = Process()
        p.executableURL = binary
        p.arguments = arguments
        p.standardOutput = stdout ?? FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }

    /// How long an uninterrupted run takes here (run once, to completion).
    func calibrate(_ arguments: [String]) throws -> Double {
        let started = Date()
        let p = try spawn(arguments)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "calibration run of \(arguments) failed")
        return Date().timeIntervalSince(started)
    }

    mutating func run(
        times: Int, duration: Double, prepare: (Int) throws -> Void, arguments: [String],
        check: (Outcome) throws -> Void
    ) throws {
        for attempt in 0..<times {
            try prepare(attempt)
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let pipe = Pipe()
            let p = try spawn(arguments, stdout: pipe)
            // Up to 1.6× the calibrated length, so some kills land after the run finished even when
            // a loaded machine makes the runs slower than the calibration.
            Thread.sleep(forTimeInterval: duration * 1.6 * Double((seed >> 33) % 1000) / 1000)
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            try check(Outcome(stdout: out, attempt: attempt))
        }
    }
}

struct CrashTests {
    static let kills = 50

    func requireBinary() throws {
        try #require(FileManager.default.isExecutableFile(atPath: ledgerExecutable().path), "build the ledger executable first")
    }

    func progressLines(_ n: Int, goal: String) -> String {
        (0..<n).map { i in #"{"type":"progressRecorded","goal":"\#(goal)","amount":\#(i % 7),"at":"2026-11-06T10:00:00Z"}"# }
            .joined(separator: "\n")
    }

    @Test func killedAppendsKeepEveryReportedBatchAndNothingHalfWritten() throws {
        try requireBinary()
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        #expect(f.run(["append"], input: everyKindOfGoal.joined(separator: "\n")).exitCode == 0)
        let batchSize = 3_000
        let file = f.root + "/batch.jsonl"
        try progressLines(batchSize, goal: goalIDs[3]).write(toFile: file, atomically: true, encoding: .utf8)
        var loop = KillLoop(seed: 0x5EED)
        let arguments = ["--store", f.store, "--now", "2026-11-06T12:00:00Z", "append", "--file", file]
        let duration = try loop.calibrate(arguments)
        var expected = 21 + batchSize
        var outcomes = [0, 0]
        try loop.run(times: Self.kills, duration: duration, prepare: { _ in }, arguments: arguments) { o in
            let store = try LedgerStore.open(at: f.store)
            let count = Int(try store.lastPosition())
            #expect(count == expected || count == expected + batchSize, "attempt \(o.attempt): \(count) events")
            if !o.stdout.isEmpty { #expect(count == expected + batchSize, "attempt \(o.attempt): a reported batch is missing") }
            outcomes[count == expected ? 0 : 1] += 1
            expected = count
            let report = try store.verify()
            #expect(report.isClean, "attempt \(o.attempt): \(report.problems.prefix(3))")
        }
        #expect(outcomes[0] > 0 && outcomes[1] > 0, "kills landed \(outcomes)")
    }

    /// `clone` has the source enrol the new device (a signed event on the source), then copies
    /// the log. Killed at any moment, the source opens and verifies, with the enrolment written
    /// whole or not at all, and a new store that opens verifies too.
    @Test func killedClonesLeaveAnEnrolmentWholeOrAbsent() throws {
        try requireBinary()
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        #expect(f.run(["append"], input: everyKindOfGoal.joined(separator: "\n")).exitCode == 0)
        #expect(f.run(["append"], input: progressLines(2_000, goal: goalIDs[5])).exitCode == 0)
        let pristine = f.root + "/pristine"
        try FileManager.default.copyItem(atPath: f.store, toPath: pristine)
        let tablet = f.root + "/tablet"
        func restore() throws {
            try? FileManager.default.removeItem(atPath: f.store)
            try? FileManager.default.removeItem(atPath: tablet)
            try FileManager.default.copyItem(atPath: pristine, toPath: f.store)
        }
        var loop = KillLoop(seed: 0xE17)
        let arguments = ["--store", tablet, "--now", f.now, "clone", f.store, "--device", "tablet"]
        try restore()
        let duration = try loop.calibrate(arguments)
        try loop.run(times: 20, duration: duration, prepare: { _ in try restore() }, arguments: arguments) { o in
            let source = try LedgerStore.open(at: f.store)
            let report = try source.verify()
            #expect(report.isClean, "attempt \(o.attempt): \(report.problems.prefix(3))")
            let enrolled = try source.enrolledDevices().map(\.device).sorted()
            #expect(enrolled == ["phone"] || enrolled == ["phone", "tablet"], "attempt \(o.attempt): \(enrolled)")
            if let copy = try? LedgerStore.open(at: tablet) {
                #expect(try copy.verify().isClean, "attempt \(o.attempt): the new store")
            }
            if !o.stdout.isEmpty { #expect(enrolled == ["phone", "tablet"]) }
        }
    }

    @Test func killedImportsLeaveAllOrNothing() throws {
        try requireBinary()
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        #expect(f.run(["append"], input: everyKindOfGoal.joined(separator: "\n")).exitCode == 0)
        // A second device writes 3,000 events; its export is imported into copies of phone's store.
        let tablet = f.root + "/tablet"
        #expect(CLIFixture.runAt(tablet, ["clone", f.store, "--device", "tablet"]).exitCode == 0)
        #expect(CLIFixture.runAt(tablet, ["append"], input: progressLines(3_000, goal: goalIDs[5])).exitCode == 0)
        let export = f.root + "/tablet.export"
        #expect(CLIFixture.runAt(tablet, ["export", "--out", export]).exitCode == 0)
        let pristine = f.root + "/pristine"
        try FileManager.default.copyItem(atPath: f.store, toPath: pristine)
        func restore() throws {
            try? FileManager.default.removeItem(atPath: f.store)
            try FileManager.default.copyItem(atPath: pristine, toPath: f.store)
        }
        var loop = KillLoop(seed: 0x1A9)
        let arguments = ["--store", f.store, "import", export]
        try restore()
        let duration = try loop.calibrate(arguments)
        try loop.run(times: Self.kills, duration: duration, prepare: { _ in try restore() }, arguments: arguments) { o in
            let store = try LedgerStore.open(at: f.store)
            let count = try store.lastPosition()
            // 21 events and the phone's enrolment of the tablet, or those and the import.
            #expect(count == 22 || count == 3_022, "attempt \(o.attempt): \(count) events")
            if !o.stdout.isEmpty { #expect(count == 3_022) }
            #expect(try store.verify().isClean, "attempt \(o.attempt)")
        }
    }

    @Test func killedRebuildsKeepServingTheOldProjection() throws {
        try requireBinary()
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        #expect(f.run(["append"], input: everyKindOfGoal.joined(separator: "\n")).exitCode == 0)
        let store = try LedgerStore.open(at: f.store)
        let edits = (0..<15_000).map { i in
            #"{"type":"goalEdited","goal":"\#(goalIDs[i % 10])","title":"title \#(i)","at":"2026-11-06T10:00:00Z"}"#
        }
        try store.append(
            try edits.enumerated().map { try EventDraft(line: $1, number: $0 + 1) }, now: Instant(rfc3339: "2026-11-06T12:00:00Z")!)
        let expected = try store.replay()
        var loop = KillLoop(seed: 0xB10E)
        let arguments = ["--store", f.store, "rebuild"]
        let duration = try loop.calibrate(arguments)
        try loop.run(times: Self.kills, duration: duration, prepare: { _ in }, arguments: arguments) { o in
            let reopened = try LedgerStore.open(at: f.store)
            let report = try reopened.verify()
            #expect(report.isClean, "attempt \(o.attempt): \(report.problems.prefix(3))")
            #expect(try reopened.projection() == expected, "attempt \(o.attempt)")
        }
        #expect(f.run(["rebuild"]).exitCode == 0)
        #expect(f.run(["verify"]).exitCode == 0)
    }

    @Test func killedMigrationsLeaveOneSchemaOrTheOther() throws {
        try requireBinary()
        let f = CLIFixture()
        let pristine = f.root + "/pristine"
        let legacy = try LedgerStore.create(at: pristine, device: "phone", schema: 1)
        let now = Instant(rfc3339: "2026-10-05T12:00:00Z")!
        let goals = (0..<20).map { _ in UUID() }
        try legacy.append(
            goals.map {
                EventDraft(
                    payload: .goalCreated(GoalCreated(goal: $0, title: "Read", cadence: .daily, progressKind: .measurable, target: try! Amount("5"))))
            }, now: now)
        var last: [UUID: UUID] = [:]
        var histories: [UUID: [HistoryEntry]] = [:]
        var batch: [EventDraft] = []
        for i in 0..<12_000 {
            let g = goals[i % goals.count]
            var entries = histories[g] ?? []
            entries.append(HistoryEntry(id: UUID(), amount: try! Amount("1"), occurredAt: now))
            if entries.count > 4 { entries.removeFirst() }
            histories[g] = entries
            let id = UUID()
            batch.append(
                EventDraft(id: id, payload: .progressHistoryReplaced(ProgressHistoryReplaced(goal: g, entries: entries, base: last[g]))))
            last[g] = id
        }
        try legacy.append(batch, now: now)
        func restore() throws {
            try? FileManager.default.removeItem(atPath: f.store)
            try FileManager.default.copyItem(atPath: pristine, toPath: f.store)
        }
        var loop = KillLoop(seed: 0x316)
        let arguments = ["--store", f.store, "migrate"]
        try restore()
        let duration = try loop.calibrate(arguments)
        var schemas = Set<Int>()
        try loop.run(times: Self.kills, duration: duration, prepare: { _ in try restore() }, arguments: arguments) { o in
            let store = try LedgerStore.open(at: f.store)
            schemas.insert(store.schema)
            #expect(try store.appliedMigrations().isEmpty == (store.schema == 1), "attempt \(o.attempt)")
            #expect(try store.verify().isClean, "attempt \(o.attempt)")
            #expect(try store.projection() == store.replay(), "attempt \(o.attempt)")
            if o.attempt % 10 == 0 {
                // Running migrate again finishes the job.
                let again = try KillLoop(seed: 0).spawn(arguments)
                again.waitUntilExit()
                #expect(again.terminationStatus == 0)
                let finished = try LedgerStore.open(at: f.store)
                #expect(finished.schema == 2)
                #expect(try finished.verify().isClean)
            }
        }
        // Which schemas the kills left depends on how early the migration commits on this
        // machine; each outcome was checked above.
        #expect(!schemas.isEmpty && schemas.isSubset(of: [1, 2]), "kills landed on \(schemas)")
    }

    @Test func killedReconcilesLeaveAReadableCenterAndTheNextPassFinishes() throws {
        try requireBinary()
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        var lines = [
            #"{"type":"deviceConfigured","timeZone":"Europe/Berlin","capacity":512,"at":"2026-11-01T00:00:00Z"}"#,
            #"{"type":"notificationAuthorization","status":"authorized","at":"2026-11-01T00:00:00Z"}"#,
        ]
        for i in 0..<400 {
            lines.append(
                #"{"type":"goalCreated","goal":"\#(String(format: "C0000000-0000-4000-8000-%012d", i))","title":"Goal \#(i)","cadence":"daily","reminder":{"hour":\#(i % 24),"minute":\#(i % 60)}}"#
            )
        }
        #expect(f.run(["append"], input: lines.joined(separator: "\n")).exitCode == 0)
        let center = f.root + "/center.json"
        var loop = KillLoop(seed: 0xCE7)
        let arguments = ["--store", f.store, "--now", "2026-11-05T12:00:00Z", "reconcile", "--full", "--center", center]
        let duration = try loop.calibrate(arguments)
        try loop.run(
            times: Self.kills, duration: duration, prepare: { _ in try? FileManager.default.removeItem(atPath: center) },
            arguments: arguments
        ) { o in
            // The center file is whole or absent (written atomically), never half written.
            if FileManager.default.fileExists(atPath: center) {
                let file = try NotificationCenterFile.load(center, defaultCapacity: 64)
                #expect(file.requests.count == 400, "attempt \(o.attempt)")
            }
            #expect(try LedgerStore.open(at: f.store).verify().isClean)
        }
        let finish = f.run(["reconcile", "--full", "--center", center, "--json"])
        #expect(finish.exitCode == 0)
        #expect(try NotificationCenterFile.load(center, defaultCapacity: 64).requests.count == 400)
    }
}

/// Several `ledger` processes on one store: LMDB allows one writer at a time, so the second
/// appender waits for the first; readers run beside them.
struct ConcurrentProcessTests {
    @Test func twoAppendersAndAReaderOnOneStore() throws {
        let binary = ledgerExecutable()
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the ledger executable first")
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        #expect(f.run(["append"], input: everyKindOfGoal.joined(separator: "\n")).exitCode == 0)
        var processes: [Process] = []
        for (n, goal) in [(0, goalIDs[3]), (1, goalIDs[5])] {
            let file = f.root + "/batch\(n).jsonl"
            try (0..<3_000).map { i in #"{"type":"progressRecorded","goal":"\#(goal)","amount":\#(i % 3)}"# }
                .joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
            for _ in 0..<2 {
                let p = Process()
                p.executableURL = binary
                p.arguments = ["--store", f.store, "--now", "2026-11-06T12:00:00Z", "append", "--file", file]
                p.standardOutput = FileHandle.nullDevice
                p.standardError = FileHandle.nullDevice
                try p.run()
                processes.append(p)
            }
        }
        // Readers meanwhile.
        for _ in 0..<5 {
            let r = f.run(["status", "--json"])
            #expect(r.exitCode == 0, "\(r.stderr)")
        }
        for p in processes { p.waitUntilExit() }
        #expect(processes.allSatisfy { $0.terminationStatus == 0 })
        let store = try LedgerStore.open(at: f.store)
        #expect(try store.lastPosition() == 21 + 4 * 3_000)
        #expect(try store.originHeads() == ["phone": 21 + 4 * 3_000])
        #expect(try store.verify().isClean)
    }
}
