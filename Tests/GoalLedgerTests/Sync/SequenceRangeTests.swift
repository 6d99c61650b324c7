import Foundation
import Testing

@testable import GoalLedger

/// Every sequence read from a peer (a sync state, a change set, a record) is at most what a
/// store or a hub holds, 2^63 − 1: a larger one is refused as it is read, so that no later
/// conversion or `+ 1` can trap.
struct SequenceRangeTests {
    let goal = UUID(uuidString: "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1")!

    func event(sequence: UInt64, seen: [String: UInt64]? = nil) -> Event {
        Event(
            id: UUID(uuidString: "10000000-0000-4000-8000-000000000001")!, origin: "phone", sequence: sequence, hlc: HLC(rawValue: 1 << 20),
            at: instant("2026-11-05T12:00:00Z"), schema: 2, payload: .progressRecorded(ProgressRecorded(goal: goal, amount: 1)),
            deletionsSeen: seen)
    }

    @Test func aSyncStateNamingASequencePastWhatAStoreHoldsIsRefused() throws {
        let ledger = UUID()
        let hash = [UInt8](repeating: 7, count: 32)
        let largest = SyncState(ledger: ledger, heads: ["phone": .init(sequence: UInt64(Int64.max), hash: hash)])
        #expect(try SyncState(decoding: largest.encoded()) == largest)
        for sequence in [UInt64(1) << 63, UInt64.max] {
            let state = SyncState(ledger: ledger, heads: ["phone": .init(sequence: sequence, hash: hash)])
            do {
                _ = try SyncState(decoding: state.encoded())
                Issue.record("a state at \(sequence) was read")
            } catch {
                #expect(error.code == .invalidInput)
                #expect(
                    error.message
                        == "not a usable sync state: the sequence of phone, \(sequence), is past the largest a store holds (9223372036854775807)"
                )
            }
        }
    }

    @Test func aRecordOrAChangeSetNamingASequencePastWhatAStoreHoldsIsRefused() throws {
        let ledger = UUID()
        #expect(try EventCodec.decode(EventCodec.encode(event(sequence: UInt64(Int64.max)))).sequence == UInt64(Int64.max))
        #expect(try EventCodec.decode(EventCodec.encode(event(sequence: 3, seen: ["tablet": UInt64(Int64.max)]))).sequence == 3)
        let cases: [(Event, String)] = [
            (event(sequence: 1 << 63), "origin sequence 9223372036854775808 is past the largest a store holds (9223372036854775807)"),
            (event(sequence: .max), "origin sequence 18446744073709551615 is past the largest a store holds (9223372036854775807)"),
            (
                event(sequence: 3, seen: ["tablet": 1 << 63]),
                "deletionsSeen sequence 9223372036854775808 of tablet is past the largest a store holds (9223372036854775807)"
            ),
        ]
        for (e, reason) in cases {
            let record = EventCodec.encode(e)
            #expect(throws: RecordDecodingError.self) { try EventCodec.decode(record) }
            do {
                _ = try ChangeSet(decoding: ExportFile.encode(ledger: ledger, records: [record]), source: "the offer")
                Issue.record("a change set at \(e.sequence) was read")
            } catch {
                #expect(error.code == .invalidInput)
                #expect(error.message == "the offer is not a usable export: record 1: \(reason)", "\(error.message)")
            }
        }
    }
}
