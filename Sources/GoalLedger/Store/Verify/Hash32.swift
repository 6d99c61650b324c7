import Foundation

/// 32 bytes as four integers (a BLAKE2b hash; a value of another length compares unequal to
/// every hash, as its bytes would).
struct Hash32: Equatable {
    let words: (UInt64, UInt64, UInt64, UInt64)
    let valid: Bool

    init(_ bytes: [UInt8]) {
        valid = bytes.count == 32
        words = valid ? bytes.withUnsafeBytes { b in
            (b.loadUnaligned(as: UInt64.self), b.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
             b.loadUnaligned(fromByteOffset: 16, as: UInt64.self), b.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        } : (0, 0, 0, 0)
    }

    /// `EventChain.hash(record:)` of `record`, without the array it makes.
    init(hashOfRecord record: UnsafeRawBufferPointer) {
        var w: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &w) { EventChain.hash(record: record, into: $0) }
        words = w
        valid = true
    }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        withUnsafeBytes(of: words) { out.append(contentsOf: $0) }
        return out
    }

    static func == (a: Hash32, b: Hash32) -> Bool { a.valid && b.valid && a.words == b.words }
}
