import Dispatch
import Foundation
import Synchronization
import Testing

@testable import GoalLedger

/// The `async` writes run on the store's writer queue: the caller's actor goes on meanwhile.
struct AsyncWriteTests {
    let now = instant("2026-11-05T12:00:00Z")

    @MainActor final class Screen {
        var ticks = 0
    }

    @Test @MainActor func aWaitingWriteDoesNotBlockTheMainActor() async throws {
        let t = try TemporaryStore()
        // Another writer holds LMDB's write lock until released.
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let env = t.store.env
        Thread.detachNewThread {
            try? env.write { _ in
                holding.signal()
                release.wait()
            }
        }
        holding.wait()
        let screen = Screen()
        let write = Task { @MainActor in try await t.store.write { try $0.createGoal(title: "Read", now: now) } }
        // The main actor runs other work while the write waits for the lock.
        for _ in 0..<20 {
            screen.ticks += 1
            await Task.yield()
        }
        #expect(screen.ticks == 20)
        #expect(try t.store.goals(now: now).isEmpty, "the write is still waiting")
        release.signal()
        let id = try await write.value
        #expect(try t.store.goal(id, now: now)?.goal.title == "Read")
    }

    @Test func writesOfOneStoreRunInTheOrderTheyWereCalled() async throws {
        let t = try TemporaryStore()
        let goal = try await t.store.write { try $0.createGoal(title: "Water", progress: .measurable(target: try Amount(10)), now: now) }
        var results: [AppendResult] = []
        for i in 1...5 {
            let amount = try Amount(Double(i))
            results.append(try await t.store.write { try $0.recordProgress(goal, amount: amount, now: now) })
        }
        #expect(results.map(\.position) == results.map(\.position).sorted())
        #expect(try t.store.goal(goal, now: now)?.view.value?.description == "15")
    }

    @Test func anAsyncWriteThrowsTheSameTypedError() async throws {
        let t = try TemporaryStore()
        let unknown = UUID()
        do {
            _ = try await t.store.write { try $0.recordCompletion(unknown, now: now) }
            Issue.record("progress on an unknown goal was written")
        } catch let error as LedgerError {
            #expect(error.reason == .unknownGoal(goal: unknown, index: 1, line: nil))
        }
        #expect(try t.store.lastPosition() == 0)
    }

    @Test func anAsyncReadSeesOneCommittedState() async throws {
        let t = try TemporaryStore()
        let goal = try await t.store.write { try $0.createGoal(title: "A", now: now) }
        let (title, events) = try await t.store.read { s in (try s.goal(goal)?.title, try s.lastPosition()) }
        #expect(title == "A" && events == 1)
    }
}
