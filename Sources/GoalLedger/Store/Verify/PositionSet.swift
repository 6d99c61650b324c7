/// A set of log positions as a bitmap: one bit for each position up to the largest inserted
/// (about 122 KiB for a million positions). `verify` keeps in it the positions of the events
/// its goal walk need not read again.
struct PositionSet: Sendable {
    private var words: [UInt64] = []

    mutating func insert(_ position: UInt64) {
        let (word, bit) = Self.place(position)
        if word >= words.count { words.append(contentsOf: repeatElement(0, count: max(word + 1 - words.count, words.count))) }
        words[word] |= bit
    }

    func contains(_ position: UInt64) -> Bool {
        let (word, bit) = Self.place(position)
        return word < words.count && words[word] & bit != 0
    }

    /// The word holding `position`'s bit, and the bit. A position beyond what an array can
    /// index is in a word past every array's end (never stored).
    private static func place(_ position: UInt64) -> (word: Int, bit: UInt64) {
        (Int(clamping: position >> 6), 1 << (position & 63))
    }
}
