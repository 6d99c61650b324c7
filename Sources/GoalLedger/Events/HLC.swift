import Foundation

/// The position of an event in canonical order: hybrid logical clock, then origin device.
public struct CanonicalKey: Comparable, Hashable, Sendable {
    /// The event's clock reading.
    public var hlc: HLC
    /// The event's origin device, which breaks ties between equal readings (by UTF-8 bytes).
    public var device: String
    /// Whether `a` comes before `b`: the earlier clock reading, then the device name by UTF-8 bytes.
    public static func < (a: CanonicalKey, b: CanonicalKey) -> Bool {
        a.hlc != b.hlc ? a.hlc < b.hlc : a.device.utf8.lexicographicallyPrecedes(b.device.utf8)
    }
}

/// A hybrid logical clock reading: 48 bits of milliseconds and a 16-bit counter.
public struct HLC: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The reading as stored: milliseconds in the high 48 bits, the counter in the low 16.
    public var rawValue: UInt64
    /// The reading stored as `rawValue`.
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// The reading at `milliseconds` since 1970 (a negative value counts as 0) with `counter`.
    public init(milliseconds: Int64, counter: UInt16) {
        rawValue = UInt64(clamping: max(0, milliseconds)) << 16 | UInt64(counter)
    }
    /// The wall-clock part, in milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64 { Int64(rawValue >> 16) }
    /// Orders readings within one millisecond.
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }
    /// Whether `a` is the earlier reading.
    public static func < (a: HLC, b: HLC) -> Bool { a.rawValue < b.rawValue }

    /// The latest reading an event may carry: the last millisecond of 9999 (the end of
    /// `Instant.supported`) with the largest counter. The gate refuses an event whose clock is
    /// later, so no reading a store holds or writes comes near the end of the 64 bits.
    public static let latest = HLC(milliseconds: Instant.supported.upperBound.milliseconds, counter: .max)

    /// Whether the reading lies within the years the ledger supports (at most ``latest``).
    public var isSupported: Bool { self <= .latest }

    /// The next reading after `self` for a local event at wall time `now`: never earlier than
    /// `now`, later than `self` unless `self` is the largest 64-bit value, where it stays (it
    /// never traps; a reading past ``latest`` is refused by the gate before it is written).
    public func advanced(to now: Instant) -> HLC {
        let wall = HLC(milliseconds: now.milliseconds, counter: 0)
        return wall > self ? wall : HLC(rawValue: rawValue == .max ? rawValue : rawValue + 1)
    }

    /// Sixteen hex digits: sorts as the clock does, and survives JSON readers that lose
    /// precision past 2^53.
    public var description: String {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        writeHex(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the bytes of `description` to `out` without making a string.
    func writeHex(into out: inout [UInt8]) {
        for shift in stride(from: 60, through: 0, by: -4) { out.append(upperHexDigits[Int(rawValue >> UInt64(shift) & 0xF)]) }
    }

    /// The reading printed as `description`; nil unless `hex` is exactly 16 hex digits.
    public init?(hex: String) {
        guard hex.count == 16, let v = UInt64(hex, radix: 16) else { return nil }
        rawValue = v
    }
}
