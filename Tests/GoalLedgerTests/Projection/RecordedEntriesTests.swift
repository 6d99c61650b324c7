import Foundation
import Testing

@testable import GoalLedger

struct RecordedEntriesTests {
    /// An id whose 16 bytes are `high` then `low` (little-endian words).
    static func id(_ high: UInt64, _ low: UInt64) -> UUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: high.littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        withUnsafeBytes(of: low.littleEndian) { bytes.replaceSubrange(8..<16, with: $0) }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    static func entry(_ id: UUID, _ n: UInt64) -> ProgressEntry {
        ProgressEntry(
            id: id, amount: try! Amount("\(n % 1000)"), completed: nil, occurredAt: Instant(milliseconds: Int64(n % 100_000)),
            day: Day(iso: "2026-11-02")!, device: n % 2 == 0 ? "phone" : "tablet", hlc: HLC(rawValue: n))
    }

    /// Ids of several shapes: random, sharing either word, differing in one bit, or zero.
    static func ids(_ rng: inout SeededRandom, count: Int) -> [UUID] {
        let shared = (rng.next(), rng.next())
        return (0..<count).map { i in
            switch rng.next() % 5 {
            case 0: id(shared.0, UInt64(i))
            case 1: id(UInt64(i), shared.1)
            case 2: id(shared.0 ^ (1 << UInt64(i % 64)), shared.1)
            case 3: id(0, UInt64(i % 3))
            default: rng.uuid()
            }
        }
    }

    /// Whatever is recorded, in whatever order and however often, the table holds what a
    /// dictionary by id would: the last entry recorded for each id, found by its id and
    /// nothing else; each id's place is where it first came.
    @Test(arguments: 0..<12)
    func holdsWhatADictionaryWould(_ seed: Int) {
        var rng = SeededRandom(seed: UInt64(seed) &* 104_729 &+ 17)
        let pool = Self.ids(&rng, count: 1 + Int(rng.next() % 3000))
        var table = RecordedEntries()
        if seed % 3 == 0 { table.reserveCapacity(pool.count / 2) }
        var model: [UUID: ProgressEntry] = [:]
        var firstSeen: [UUID] = []
        for n in 0..<(pool.count * 2) {
            let id = pool[Int(rng.next() % UInt64(pool.count))]
            let e = Self.entry(id, UInt64(n))
            if model[id] == nil { firstSeen.append(id) }
            model[id] = e
            table.record(e)
            #expect(table[id] == e)
        }
        #expect(table.count == model.count)
        #expect(table.isEmpty == model.isEmpty)
        #expect(table.values.map(\.id) == firstSeen)
        for (id, e) in model { #expect(table[id] == e && table.contains(id)) }
        for _ in 0..<200 {
            let other = rng.uuid()
            #expect(table.contains(other) == (model[other] != nil))
            #expect(table[other] == model[other])
        }
    }

    /// Two tables are equal when they hold the same entries, in whatever order they were
    /// recorded; one entry that differs (or one more) makes them unequal.
    @Test(arguments: 0..<8)
    func equalityIgnoresTheOrderOfRecording(_ seed: Int) {
        var rng = SeededRandom(seed: UInt64(seed) &+ 99)
        let entries = Self.ids(&rng, count: 1 + Int(rng.next() % 500)).enumerated().map { Self.entry($1, UInt64($0)) }
        var unique: [UUID: ProgressEntry] = [:]
        for e in entries { unique[e.id] = e }
        var a = RecordedEntries()
        for e in unique.values { a.record(e) }
        var b = RecordedEntries()
        b.reserveCapacity(unique.count)
        for e in unique.values.shuffled(using: &rng) { b.record(e) }
        #expect(a == b)
        #expect(RecordedEntries() == RecordedEntries())
        var changed = b
        let victim = unique.values.randomElement(using: &rng)!
        changed.record(Self.entry(victim.id, victim.hlc.rawValue &+ 1))
        #expect(changed != a)
        #expect(changed.count == a.count)
        var longer = b
        longer.record(Self.entry(rng.uuid(), 7))
        #expect(longer != a && a != longer)
    }
}
