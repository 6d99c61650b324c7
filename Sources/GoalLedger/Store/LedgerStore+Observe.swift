import Foundation
import LMDB

extension LedgerStore {
    /// The goals as ``LedgerSnapshot/goals(now:includingDeleted:includingEntries:)`` gives them, first now and then after every
    /// change: a screen's live list.
    ///
    /// - A write committed in this process (through this store or another `LedgerStore` of the
    ///   same path) wakes the sequence at once, with no timer.
    /// - A write committed by another process (an app extension, the command line) is found by
    ///   reading the projection's checkpoint, one small read every `otherProcesses` (250 ms by
    ///   default): it arrives within that bound.
    /// - Changes are coalesced: after a wake-up the sequence reads the goals once, however many
    ///   commits woke it, and yields only when they differ from the last value it yielded.
    /// - `now` gives the moment each value's views are computed at (the system clock by default).
    ///
    /// The sequence ends when the consuming task is cancelled, or with the error of a failed
    /// read.
    public func observeGoals(
        now: @escaping @Sendable () -> Instant = { .systemNow }, includingDeleted: Bool = false,
        otherProcesses: Duration = .milliseconds(250)
    ) -> AsyncThrowingStream<[GoalSnapshot], Error> {
        observe(otherProcesses: otherProcesses) { store in
            try store.reading { try $0.goals(now: now(), includingDeleted: includingDeleted) }
        }
    }

    /// One goal as ``LedgerSnapshot/goal(_:now:)`` gives it (nil while the store does not know it), first now and
    /// then after every change, with the contract of ``observeGoals(now:includingDeleted:otherProcesses:)``.
    public func observeGoal(
        _ id: UUID, now: @escaping @Sendable () -> Instant = { .systemNow }, otherProcesses: Duration = .milliseconds(250)
    ) -> AsyncThrowingStream<GoalSnapshot?, Error> {
        observe(otherProcesses: otherProcesses) { store in try store.reading { try $0.goal(id, now: now()) } }
    }

    func observe<Value: Equatable & Sendable>(
        otherProcesses: Duration, _ read: @escaping @Sendable (LedgerStore) throws -> Value
    ) -> AsyncThrowingStream<Value, Error> {
        let store = self
        return AsyncThrowingStream { continuation in
            // Wake-ups, newest only: many commits while a read runs make one more read.
            let wakeUps = store.wakeUps(otherProcesses: otherProcesses)
            let reader = Task {
                var last: Value?
                do {
                    for await _ in wakeUps.stream {
                        if Task.isCancelled { break }
                        let value = try read(store)
                        if value != last {
                            last = value
                            continuation.yield(value)
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                wakeUps.stop()
                reader.cancel()
            }
        }
    }

    /// When a follower of the store should look again: once at the start, at once after every
    /// commit of this process in the store's environment (no timer), and when a look every
    /// `otherProcesses` at the projection's checkpoint (one small read) finds that another
    /// process committed. Wake-ups coalesce (the newest only); `stop` ends them.
    func wakeUps(otherProcesses: Duration) -> (stream: AsyncStream<Void>, stop: @Sendable () -> Void) {
        let store = self
        let (stream, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let token = env.commits.subscribe { wake.yield() }
        let poll = Task {
            var seen = try? store.reading { try $0.projectionStatus().checkpoint }
            while !Task.isCancelled {
                try? await Task.sleep(for: otherProcesses)
                let now = try? store.reading { try $0.projectionStatus().checkpoint }
                if now != seen {
                    seen = now
                    wake.yield()
                }
            }
        }
        wake.yield()
        return (
            stream,
            {
                store.env.commits.cancel(token)
                wake.finish()
                poll.cancel()
            }
        )
    }
}
