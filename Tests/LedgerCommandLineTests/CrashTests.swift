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
