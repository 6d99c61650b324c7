import Foundation
import Testing

@testable import GoalLedger

/// The sync wire format (a ``SyncState`` and a ``ChangeSet``, version 1) pinned by golden
/// bytes: a relay in another language reads exactly these. `LEDGER_WRITE_GOLDEN=1` rewrites the
/// file, on purpose only.
struct WireFormatGoldenTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("wire.golden")
    static let ledger = UUID(uuidString: "5E1F0A2B-3C4D-4E5F-8A6B-7C8D9E0F1A2B")!

    /// Two events of two origins, a signed one among them, built from fixed values.
    static func changeSet() throws -> ChangeSet {
        let goal = UUID(uuidString: "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1")!
        var created = Event(
            id: UUID(uuidString: "00000000-0000-4000-8000-000000000001")!, origin: "phone", sequence: 1,
            hlc: HLC(milliseconds: 1_793_000_000_000, counter: 0), at: Instant(milliseconds: 1_793_000_000_000), schema: 2,
            payload: .goalCreated(GoalCreated(goal: goal, title: "Water", cadence: .daily, progressKind: .measurable, target: try! Amount("8"), unit: "glasses")))
        created.previousHash = EventChain.genesis
        created.signer = [UInt8](repeating: 0xA1, count: 32)
        created.signature = [UInt8](repeating: 0x5C, count: 64)
        let entry = Event(
            id: UUID(uuidString: "00000000-0000-4000-8000-000000000002")!, origin: "tablet", sequence: 1,
            hlc: HLC(milliseconds: 1_793_000_060_000, counter: 1), at: Instant(milliseconds: 1_793_000_060_000), schema: 2,
            payload: .progressRecorded(
                ProgressRecorded(goal: goal, amount: try! Amount("2.5"), occurredAt: Instant(milliseconds: 1_793_000_060_000), day: Day(daysSinceEpoch: 20_752))))
        return try ChangeSet(ledger: ledger, records: [EventCodec.encode(created), EventCodec.encode(entry)])
    }

    static func state() -> SyncState {
        SyncState(
            ledger: ledger,
            heads: [
                "phone": .init(sequence: 7, hash: [UInt8](repeating: 0x11, count: 32)),
                "tablet": .init(sequence: 300, hash: [UInt8](repeating: 0x22, count: 32)),
            ])
    }

    @Test func theWireFormatIsPinnedByGoldenBytes() throws {
        let current = [
            "changeSet " + Hex.string(try Self.changeSet().encoded()),
            "syncState " + Hex.string(Self.state().encoded()),
        ]
        if ProcessInfo.processInfo.environment["LEDGER_WRITE_GOLDEN"] == "1" {
            try (["# name hex: the sync wire format, version 1 (see WireFormatGoldenTests.swift)"] + current).joined(separator: "\n")
                .appending("\n").write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let golden = try String(contentsOf: Self.file, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        #expect(golden == current)
        // Read back from the golden bytes, they say the same.
        let bytes = Hex.bytes(String(golden[0].dropFirst("changeSet ".count)))!
        let decoded = try ChangeSet(decoding: bytes)
        #expect(decoded == (try Self.changeSet()))
        #expect(decoded.events.map(\.origin) == ["phone", "tablet"])
        #expect(try SyncState(decoding: Hex.bytes(String(golden[1].dropFirst("syncState ".count)))!) == Self.state())
    }

    @Test func damagedOrForeignBytesAreRefusedBeforeAnythingIsApplied() throws {
        let good = try Self.changeSet().encoded()
        for cut in [0, 8, 20, good.count / 2, good.count - 1] {
            #expect(throws: LedgerError.self) { try ChangeSet(decoding: Array(good.prefix(cut))) }
        }
        for offset in [9, 30, good.count / 2, good.count - 5] {
            var bad = good
            bad[offset] ^= 0x10
            #expect(throws: LedgerError.self) { try ChangeSet(decoding: bad) }
        }
        let state = Self.state().encoded()
        for cut in [0, 12, state.count - 1] { #expect(throws: LedgerError.self) { try SyncState(decoding: Array(state.prefix(cut))) } }
        #expect(throws: LedgerError.self) { try SyncState(decoding: state + [0]) }
    }
}
