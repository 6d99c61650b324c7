import Foundation

/// Appends values in the ledger's binary forms: unsigned LEB128 varints, zig-zag signed varints,
/// big-endian fixed-width integers (sortable keys), length-prefixed UTF-8 strings.
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    mutating func u8(_ v: UInt8) { bytes.append(v) }

    mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func signed(_ v: Int64) { varint(UInt64(bitPattern: (v << 1) ^ (v >> 63))) }

    mutating func u64BE(_ v: UInt64) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }

    mutating func u32BE(_ v: UInt32) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }

    mutating func double(_ v: Double) { u64BE(v.bitPattern) }

    mutating func string(_ s: String) {
        let utf8 = s.utf8
        varint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    mutating func uuid(_ id: UUID) {
        withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
    }

    mutating func day(_ d: Day) { signed(Int64(d.daysSinceEpoch)) }
    mutating func instant(_ i: Instant) { signed(i.milliseconds) }
}

/// Why stored bytes could not be decoded.
package struct RecordDecodingError: Error, CustomStringConvertible, Sendable {
    public let reason: String
    public var description: String { reason }
}

/// Reads the forms `ByteWriter` writes, refusing truncated or out-of-range input.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { index == bytes.count }

    mutating func u8() throws(RecordDecodingError) -> UInt8 {
        guard index < bytes.count else { throw RecordDecodingError(reason: "truncated record") }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func varint() throws(RecordDecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try u8()
            guard shift < 64 else { throw RecordDecodingError(reason: "varint too long") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }

    mutating func signed() throws(RecordDecodingError) -> Int64 {
        let v = try varint()
        return Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1)))
    }

    mutating func u64BE() throws(RecordDecodingError) -> UInt64 {
        guard index + 8 <= bytes.count else { throw RecordDecodingError(reason: "truncated record") }
        var v: UInt64 = 0
        for i in 0..<8 { v = v << 8 | UInt64(bytes[index + i]) }
        index += 8
        return v
    }

    mutating func double() throws(RecordDecodingError) -> Double { Double(bitPattern: try u64BE()) }

    mutating func string() throws(RecordDecodingError) -> String {
        let count = Int(clamping: try varint())
        guard count <= bytes.count - index else { throw RecordDecodingError(reason: "truncated string") }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[index..<index + count])
        index += count
        guard let s = String(utf8: slice) else { throw RecordDecodingError(reason: "invalid UTF-8") }
        return s
    }

    /// Moves past `count` bytes.
    mutating func skip(_ count: Int) throws(RecordDecodingError) {
        guard count <= bytes.count - index else { throw RecordDecodingError(reason: "truncated record") }
        index += count
    }

    mutating func fixed(_ count: Int) throws(RecordDecodingError) -> [UInt8] {
        guard index + count <= bytes.count else { throw RecordDecodingError(reason: "truncated record") }
        defer { index += count }
        return Array(bytes[index..<index + count])
    }

    mutating func uuid() throws(RecordDecodingError) -> UUID {
        guard index + 16 <= bytes.count else { throw RecordDecodingError(reason: "truncated id") }
        let b = bytes
        let i = index
        index += 16
        return UUID(
            uuid: (
                b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7],
                b[i + 8], b[i + 9], b[i + 10], b[i + 11], b[i + 12], b[i + 13], b[i + 14], b[i + 15]
            ))
    }

    mutating func day() throws(RecordDecodingError) -> Day {
        let v = try signed()
        // Only a day an event can name (the gate's range): a damaged value must not reach the
        // calendar arithmetic.
        guard let d = Int32(exactly: v), Day.supported.contains(Day(daysSinceEpoch: d)) else {
            throw RecordDecodingError(reason: "day out of range")
        }
        return Day(daysSinceEpoch: d)
    }

    mutating func instant() throws(RecordDecodingError) -> Instant { Instant(milliseconds: try signed()) }
}

extension UUID {
    /// The 16 bytes of the id, as stored in keys.
    var bytes: [UInt8] { withUnsafeBytes(of: uuid) { Array($0) } }
}

