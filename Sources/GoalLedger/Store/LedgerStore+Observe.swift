import Foundation

extension LedgerStore {
    /// Any read of the ledger, first now and then whenever a commit changes it: a screen's live
    /// value, in the manner of GRDB's `ValueObservation`.
    ///
    ///     for try await count in store.observe({ snapshot in
    ///         try snapshot.goals(now: .systemNow, includingEntries: false).filter { $0.goal.tags.contains("health") }.count
    ///     }) {
    ///         screen.healthGoals = count
    ///     }
    ///
    /// `read` gets the ``LedgerSnapshot`` of one read transaction, as in ``read(_:)-7x66n``, so
    /// everything it reads agrees.
    ///
    /// - Initial value: the sequence reads once when it starts and yields that value first.
    /// - Wake-ups: a write committed in this process (through this store or another
    ///   `LedgerStore` of the same path) wakes the sequence at once, with no timer. A write
    ///   committed by another process (an app extension, the command line) is found by reading
    ///   the projection's checkpoint, one small read every `otherProcesses` (250 ms by default):
    ///   it arrives within that bound (plus the time of one read).
    /// - Coalescing: after a wake-up the sequence runs `read` once, however many commits woke it,
    ///   so a burst of commits may yield only the last state. A caller that needs every change
    ///   follows a ``ChangeFeed`` instead.
    /// - Equal values: a value equal to the last one yielded is not yielded again (a commit that
    ///   does not change what `read` returns yields nothing).
    /// - Day changes: with `refreshAtDayChange`, the sequence also reads again at each start of
    ///   the store device's local day (the time zone of its latest `deviceConfigured`, the calendar
    ///   views are computed in), as `refreshAtDayChange`'s clock tells it, so that "today" and
    ///   streaks do not go stale overnight. `read` takes its `now` from the same clock. A change of
    ///   the device's zone is followed from the commit that makes it.
    /// - Cancellation: the sequence ends, and stops reading and waking, when the consuming task is
    ///   cancelled or the iteration stops.
    /// - Errors: an error thrown by `read` (or a failed read) ends the sequence with that error.
    public func observe<Value: Equatable & Sendable>(
        refreshAtDayChange clock: DayChangeClock? = nil, otherProcesses: Duration = .milliseconds(250),
        _ read: @escaping @Sendable (borrowing LedgerSnapshot) throws -> Value
    ) -> AsyncThrowingStream<Value, Error> {
        let store = self
        return AsyncThrowingStream { continuation in
            // Wake-ups, newest only: many commits while a read runs make one more read.
            let wakeUps = store.wakeUps(otherProcesses: otherProcesses)
            let reader = Task {
                var last: Value?
                var midnight: Task<Void, Never>?
                defer { midnight?.cancel() }
                do {
                    for await _ in wakeUps.stream {
                        if Task.isCancelled { break }
                        // Read off the cooperative threads. The moment is taken before the
                        // read: a midnight passed during it makes the next wake-up at once.
                        let at = clock?.now()
                        let (value, calendar) = try await store.read { snapshot in
                            (try read(snapshot), clock == nil ? nil : try snapshot.deviceState(snapshot.device).calendar)
                        }
                        if let clock, let at, let next = calendar?.startOfNextDay(after: at) {
                            midnight?.cancel()
                            midnight = Task {
                                do { try await clock.sleep(next) } catch { return }
                                if !Task.isCancelled { wakeUps.wake() }
                            }
                        }
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

    /// The goals as ``LedgerSnapshot/goals(now:includingDeleted:includingEntries:)`` gives them, first now and then after every
    /// change: a screen's live list, with the contract of ``observe(refreshAtDayChange:otherProcesses:_:)``.
    ///
    /// - `now` gives the moment each value's views are computed at (the system clock by default).
    /// - `includingEntries`: false by default, so each goal's ``Goal/entries`` is empty and the
    ///   read costs the number of goals, not the length of their histories (views come from the
    ///   rows kept with the projection and are the same either way). Pass true for a screen that
    ///   lists the entries themselves.
    /// - `refreshAtDayChange`: reads again at each local midnight of the store's device, as this
    ///   clock tells it (``DayChangeClock/system`` in an app); nil: at commits only.
    public func observeGoals(
        now: @escaping @Sendable () -> Instant = { .systemNow }, includingDeleted: Bool = false, includingEntries: Bool = false,
        refreshAtDayChange: DayChangeClock? = nil, otherProcesses: Duration = .milliseconds(250)
    ) -> AsyncThrowingStream<[GoalSnapshot], Error> {
        observe(refreshAtDayChange: refreshAtDayChange, otherProcesses: otherProcesses) { snapshot in
            try snapshot.goals(now: now(), includingDeleted: includingDeleted, includingEntries: includingEntries)
        }
    }

    /// One goal as ``LedgerSnapshot/goal(_:now:)`` gives it (nil while the store does not know it), first now and
    /// then after every change, with the contract of ``observe(refreshAtDayChange:otherProcesses:_:)``.
    public func observeGoal(
        _ id: UUID, now: @escaping @Sendable () -> Instant = { .systemNow }, refreshAtDayChange: DayChangeClock? = nil,
        otherProcesses: Duration = .milliseconds(250)
    ) -> AsyncThrowingStream<GoalSnapshot?, Error> {
        observe(refreshAtDayChange: refreshAtDayChange, otherProcesses: otherProcesses) { snapshot in try snapshot.goal(id, now: now()) }
    }

    /// When a follower of the store should look again: once at the start, at once after every
    /// commit of this process in the store's environment (no timer), and when a look every
    /// `otherProcesses` at the projection's checkpoint (one small read) finds that another
    /// process committed; `wake` asks for one more look (a timer of the follower's own).
    /// Wake-ups coalesce (the newest only); `stop` ends them.
    func wakeUps(otherProcesses: Duration) -> (stream: AsyncStream<Void>, wake: @Sendable () -> Void, stop: @Sendable () -> Void) {
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
            { wake.yield() },
            {
                store.env.commits.cancel(token)
                wake.finish()
                poll.cancel()
            }
        )
    }
}
