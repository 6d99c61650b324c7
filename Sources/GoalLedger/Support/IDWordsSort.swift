extension Array {
    /// Sorts the elements in ascending order of `key`, stably: elements of equal keys keep
    /// their order.
    ///
    /// A batch's ids are random 128-bit values; a comparison sort of ten thousand of them makes
    /// some 130,000 calls to a comparing closure. This sorts them in linear time instead: a
    /// radix sort of the keys' high words, a byte a pass from the least significant, each pass
    /// a stable counting sort, and a byte every key shares (ids made by the library share their
    /// clock's top bytes) skipped; then each run of equal high words ordered by the low word.
    /// Few elements are sorted by insertion.
    mutating func sortStably(byIDWords key: (Element) -> IDWords) {
        guard !isSorted(byIDWords: key) else { return }
        let order = sortedIndices(byIDWords: key)
        let old = self
        self = [Element](unsafeUninitializedCapacity: count) { out, initialized in
            for (i, from) in order.enumerated() { out.initializeElement(at: i, to: old[from]) }
            initialized = order.count
        }
    }

    /// Whether the elements are in ascending order of `key` (a sort leaves them as they are):
    /// one pass, which random keys leave at their first descent.
    func isSorted(byIDWords key: (Element) -> IDWords) -> Bool {
        var i = 1
        while i < count {
            if key(self[i]) < key(self[i - 1]) { return false }
            i += 1
        }
        return true
    }

    /// The elements' indices in ascending order of `key`, stably (`sortStably`'s order).
    func sortedIndices(byIDWords key: (Element) -> IDWords) -> [Int] {
        let n = count
        var order = Array<Int>(0..<n)
        guard n >= 64 else {
            order.insertionSort(in: 0..<n) { key(self[$0]) }
            return order
        }
        precondition(n <= Int(UInt32.max), "too many elements to sort by index")
        // The high words with each element's index, sorted by the high words.
        var slots = [(high: UInt64, index: UInt32)](unsafeUninitializedCapacity: n) { out, initialized in
            for i in 0..<n { out.initializeElement(at: i, to: (key(self[i]).high, UInt32(truncatingIfNeeded: i))) }
            initialized = n
        }
        Self.radixSort(&slots)
        for i in 0..<n { order[i] = Int(slots[i].index) }
        // Equal high words (rare among random ids), then by the low word, their order kept.
        var start = 0
        for i in 1...n where i == n || slots[i].high != slots[start].high {
            if i - start > 1 { order.insertionSort(in: start..<i) { key(self[$0]) } }
            start = i
        }
        return order
    }

    /// A stable insertion sort of `range` by `key`.
    private mutating func insertionSort(in range: Range<Int>, _ key: (Element) -> IDWords) {
        for i in range.dropFirst() {
            let moving = self[i]
            let k = key(moving)
            var j = i
            while j > range.lowerBound, k < key(self[j - 1]) {
                self[j] = self[j - 1]
                j -= 1
            }
            if j != i { self[j] = moving }
        }
    }

    /// Sorts `slots` by `high`, stably: least significant byte first, a pass per byte whose
    /// value is not the same in every slot.
    private static func radixSort(_ slots: inout [(high: UInt64, index: UInt32)]) {
        let n = slots.count
        // Every byte's counts, in one read.
        var counts = [Int](repeating: 0, count: 8 * 256)
        for s in slots {
            var h = s.high
            for b in 0..<8 {
                counts[b &* 256 &+ Int(h & 0xFF)] &+= 1
                h >>= 8
            }
        }
        var other = slots
        for b in 0..<8 {
            let base = b * 256
            let first = Int((slots[0].high >> UInt64(8 * b)) & 0xFF)
            if counts[base + first] == n { continue }
            // Where each byte value's slots start.
            var next = 0
            for v in 0..<256 {
                let c = counts[base + v]
                counts[base + v] = next
                next += c
            }
            let shift = UInt64(8 * b)
            slots.withUnsafeBufferPointer { from in
                other.withUnsafeMutableBufferPointer { to in
                    counts.withUnsafeMutableBufferPointer { at in
                        for s in from {
                            let v = base &+ Int((s.high &>> shift) & 0xFF)
                            to[at[v]] = s
                            at[v] &+= 1
                        }
                    }
                }
            }
            swap(&slots, &other)
        }
    }
}