extension UInt64 {
    /// Big-endian bytes: sort order of keys equals numeric order.
    var bigEndianBytes: [UInt8] {
        var w = ByteWriter(capacity: 8)
        w.u64BE(self)
        return w.bytes
    }

    init(bigEndianBytes b: UnsafeRawBufferPointer) {
        var v: UInt64 = 0
        for i in 0..<Swift.min(8, b.count) { v = v << 8 | UInt64(b[i]) }
        self = v
    }

    /// The value of a stored big-endian key or value (its first 8 bytes).
    init(bigEndianBytes b: [UInt8]) {
        self = b.withUnsafeBytes { UInt64(bigEndianBytes: $0) }
    }
}

/// The upper-case hex digits, by value: what ids and clock readings print with.
let upperHexDigits = Array("0123456789ABCDEF".utf8)

extension UUID {

    /// The upper-case string form, as `uuidString` prints it, without going through `snprintf`:
    /// digests and JSON output format millions of ids.
    public var upperString: String {
        String(unsafeUninitializedCapacity: 36) { out in
            writeUpper(out)
            return 36
        }
    }

    /// Appends the bytes of `upperString` to `out` without making a string.
    func writeUpper(into out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: 36))
        out.withUnsafeMutableBufferPointer { writeUpper(UnsafeMutableBufferPointer(rebasing: $0[start...])) }
    }

    private func writeUpper(_ out: UnsafeMutableBufferPointer<UInt8>) {
        withUnsafeBytes(of: uuid) { b in
            var j = 0
            for i in 0..<16 {
                if i == 4 || i == 6 || i == 8 || i == 10 {
                    out[j] = UInt8(ascii: "-")
                    j += 1
                }
                out[j] = upperHexDigits[Int(b[i] >> 4)]
                out[j + 1] = upperHexDigits[Int(b[i] & 0xF)]
                j += 2
            }
        }
    }

    /// Parses the 36-character form `XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX` (hex digits in either
    /// case), as `UUID(uuidString:)` does, without its formatted scanning.
    package static func parse(_ text: String) -> UUID? {
        if let parsed = text.utf8.withContiguousStorageIfAvailable(parse(utf8:)) { return parsed }
        return Array(text.utf8).withUnsafeBufferPointer(parse(utf8:))
    }

    /// `parse` of a text's UTF-8 bytes. Each digit's value comes from a table (`Hex.values`),
    /// without a branch on whether it is a digit or a letter, which random ids mispredict.
    package static func parse(utf8 s: UnsafeBufferPointer<UInt8>) -> UUID? {
        let dash = UInt8(ascii: "-")
        guard s.count == 36, s[8] == dash, s[13] == dash, s[18] == dash, s[23] == dash else { return nil }
        return Hex.values.withUnsafeBufferPointer { values -> UUID? in
            var high: UInt64 = 0
            var low: UInt64 = 0
            // Any byte that is not a hex digit has its table value's high bit set.
            var notDigits: UInt8 = 0
            var i = 0
            for n in 0..<32 {
                if i == 8 || i == 13 || i == 18 || i == 23 { i += 1 }
                let value = values[Int(s[i])]
                notDigits |= value
                if n < 16 {
                    high = high << 4 | UInt64(value & 0xF)
                } else {
                    low = low << 4 | UInt64(value & 0xF)
                }
                i += 1
            }
            guard notDigits & 0x80 == 0 else { return nil }
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &bytes) { out in
                out.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
                out.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            return UUID(uuid: bytes)
        }
    }

    /// Orders ids as their string forms order (hex digits sort as the bytes they encode).
    package static func precedes(_ a: UUID, _ b: UUID) -> Bool {
        withUnsafeBytes(of: a.uuid) { x in withUnsafeBytes(of: b.uuid) { y in x.lexicographicallyPrecedes(y) } }
    }
}

