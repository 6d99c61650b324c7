import Foundation
import Testing

@testable import GoalLedger

/// The radix sort of a batch's ids (`sortStably(byIDWords:)`) orders as a comparison sort of
/// the whole 128-bit key does, and keeps elements of equal keys in their order: for random ids,
/// ids sharing their top bytes (the library's, which start with its clock), ids sharing their
/// whole high word, repeated ids, and sizes on both sides of the insertion sort's limit.
struct IDWordsSortTests {
    /// Each element's key, and where it stood before the sort.
    typealias Item = (key: IDWords, place: Int)

    static func words(_ high: UInt64, _ low: UInt64) -> IDWords {
        (high.bigEndianBytes + low.bigEndianBytes).withUnsafeBytes { IDWords($0) }
    }

    /// `items` sorted by key, then by place: what a stable sort by key gives.
    static func reference(_ items: [Item]) -> [Item] {
        items.sorted { $0.key != $1.key ? $0.key < $1.key : $0.place < $1.place }
    }

    static func check(_ keys: [IDWords], _ comment: Comment) {
        var items = keys.enumerated().map { Item(key: $0.element, place: $0.offset) }
        let want = reference(items)
        items.sortStably(byIDWords: \.key)
        // Compared whole, but reported short: the first place they part.
        let parted = items.indices.first { $0 >= want.count || items[$0].key != want[$0].key || items[$0].place != want[$0].place }
        #expect(items.count == want.count && parted == nil, "\(comment): they part at \(parted.map(String.init) ?? "none")")
        // The order alone, as a batch's id rows take it again, is the same.
        #expect(keys.sortedIndices(byIDWords: { $0 }) == want.map(\.place), "\(comment): the sorted indices")
        #expect(items.isSorted(byIDWords: \.key))
        let inOrder = zip(keys, keys.dropFirst()).allSatisfy { !($1 < $0) }
        #expect(keys.isSorted(byIDWords: { $0 }) == inOrder, "\(comment): whether the input is in order")
    }

    @Test(arguments: [0, 1, 2, 63, 64, 65, 1000, 10_000])
    func randomIDsSortAsTheirKeys(_ n: Int) {
        var random = SeededRandom(seed: UInt64(n) &+ 17)
        Self.check((0..<n).map { _ in Self.words(random.next(), random.next()) }, "random ids, \(n)")
    }

    @Test(arguments: [5, 64, 3000])
    func idsThatShareTheirTopBytesOrTheirHighWordSortAsTheirKeys(_ n: Int) {
        var random = SeededRandom(seed: UInt64(n))
        // The library's ids: a clock in the top 48 bits, a few milliseconds apart.
        let clock: UInt64 = 0x0193_4A2B_1C00 << 16
        Self.check(
            (0..<n).map { _ in Self.words(clock | (random.next() % 4) << 16 | random.next() & 0xFFFF, random.next()) },
            "ids of one clock")
        // Only a few high words, each shared by many ids that differ in the low word alone.
        Self.check((0..<n).map { _ in Self.words(random.next() % 3, random.next()) }, "shared high words")
        // Every key the same but for the low word's last byte, and every byte of the high word.
        Self.check((0..<n).map { _ in Self.words(.max, random.next() & 0xFF) }, "one high word")
    }

    @Test func repeatedKeysKeepTheirOrder() {
        var random = SeededRandom(seed: 5)
        let distinct = (0..<50).map { _ in Self.words(random.next(), random.next()) }
        // 2,000 elements over 50 keys: each key about 40 times, at random places.
        Self.check((0..<2000).map { _ in distinct[Int(random.next() % 50)] }, "repeated keys")
        Self.check(Array(repeating: distinct[0], count: 100), "one key")
    }

    @Test func sortedAndReversedInputSort() {
        var random = SeededRandom(seed: 9)
        let keys = (0..<500).map { _ in Self.words(random.next(), random.next()) }.sorted()
        Self.check(keys, "sorted")
        Self.check(keys.reversed(), "reversed")
    }
}
