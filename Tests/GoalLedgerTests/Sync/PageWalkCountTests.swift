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

    /// Two unknown origins (no key in a signed ledger) whose unreadable rest a source counts
    /// at 2^62 each (a hub counts the rest of an origin from its head): their events are
    /// counted, saturating, not trapping.
    @Test func unknownOriginsCountsSaturate() throws {
        let dir = TemporaryDirectory()
        let store = try LedgerStore.create(at: dir.path + "/s", device: "phone")
        let huge = Int.max / 2 + 1
        let unreadable = ["stranger-a", "stranger-b"].map {
            WaitingEvents(origin: $0, sequence: 1, count: huge, cause: .malformed, reason: "an unreadable record")
        }
        let changes = ChangeSet(ledger: store.ledgerID, events: [], records: [])
        let once = try store.writing { try $0.apply(changes, from: "a hub", unreadable: unreadable) }
        #expect(once.unknownOrigins == 2)
        #expect(once.unknownOriginEvents == .max)
        #expect(once.waiting.isEmpty, "an origin without a key is counted, not kept")
    }
}
