import GoalLedger
import Synchronization

/// A clock a test moves by hand, for observations that re-read at midnight: `sleep(until:)`
/// returns once the test has moved the clock to the instant, and every instant asked for is
/// kept, so a test can wait for a sleeper and check what it asked for.
final class HandClock: Sendable {
    private struct State {
        var now: Instant
        var asked: [Instant] = []
        var sleepers: [(id: Int, until: Instant, wake: CheckedContinuation<Void, any Error>)] = []
        var cancelled: Set<Int> = []
        var nextID = 0
    }
    private let state: Mutex<State>

    init(_ now: Instant) { state = Mutex(State(now: now)) }

    var now: Instant { state.withLock { $0.now } }
    /// Every instant a sleeper asked for, in order.
    var asked: [Instant] { state.withLock { $0.asked } }

    /// The clock as an observation takes it.
    var dayChanges: DayChangeClock {
        DayChangeClock(now: { self.now }, sleep: { try await self.sleep(until: $0) })
    }

    /// Moves the clock to `instant` and wakes the sleepers it reaches.
    func move(to instant: Instant) {
        let woken = state.withLock { s in
            s.now = instant
            let due = s.sleepers.filter { $0.until <= instant }
            s.sleepers.removeAll { $0.until <= instant }
            return due.map(\.wake)
        }
        for w in woken { w.resume() }
    }

    /// Waits (up to 10 s of real time) until some sleeper has asked for `count` instants.
    func waitForSleepers(_ count: Int) async throws -> [Instant] {
        for _ in 0..<1000 {
            let asked = self.asked
            if asked.count >= count { return asked }
            try await Task.sleep(for: .milliseconds(10))
        }
        return asked
    }

    func sleep(until instant: Instant) async throws {
        let id = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (wake: CheckedContinuation<Void, any Error>) in
                let now: Result<Void, any Error>? = state.withLock { s in
                    s.asked.append(instant)
                    if s.cancelled.contains(id) { return .failure(CancellationError()) }
                    if s.now >= instant { return .success(()) }
                    s.sleepers.append((id, instant, wake))
                    return nil
                }
                if let now { wake.resume(with: now) }
            }
        } onCancel: {
            let wake = state.withLock { s in
                s.cancelled.insert(id)
                let i = s.sleepers.firstIndex { $0.id == id }
                return i.map { s.sleepers.remove(at: $0).wake }
            }
            wake?.resume(throwing: CancellationError())
        }
    }
}
