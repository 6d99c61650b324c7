import Foundation
import GoalLedger
import Testing

@testable import LedgerCommandLine

/// `sync` and `status` sum the waiting events past the ones they name: a stored count is read
/// clamped, so the sum saturates rather than traps.
struct WaitingCountTests {
    func waiting(_ counts: [Int]) -> [WaitingEvents] {
        counts.enumerated().map { i, n in WaitingEvents(origin: "d\(i)", sequence: 1, count: n, cause: .other, reason: "r") }
    }

    @Test func theSumOfWaitingEventsSaturates() {
        #expect(SyncCommand.eventCount(waiting([])) == 0)
        #expect(SyncCommand.eventCount(waiting([3, 4, 5])) == 12)
        #expect(SyncCommand.eventCount(waiting([Int.max, 1])) == Int.max)
        #expect(SyncCommand.eventCount(waiting([Int.max - 1, Int.max - 1, 5])) == Int.max)
        #expect(SyncCommand.eventCount(waiting([7, -3])) == 7)
    }
}
