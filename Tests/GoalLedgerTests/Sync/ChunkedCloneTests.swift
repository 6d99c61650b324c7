import Foundation
import Testing

@testable import GoalLedger

/// A clone copies the log in chunks, one write transaction each: the copy equals one made in a
/// single transaction, and an interrupted copy is a valid prefix that a sync completes.
struct ChunkedCloneTests {
    let now = instant("2026-11-05T12:00:00Z")
    let cloned = instant("2026-11-01T00:00:00Z")

    /// A signed ledger of three origins whose events interleave in clock order.
    func source(_ dir: TemporaryDirectory) throws -> LedgerStore { try interleavedLedger(dir, rounds: 4, perRound: 3) }

    /// The ids of a store's events, by position.
    func log(_ store: LedgerStore) throws -> [UUID] {
        try store.reading { s in try (1...max(s.lastPosition(), 1)).compactMap { try s.event(at: $0)?.id } }
    }

    @Test func aCloneInChunksEqualsOneInOneTransaction() throws {
        let dir = TemporaryDirectory()
        let phone = try source(dir)
        #expect(try phone.originHeads().count == 3)
        let chunked = try phone.clone(to: dir.path + "/laptop", device: "laptop", now: cloned, chunk: 3)
        let heads = try phone.originHeads()
        let whole = try phone.clone(to: dir.path + "/desk", device: "desk", now: cloned, chunk: .max)
        #expect(try chunked.reading { try $0.digest() } == phone.reading { try $0.digest() })
        #expect(try chunked.replay().canonicalJSON == phone.replay().canonicalJSON)
        #expect(try chunked.verify().isClean && whole.verify().isClean)
        #expect(try chunked.originHeads() == heads)
        // The same events; each origin's in sequence order.
        let order = try log(chunked)
        #expect(order.count > 40)
        #expect(try Set(log(whole)).isSuperset(of: order) && Set(order).count == order.count)
        let sequences = try chunked.reading { s in try (1...s.lastPosition()).compactMap { try s.event(at: $0) } }
        for origin in try chunked.originHeads().keys {
            #expect(
                sequences.filter { $0.origin == origin }.map(\.sequence)
                    == Array(1...UInt64(sequences.filter { $0.origin == origin }.count)))
        }
    }

    @Test func anInterruptedCloneIsAPrefixThatASyncCompletes() throws {
        let dir = TemporaryDirectory()
        let phone = try source(dir)
        let path = dir.path + "/laptop"
        let stop = LedgerError(.internal, "stopped")
        var committed: [Int] = []
        let error = ledgerError {
            _ = try phone.clone(to: path, device: "laptop", now: cloned, chunk: 5) { (n) throws(LedgerError) in
                committed.append(n)
                if n == 2 { throw stop }
            }
        }
        #expect(error?.message == "stopped" && committed == [1, 2])
        let half = try LedgerStore.open(at: path)
        #expect(try half.lastPosition() >= 10 && half.lastPosition() < phone.lastPosition())
        #expect(try half.verify().isClean)
        // A prefix of each origin: every event held is the source's at its origin sequence.
        let heads = try phone.originHeads()
        for (origin, head) in try half.originHeads() {
            #expect(head <= heads[origin] ?? 0)
            for sequence in 1...head {
                #expect(
                    try half.reading { try $0.event(origin: origin, sequence: sequence)?.id }
                        == phone.reading { try $0.event(origin: origin, sequence: sequence)?.id })
            }
        }
        _ = try half.sync(with: phone)
        #expect(try half.reading { try $0.digest() } == phone.reading { try $0.digest() })
        #expect(try half.originHeads() == phone.originHeads())
        #expect(try half.verify().isClean)
    }
}
