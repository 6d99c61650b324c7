import Foundation

/// The clock an observation reads and sleeps on to re-read at the device's midnights
/// (``LedgerStore/observe(refreshAtDayChange:otherProcesses:_:)``): the system's in an app,
/// a clock a test moves by hand.
///
/// `sleep(until:)` returns once `now()` has reached the given instant (or at once when it has),
/// and throws when the sleeping task is cancelled.
public struct DayChangeClock: Sendable {
    /// The current moment.
    public var now: @Sendable () -> Instant
    /// Waits until `now()` reaches the instant.
    public var sleep: @Sendable (_ until: Instant) async throws -> Void

    /// A clock of `now` and `sleep`.
    public init(now: @escaping @Sendable () -> Instant, sleep: @escaping @Sendable (_ until: Instant) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    /// The machine's clock: ``Instant/systemNow``, and `Task.sleep` for what remains until the
    /// instant, looked at again after each sleep (the wall clock may have been set meanwhile).
    public static let system = DayChangeClock(
        now: { .systemNow },
        sleep: { deadline in
            while true {
                let left = deadline.milliseconds - Instant.systemNow.milliseconds
                if left <= 0 { return }
                // An hour at most per sleep, so a wall clock set forward is noticed within one.
                try await Task.sleep(for: .milliseconds(min(left, 3_600_000)))
            }
        })
}