/// Lower-case hexadecimal, for keys, hashes and signatures in JSON.
package enum Hex {
    /// Each byte's value as a hexadecimal digit (either case), and 0xFF for every other byte.
    static let values: [UInt8] = (0...255).map { c in digit(UInt8(c)) ?? 0xFF }

    /// The value of one hexadecimal digit, in either case; nil for any other byte.
    public static func digit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    public static func string(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func bytes(_ text: String) -> [UInt8]? {
        let b = Array(text.utf8)
        guard b.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < b.count {
            guard let hi = digit(b[i]), let lo = digit(b[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}

/// A 16-byte id as two integers that order as its bytes do.
struct IDWords: Comparable, Hashable {
    let high: UInt64
    let low: UInt64

    init(_ id: UUID) {
        (high, low) = withUnsafeBytes(of: id.uuid) {
            (UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)), UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }

    init(_ bytes: UnsafeRawBufferPointer) {
        high = UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
        low = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    var uuid: UUID {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) {
            $0.storeBytes(of: high.bigEndian, as: UInt64.self)
            $0.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: bytes)
    }

    /// The 16 bytes.
    var bytes: [UInt8] { high.bigEndianBytes + low.bigEndianBytes }

    /// Runs `body` with the 16 bytes, on the stack.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: (high.bigEndian, low.bigEndian), body)
    }

    /// Appends the 16 bytes.
    func write(into out: inout [UInt8]) {
        withUnsafeBytes(of: high.bigEndian) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: low.bigEndian) { out.append(contentsOf: $0) }
    }

    static func < (a: IDWords, b: IDWords) -> Bool { a.high != b.high ? a.high < b.high : a.low < b.low }
}

extension String {
    /// The string `bytes` encode, or nil when they are not valid UTF-8: what
    /// `String(validating:as:)` gives, without its generic detour. Decoding repairs invalid
    /// UTF-8, so the string's bytes then differ from the input; text of ASCII alone (most of it)
    /// needs no comparison.
    init?(utf8 bytes: UnsafeRawBufferPointer) {
        let s = String(decoding: bytes, as: UTF8.self)
        guard bytes.allSatisfy({ $0 < 0x80 }) || s.utf8.elementsEqual(bytes) else { return nil }
        self = s
    }
}

extension ByteWriter {
    /// An amount or target (within ±10^18 millionths) as the projection stores it: its
    /// millionths without their trailing decimal zeros (up to six: `k`), zig-zagged, times 8,
    /// plus `k`, as one varint. A whole number below 8 takes one byte (4 is 4·10^6 millionths:
    /// 4 and k = 6, stored as 70), where its millionths took four.
    mutating func amount(_ a: Amount) {
        var m = Int64(clamping: a.micros)
        var k: UInt64 = 0
        while k < 6, m != 0, m % 10 == 0 {
            m /= 10
            k += 1
        }
        // |m| ≤ 10^18 after clamping: its zig-zag is below 2^61, so times 8 it fits.
        varint(UInt64(bitPattern: (m << 1) ^ (m >> 63)) << 3 | k)
    }
}

extension ByteReader {
    /// An amount `ByteWriter.amount` wrote; refused when its count of zeros is over six, or
    /// its millionths overflow or lie beyond ±10^18.
    mutating func amount() throws(RecordDecodingError) -> Amount {
        let v = try varint()
        let k = v & 7
        guard k <= 6 else { throw RecordDecodingError(reason: "an amount with \(k) trailing zeros") }
        let zz = v >> 3
        var m = Int64(bitPattern: (zz >> 1) ^ (0 &- (zz & 1)))
        for _ in 0..<k {
            let (scaled, overflow) = m.multipliedReportingOverflow(by: 10)
            guard !overflow else { throw RecordDecodingError(reason: "an amount beyond ±1e12") }
            m = scaled
        }
        guard m.magnitude <= UInt64(Amount.maximumMicros) else { throw RecordDecodingError(reason: "an amount beyond ±1e12") }
        return Amount(unchecked: Int128(m))
    }
}
