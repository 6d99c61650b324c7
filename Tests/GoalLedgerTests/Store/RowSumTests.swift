import Foundation
import Testing

@testable import GoalLedger

/// `verify` compares an index with the log by order-independent sums of their rows (`RowSum`):
/// the same rows in any order sum alike; a row changed, moved between key and value, added or
/// taken away does not.
struct RowSumTests {
    /// Rows of every length around a word's eight bytes, from a fixed seed.
    func rows() -> [(key: [UInt8], value: [UInt8])] {
        var seed: UInt64 = 0x5EED
        func next() -> UInt8 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: seed >> 56)
        }
        var out: [(key: [UInt8], value: [UInt8])] = []
        for keyLength in [0, 1, 7, 8, 9, 16, 24] {
            for valueLength in [0, 1, 3, 8, 15] {
                out.append(((0..<keyLength).map { _ in next() }, (0..<valueLength).map { _ in next() }))
            }
        }
        return out
    }

    func sum(_ rows: [(key: [UInt8], value: [UInt8])]) -> RowSum {
        var s = RowSum()
        for r in rows { r.key.withUnsafeBytes { k in r.value.withUnsafeBytes { s.add(key: k, value: $0) } } }
        return s
    }

    @Test func theSameRowsInAnyOrderSumAlike() {
        let rows = rows()
        var g = SystemRandomNumberGenerator()
        for _ in 0..<5 { #expect(sum(rows.shuffled(using: &g)) == sum(rows)) }
    }

    @Test func aChangedMovedAddedOrMissingRowChangesTheSum() {
        let rows = rows()
        let whole = sum(rows)
        for i in rows.indices {
            // Each byte of the row flipped, in its key and in its value.
            for j in rows[i].key.indices {
                var changed = rows
                changed[i].key[j] ^= 0x01
                #expect(sum(changed) != whole, "row \(i), key byte \(j)")
            }
            for j in rows[i].value.indices {
                var changed = rows
                changed[i].value[j] ^= 0x80
                #expect(sum(changed) != whole, "row \(i), value byte \(j)")
            }
            // A byte moved from the end of the key to the start of the value.
            if let last = rows[i].key.last {
                var moved = rows
                moved[i].key.removeLast()
                moved[i].value.insert(last, at: 0)
                #expect(sum(moved) != whole, "row \(i), a byte moved")
            }
            // A zero byte added to the key or the value.
            var longer = rows
            longer[i].value.append(0)
            #expect(sum(longer) != whole, "row \(i), a zero byte added")
            var missing = rows
            missing.remove(at: i)
            #expect(sum(missing) != whole, "row \(i) missing")
        }
        #expect(sum(rows + [([], [])]) != whole, "an empty row added")
    }
}
