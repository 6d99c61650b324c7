import Foundation
import Testing

@testable import GoalLedger

/// A walk adds up what waits of each origin with what its source says remains: a source's
/// counts come from a peer (a hub's heads reach 2^63), so the sums saturate, never trap.
struct PageWalkCountTests {
    /// Origins of which the source says it holds `Int.max` more events than it gives.
    struct Boundless: PageSource {
        mutating func read(_ origin: String, count: Int) throws(LedgerError) -> PageChunk {
            var chunk = PageChunk()
            chunk.ended = true
            return chunk
        }
        func remaining(_ origin: String, after given: UInt64?) -> Int { .max }
    }

    @Test func aWaitingCountSaturates() throws {
        var walk = PageWalk(ledger: UUID(), source: Boundless(), pageEvents: 10)
        walk.add("a")
        let result = try walk.importPages(
            unreadable: [],
            apply: { _, _, _ throws(LedgerError) in
                var r = ImportResult()
                // "a" waits: its count from the apply, then the source's rest on top.
                r.waiting = [WaitingEvents(origin: "a", sequence: 1, count: .max, cause: .other, reason: "r")]
                return r
            },
            heads: { () throws(LedgerError) in [:] }, rename: { _ throws(LedgerError) in })
        #expect(result.waiting.map(\.count) == [.max])
    }
}
