import Foundation
import Testing

@testable import GoalLedger

/// `status()` reads every figure in one snapshot: while another thread appends, each status is
/// the state of one commit.
struct StatusSnapshotTests {
    let now = instant("2026-11-05T12:00:00Z")

    /// A batch that creates a goal and records four entries to it: five events in one commit.
    static func batch(_ n: Int) throws -> [EventDraft] {
        let goal = goalID(100 + n)
        return try drafts(
            [#"{"type":"goalCreated","goal":"\#(goal)","title":"Goal \#(n)","progress":{"kind":"measurable","target":10}}"#]
                + (1...4).map { #"{"type":"progressRecorded","goal":"\#(goal)","amount":\#($0)}"# })
    }

    @Test func aQuietStoresStatusIsWhatTheSingleReadsSay() throws {
        let t = try TemporaryStore()
        let store = t.store
        try store.append(try drafts(dayOne), now: now)
        let status = try store.status()
        #expect(status.schema == store.schema)
        #expect(status.events == (try store.lastPosition()))
        #expect(status.originHeads == (try store.originHeads()))
        #expect(status.digest == (try store.digest()))
        #expect(status.goals == (try store.replay()).existingGoals.count)
        let projection = try store.projectionStatus()
        #expect(status.projectionVersion == projection.version && status.projectionCheckpoint == projection.checkpoint)
        #expect(status.migrations == (try store.appliedMigrations()))
        #expect(status.enrolledDevices == (try store.enrolledDevices()))
        #expect(status.setAside == (try store.setAsideEvents()))
        #expect(status.waiting == (try store.waitingEvents()))
        #expect(status.deviceKey == (try store.publicKey()))
        #expect(status.deviceKey != nil)
    }

    @Test func everyFigureOfAStatusIsOfOneCommitWhileAWriterAppends() throws {
        let t = try TemporaryStore()
        let store = t.store
        try store.append(try drafts(dayOne), now: now)
        let start = try store.lastPosition()
        let quiet = try store.status()
        let batches = try (0..<60).map { try Self.batch($0) }
        let now = self.now
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for b in batches { _ = try? store.append(b, now: now) }
            done.signal()
        }
        var seen: [LedgerStatus] = []
        for _ in 0..<200 { seen.append(try store.status()) }
        #expect(done.wait(timeout: .now() + 300) == .success)
        #expect(try store.lastPosition() == start + 5 * UInt64(batches.count))

        // The digest and goal count of the state after each commit, from the log.
        var commits: [UInt64: (digest: String, goals: Int)] = [:]
        for k in 0...batches.count {
            let through = start + 5 * UInt64(k)
            let replay = try store.replay(through: through)
            commits[through] = (try replay.digest, replay.existingGoals.count)
        }
        for s in seen {
            let commit = try #require(commits[s.events], "\(s.events) events is no commit's state")
            #expect(s.projectionCheckpoint == s.events, "checkpoint \(s.projectionCheckpoint) with \(s.events) events")
            // One device wrote every event: its head is the count.
            #expect(s.originHeads == ["phone": s.events])
            #expect(s.digest == commit.digest, "the digest with \(s.events) events")
            #expect(s.goals == commit.goals, "\(s.goals) goals with \(s.events) events")
            // What the appends do not change stays as it was.
            #expect(s.projectionVersion == quiet.projectionVersion && s.schema == quiet.schema)
            #expect(s.migrations == quiet.migrations && s.enrolledDevices == quiet.enrolledDevices)
            #expect(s.setAside.isEmpty && s.waiting.isEmpty && s.deviceKey == quiet.deviceKey)
        }
    }
}
