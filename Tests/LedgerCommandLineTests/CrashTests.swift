import Foundation
import GoalLedger
import Testing

/// A `ledger append` killed with SIGKILL at a random moment leaves a store that opens and holds
/// all of its batch or none of it.
struct CrashTests {
    @Test func killedAppendLeavesAllOrNothing() throws {
        let binary = ledgerExecutable()
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the ledger executable first (\(binary.path))")
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        #expect(f.run(["append"], input: everyKindOfGoal.joined(separator: "\n")).exitCode == 0)
        let batchSize = 20_000
        let batch = (0..<batchSize).map { i in
            #"{"type":"progressRecorded","goal":"\#(goalIDs[3])","amount":\#(i % 7),"at":"2026-11-06T10:00:00Z"}"#
        }.joined(separator: "\n")
        let file = f.root + "/batch.jsonl"
        try batch.write(toFile: file, atomically: true, encoding: .utf8)

        // Kill delays come from a fixed seed, so runs are repeatable; the batch takes about a
        // second to append in a debug build, so most kills land in the middle of it.
        var seed: UInt64 = 0x5EED
        var expected = 21
        for attempt in 0..<6 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let delay = Double(seed >> 40 % 1000) / 1000 * 0.8  // 0 … 0.8 s
            let process = Process()
            process.executableURL = binary
            process.arguments = ["--store", f.store, "--now", "2026-11-06T12:00:00Z", "append", "--file", file]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let store = try LedgerStore.open(at: f.store)
            let count = Int(try store.lastPosition())
            #expect(count == expected || count == expected + batchSize, "attempt \(attempt): \(count) events")
            // Every stored event decodes and its checksum holds.
            let replayed = try store.replay()
            #expect(Int(replayed.position) == count)
            expected = count
        }
        // A later append still works on the store the kills left behind.
        #expect(f.run(["append"], input: #"{"type":"tagAdded","goal":"\#(goalIDs[0])","tag":"after"}"#).exitCode == 0)
    }
}

/// A `ledger rebuild` killed with SIGKILL at a random moment leaves a store that opens, serves
/// the projection it had, and verifies; running `rebuild` again completes.
struct RebuildCrashTests {
    @Test func killedRebuildKeepsServingTheOldProjection() throws {
        let binary = ledgerExecutable()
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the ledger executable first (\(binary.path))")
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        #expect(f.run(["append"], input: everyKindOfGoal.joined(separator: "\n")).exitCode == 0)
        let store = try LedgerStore.open(at: f.store)
        for chunk in 0..<2 {
            let lines = (0..<10_000).map { i in
                #"{"type":"progressRecorded","goal":"\#(goalIDs[3 + (i % 2) * 2])","amount":\#((i + chunk) % 5),"at":"2026-11-06T10:00:00Z"}"#
            }
            try store.append(try lines.enumerated().map { try EventDraft(line: $1, number: $0 + 1) }, now: Instant(rfc3339: "2026-11-06T12:00:00Z")!)
        }
        let expected = try store.replay()

        func runRebuild() throws -> Process {
            let process = Process()
            process.executableURL = binary
            process.arguments = ["--store", f.store, "rebuild"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        // Calibrate: how long a whole rebuild takes here.
        let started = Date()
        let full = try runRebuild()
        full.waitUntilExit()
        #expect(full.terminationStatus == 0)
        let duration = Date().timeIntervalSince(started)

        var seed: UInt64 = 0xB10E
        for attempt in 0..<5 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let process = try runRebuild()
            Thread.sleep(forTimeInterval: duration * Double((seed >> 33) % 1000) / 1000)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let reopened = try LedgerStore.open(at: f.store)
            let report = try reopened.verify()
            #expect(report.isClean, "attempt \(attempt): \(report.problems)")
            #expect(try reopened.projection() == expected, "attempt \(attempt)")
        }
        let last = try runRebuild()
        last.waitUntilExit()
        #expect(last.terminationStatus == 0)
        #expect(try LedgerStore.open(at: f.store).verify().isClean)
        #expect(f.run(["verify"]).exitCode == 0)
    }
}

/// `ledger migrate` killed with SIGKILL at random moments leaves a store that opens on one
/// schema or the other and verifies; running `migrate` again finishes.
struct MigrateCrashTests {
    @Test func killedMigrationLeavesOneSchemaOrTheOther() throws {
        let binary = ledgerExecutable()
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the ledger executable first (\(binary.path))")
        let f = CLIFixture()
        let pristine = f.root + "/pristine"
        let legacy = try LedgerStore.create(at: pristine, device: "phone", schema: 1)
        let now = Instant(rfc3339: "2026-10-05T12:00:00Z")!
        let goals = (0..<20).map { _ in UUID() }
        try legacy.append(goals.map { EventDraft(payload: .goalCreated(GoalCreated(goal: $0, title: "Read", cadence: .daily, progressKind: .measurable, target: 5))) }, now: now)
        var last: [UUID: UUID] = [:]
        var histories: [UUID: [HistoryEntry]] = [:]
        for round in 0..<4 {
            var batch: [EventDraft] = []
            for i in 0..<4_000 {
                let g = goals[(i + round) % goals.count]
                var entries = histories[g] ?? []
                entries.append(HistoryEntry(id: UUID(), amount: 1, occurredAt: now))
                if entries.count > 4 { entries.removeFirst() }
                histories[g] = entries
                let id = UUID()
                batch.append(EventDraft(id: id, payload: .progressHistoryReplaced(ProgressHistoryReplaced(goal: g, entries: entries, base: last[g]))))
                last[g] = id
            }
            try legacy.append(batch, now: now)
        }
        let files = ["data.mdb", "lock.mdb"]
        func restore() throws {
            try? FileManager.default.removeItem(atPath: f.store)
            try FileManager.default.createDirectory(atPath: f.store, withIntermediateDirectories: true)
            for file in files { try FileManager.default.copyItem(atPath: pristine + "/" + file, toPath: f.store + "/" + file) }
        }
        func runMigrate() throws -> Process {
            let p = Process()
            p.executableURL = binary
            p.arguments = ["--store", f.store, "migrate"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            return p
        }
        try restore()
        let started = Date()
        let full = try runMigrate()
        full.waitUntilExit()
        #expect(full.terminationStatus == 0)
        let duration = Date().timeIntervalSince(started)
        var seed: UInt64 = 0x316
        var schemas: [Int] = []
        for attempt in 0..<5 {
            try restore()
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let p = try runMigrate()
            Thread.sleep(forTimeInterval: duration * Double((seed >> 33) % 1000) / 1000)
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            let store = try LedgerStore.open(at: f.store)
            schemas.append(store.schema)
            #expect(store.schema == 1 || store.schema == 2)
            #expect(try store.appliedMigrations().isEmpty == (store.schema == 1), "attempt \(attempt)")
            let report = try store.verify()
            #expect(report.isClean, "attempt \(attempt): \(report.problems)")
            #expect(try store.projection() == store.replay(), "attempt \(attempt)")
            let again = try runMigrate()
            again.waitUntilExit()
            #expect(again.terminationStatus == 0)
            let finished = try LedgerStore.open(at: f.store)
            #expect(finished.schema == 2)
            #expect(try finished.verify().isClean)
        }
    }
}
