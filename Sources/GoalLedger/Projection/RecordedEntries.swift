import Foundation

/// The entries of a goal's `progressRecorded` events, removed ones included, found by their
/// event's id: ``GoalState/recordedEntries``.
///
/// The entries are kept in one array, in the order they were folded (``values``); an index of
/// open addressing finds an entry by id. Two tables are equal when they hold the same entries,
/// whatever the order they were folded in.
///
/// The index hashes an id with a key drawn at random once per process, so that ids chosen by
/// someone who does not know the key cannot be made to collide (the ids come from other devices'
/// events).
public struct RecordedEntries: Equatable, Sendable {
    /// The entries, in the order they were folded (an entry folded again keeps its place).
    public private(set) var values: [ProgressEntry] = []
    /// For each slot, 0 when empty, else the place in `values` of the entry hashed there, plus 1.
    private var slots: [UInt32] = []
    /// The hash's key (`processKey`, held here so that hashing does not look it up).
    private let key = processKey

    /// The key of every table's hash in this process.
    private static let processKey: (UInt64, UInt64) = {
        var random = SystemRandomNumberGenerator()
        return (random.next(), random.next())
    }()

    /// An empty table.
    public init() {}

    /// How many entries the table holds.
    public var count: Int { values.count }
    /// Whether the table holds no entry.
    public var isEmpty: Bool { values.isEmpty }

    /// The entry of the `progressRecorded` event `id`, if the table holds it.
    public subscript(id: UUID) -> ProgressEntry? {
        guard let place = place(of: id) else { return nil }
        return values[place]
    }

    /// Whether the table holds the entry of event `id`.
    public func contains(_ id: UUID) -> Bool { place(of: id) != nil }

    /// Adds `entry`, or replaces the entry of the same id (which keeps its place).
    mutating func record(_ entry: ProgressEntry) {
        if (values.count + 1) * 2 > slots.count { grow(to: values.count + 1) }
        let found = probe(Self.words(entry.id))
        if let place = found.place {
            values[place] = entry
        } else {
            slots[found.slot] = UInt32(values.count + 1)
            values.append(entry)
        }
    }

    /// Makes room for `count` entries in all, so that none of them moves the table again.
    mutating func reserveCapacity(_ count: Int) {
        guard count > 0 else { return }
        values.reserveCapacity(count)
        if count * 2 > slots.count { grow(to: count) }
    }

    public static func == (l: RecordedEntries, r: RecordedEntries) -> Bool {
        l.count == r.count && l.values.allSatisfy { r[$0.id] == $0 }
    }

    /// The place in `values` of the entry of event `id`.
    private func place(of id: UUID) -> Int? {
        slots.isEmpty ? nil : probe(Self.words(id)).place
    }

    /// Where the index holds the entry whose id has `words`: its slot and its place in
    /// `values`; or, when it holds none, the empty slot it would take. The index is not empty.
    private func probe(_ words: (UInt64, UInt64)) -> (slot: Int, place: Int?) {
        var slot = hash(words) & (slots.count - 1)
        while true {
            let held = slots[slot]
            if held == 0 { return (slot, nil) }
            let place = Int(held) - 1
            if Self.words(values[place].id) == words { return (slot, place) }
            slot = (slot + 1) & (slots.count - 1)
        }
    }

    /// An index of at least twice `count` slots (a power of two) holding every entry.
    private mutating func grow(to count: Int) {
        // Slots are numbered in 32 bits: a goal's entries fit in memory long before they run out.
        precondition(count < Int(UInt32.max), "a goal's entries outnumber what the table can index")
        var size = max(16, slots.count)
        while size < count * 2 { size *= 2 }
        slots = [UInt32](repeating: 0, count: size)
        // The entries' ids differ: each finds an empty slot.
        for place in values.indices { slots[probe(Self.words(values[place].id)).slot] = UInt32(place + 1) }
    }

    /// The id's 16 bytes as two words.
    private static func words(_ id: UUID) -> (UInt64, UInt64) {
        withUnsafeBytes(of: id.uuid) { ($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
    }

    /// The keyed hash of an id's words: the two halves of one full-width product of the words,
    /// each mixed with half of the key, folded together.
    private func hash(_ words: (UInt64, UInt64)) -> Int {
        let product = (words.0 ^ key.0).multipliedFullWidth(by: words.1 ^ key.1)
        return Int(truncatingIfNeeded: product.high ^ product.low)
    }
}
