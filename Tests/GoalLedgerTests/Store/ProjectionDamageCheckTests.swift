import Foundation
import Testing

@testable import GoalLedger

/// The fuzz target's store is made, has rows in every table the target damages, and a damaged
/// row of each table is found by `verify` and repaired by `rebuild`.
struct ProjectionDamageCheckTests {
    @Test func thePristineStoreHasRowsInEveryTableItDamages() throws {
        let dir = TemporaryDirectory()
        _ = try ProjectionDamageCheck.makePristine(at: dir.path + "/made")
        let path = try #require(ProjectionDamageCheck.pristine)
        let store = try LedgerStore.open(at: path)
        #expect(try store.read { try $0.verify() }.isClean)
        try store.readTransaction { txn in
            let tables = try txn.activeProjection()
            for table in ProjectionTable.allCases where table != .setAside && table != .removed {
                var rows = 0
                try txn.scan(tables[table]) { _, _ in
                    rows += 1
                    return true
                }
                #expect(rows > 0, "\(table)")
            }
        }
    }

    /// Each table's first row, its value XORed with a run of bytes, then replaced, then (for
    /// `entries`) a row added: every invariant holds.
    @Test(arguments: ProjectionDamageCheck.Target.all.indices)
    func aDamagedRowOfEachTableIsRepairedByRebuild(_ table: Int) {
        for mode: UInt8 in 0..<3 {
            for row: UInt8 in [0, 1, 7] {
                let input: [UInt8] = [UInt8(table), row, mode, row &* 5] + (0..<24).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 1) }
                let broken = input.withUnsafeBytes { ProjectionDamageCheck.run($0) }
                #expect(broken == nil, "table \(ProjectionDamageCheck.Target.all[table]), row \(row), mode \(mode): \(broken ?? "")")
            }
        }
    }
}

/// A sweep of single-byte damage over the store's rows (the projection's and the log's tables):
/// each table's rows, at byte places
/// `stride` apart (every byte when `LEDGER_DAMAGE_SWEEP_STRIDE=1`, a long run), XORed with 0x01,
/// 0x80 and 0xFF. Where the fuzzer's random inputs rarely reach a given byte, this reaches
/// each place it visits.
struct ProjectionDamageSweepTests {
    static let stride = ProcessInfo.processInfo.environment["LEDGER_DAMAGE_SWEEP_STRIDE"].flatMap(Int.init) ?? 17

    @Test(arguments: ProjectionDamageCheck.Target.all.indices)
    func singleByteDamageOfEachTableKeepsEveryInvariant(_ table: Int) throws {
        let path = try #require(ProjectionDamageCheck.pristine)
        let store = try LedgerStore.open(at: path)
        var rows: [Int] = []
        try store.readTransaction { txn in
            try txn.scan(try ProjectionDamageCheck.Target.all[table].database(txn, store.layout)) { _, v in
                rows.append(v.count)
                return true
            }
        }
        for (row, length) in rows.enumerated().prefix(256) {
            for place in Swift.stride(from: row % Self.stride, to: min(length, 256), by: Self.stride) {
                for flip: UInt8 in [0x01, 0x80, 0xFF] {
                    let input: [UInt8] = [UInt8(table), UInt8(row), 1, UInt8(place), flip]
                    let broken = input.withUnsafeBytes { ProjectionDamageCheck.run($0) }
                    #expect(broken == nil, "\(ProjectionDamageCheck.Target.all[table]) row \(row) byte \(place) ^ \(flip): \(broken ?? "")")
                }
            }
        }
    }
}
