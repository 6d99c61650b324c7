import Foundation

/// A goal's place in the person's order: a fraction in base 256, its digits compared byte by
/// byte (so a key sorts before every longer key it begins), never ending in a zero byte (so no
/// two keys mean the same place). A `goalMoved` writes one, computed by the store at append
/// between the keys of the goals it lands between; the gate bounds it to
/// ``maximumLength`` bytes.
///
/// A goal never moved sorts as if it had the key `FF` followed by its creation's clock reading
/// (8 bytes, big-endian, trailing zero bytes left out): after every key the store makes below `FF`, and among goals created
/// later in the order of their creation, so new goals go last.
public struct PositionKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The key's bytes: 1 to ``maximumLength``, the last one not zero.
    public let bytes: [UInt8]

    /// The longest key the gate accepts. A move that would need a longer one renumbers the goals
    /// instead (see ``LedgerWriter/moveGoal(_:after:now:)``).
    public static let maximumLength = 32

    /// A key of `bytes`, unchecked (the gate checks a key that comes from outside).
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The key written as lowercase hex (two digits a byte), or nil for text that is not.
    public init?(hex: String) {
        guard let b = Hex.bytes(hex) else { return nil }
        bytes = b
    }

    /// Lowercase hex, two digits a byte: the key's JSON form.
    public var description: String { Hex.string(bytes) }

    /// Orders keys by their bytes.
    public static func < (a: PositionKey, b: PositionKey) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    /// Checks the limits of a key read from outside, naming `field`.
    func check(field: String) throws(FieldError) {
        guard (1...Self.maximumLength).contains(bytes.count) else {
            throw FieldError(
                field, "must be 1 to \(Self.maximumLength) bytes (2 to \(2 * Self.maximumLength) hex digits), got \(bytes.count)")
        }
        guard bytes.last != 0 else { throw FieldError(field, "must not end in a zero byte (00)") }
    }

    // MARK: Making keys

    /// The key a goal never moved sorts by: `FF`, then the clock reading of its creation, its
    /// trailing zero bytes left out (they do not change the fraction, nor the order).
    static func unmoved(createdAt hlc: HLC) -> PositionKey {
        var b = [0xFF] + hlc.rawValue.bigEndianBytes
        while b.last == 0 { b.removeLast() }
        return PositionKey(b)
    }

    /// The shortest key strictly between `low` (nil: the start) and `high`, digit by digit; nil
    /// when none exists (`low` is not below `high`). The result may be longer than
    /// ``maximumLength``: the caller renumbers then.
    static func between(_ low: PositionKey?, _ high: PositionKey) -> PositionKey? {
        let lo = low?.bytes ?? []
        let hi = high.bytes
        guard lo.lexicographicallyPrecedes(hi) else { return nil }
        var out: [UInt8] = []
        var bounded = true
        var i = 0
        while true {
            let l = i < lo.count ? Int(lo[i]) : 0
            let h = bounded ? (i < hi.count ? Int(hi[i]) : 0) : 256
            if h - l > 1 {
                out.append(UInt8((l + h) / 2))
                return PositionKey(out)
            }
            out.append(UInt8(l))
            // One digit below `high` here: every later digit only has to exceed `low`'s.
            if h - l == 1 { bounded = false }
            i += 1
            // Past both keys with the bound still on would mean `low` == `high`: excluded above.
            if i > max(lo.count, hi.count) + 1 { return nil }
        }
    }

    /// The shortest key just after `low` that sorts before every key `low` does not begin:
    /// `low` with one digit more, `80`.
    static func justAfter(_ low: PositionKey) -> PositionKey { PositionKey(low.bytes + [0x80]) }

    /// `count` keys in increasing order, evenly spread below `FF` with room between them: what a
    /// renumbering writes. Each is as short as the count allows.
    static func spread(_ count: Int) -> [PositionKey] {
        guard count > 0 else { return [] }
        // The width (bytes) leaves at least 256 values between neighbours.
        var width = 1
        while width < 7, (UInt64(0xFE) << (8 * UInt64(width - 1))) / UInt64(count + 1) < 256 { width += 1 }
        let range = UInt64(0xFE) << (8 * UInt64(width - 1))
        let step = range / UInt64(count + 1)
        return (1...count).map { i in
            var b = Array((UInt64(i) * step).bigEndianBytes.suffix(width))
            while b.last == 0 { b.removeLast() }
            return PositionKey(b)
        }
    }
}
