import Foundation
import GoalLedger
import Testing

/// Observing goals: fresh values after a write of this process (no timer) or of another process
/// (within the documented bound), coalesced.
struct ObservationTests {
    static let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

    /// The first value `stream` yields that satisfies `accept`, or nil after `seconds`.
    static func first<T: Sendable>(
        _ stream: AsyncThrowingStream<T, Error>, within seconds: Double, where accept: @escaping @Sendable (T) -> Bool
    ) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                for try await value in stream where accept(value) { return value }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let result = try await group.next() ?? nil
            group.cancelAll()
            return result
        }
    }

    @Test func aWriteOfThisProcessWakesTheObserverWithoutATimer() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-observe-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try LedgerStore.create(at: dir + "/s", device: "phone")
        let water = try await store.createGoal(title: "Water", cadence: .daily, progress: .measurable(target: try .target(2)), now: Self.now)
        // Other processes are looked for only once an hour here: only the commit can wake it.
        let updates = store.observeGoals(now: { Self.now }, otherProcesses: .seconds(3600))
        var iterator = updates.makeAsyncIterator()
        let initial = try #require(try await iterator.next())
        #expect(initial.map(\.goal.title) == ["Water"] && initial[0].view.value?.description == "0")

        // Another task writes, through a second LedgerStore of the same path (one environment).
        let writer = Task.detached {
            let other = try LedgerStore.open(at: dir + "/s")
            try other.recordProgress(water, amount: try Amount(0.5), now: Self.now)
        }
        try await writer.value
        let started = ContinuousClock.now
        let next = try #require(try await iterator.next())
        #expect(next[0].view.value?.description == "0.5")
        // Far below the hour the other processes' check waits (a loaded machine may take seconds).
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    @Test func aWriteOfAnotherProcessArrivesWithinTheBound() async throws {
        let binary = ledgerExecutable()
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the ledger executable first")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-observe-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try LedgerStore.create(at: dir + "/s", device: "phone")
        let goal = try store.createGoal(title: "Read", now: Self.now)
        let updates = store.observeGoals(now: { Self.now }, otherProcesses: .milliseconds(100))

        let p = Process()
        p.executableURL = binary
        p.arguments = ["--store", dir + "/s", "--now", "2026-11-05T12:00:00Z", "append"]
        let input = Pipe()
        p.standardInput = input
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        input.fileHandleForWriting.write(Data(#"{"type":"tagAdded","goal":"\#(goal.uuidString)","tag":"books"}"#.utf8))
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let seen = try await Self.first(updates, within: 10) { $0.first?.goal.tags == ["books"] }
        #expect(seen != nil, "the other process's tag never arrived")
    }

    @Test func manyCommitsAreCoalescedAndTheLastValueIsTheLatestState() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-observe-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try LedgerStore.create(at: dir + "/s", device: "phone")
        let water = try await store.createGoal(title: "Water", cadence: .daily, progress: .measurable(target: try .target(100)), now: Self.now)
        let updates = store.observeGoal(water, now: { Self.now }, otherProcesses: .seconds(3600))
        let collector = Task {
            var values: [Amount] = []
            for try await snapshot in updates {
                values.append(snapshot?.view.value ?? Amount.zero)
                if snapshot?.view.value?.description == "50" { break }
            }
            return values
        }
        for _ in 0..<50 { try store.recordProgress(water, amount: try Amount(1), now: Self.now) }
        let values = try await collector.value
        #expect(values.last?.description == "50")
        #expect(values.count <= 51, "one value per distinct state at most")
        #expect(values == values.sorted(), "values only move forward")
    }
}
