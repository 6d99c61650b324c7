import CChecksum
import Sodium
/// CRC-32C (Castagnoli), used to detect damaged event records: with the CPU's CRC32
/// instruction where present, else a portable table (both in `CChecksum`, tested equal).
package enum CRC32C {
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        ledger_crc32c(0, bytes.baseAddress, bytes.count)
    }

    static func portableChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        ledger_crc32c_portable(0, bytes.baseAddress, bytes.count)
    }

    static var usesHardware: Bool { ledger_crc32c_is_hardware() != 0 }
}

/// SHA-256 (FIPS 180-4), for projection digests and export files: libsodium's, fed in pieces,
/// so that a large projection is hashed goal by goal.
struct SHA256 {
    private var hash = Sodium.SHA256Hash()

    mutating func update(_ data: some Sequence<UInt8>) {
        let handled: Void? = data.withContiguousStorageIfAvailable { hash.update(UnsafeRawBufferPointer($0)) }
        if handled == nil {
            let copy = Array(data)
            copy.withUnsafeBytes { hash.update($0) }
        }
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) { hash.update(bytes) }

    mutating func finalize() -> [UInt8] { hash.finalize() }

    /// SHA-256 of `bytes` into `out` (32 bytes), in one call without allocating: with the CPU's
    /// SHA extensions where present (`CChecksum`), else libsodium's (tested equal).
    static func hash(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= 32)
        if ledger_sha256(bytes.baseAddress, bytes.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0 {
            Sodium.SHA256Hash.hash(bytes, into: out)
        }
    }

    /// `hash` of two messages, `a` into `outA` and `b` into `outB`: with the CPU's SHA
    /// extensions, both at once (their rounds interleaved, when they are as many blocks long),
    /// else one after the other.
    static func hashPair(
        _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, into outA: UnsafeMutableRawBufferPointer,
        _ outB: UnsafeMutableRawBufferPointer
    ) {
        precondition(outA.count >= 32 && outB.count >= 32)
        let done = ledger_sha256_pair(
            a.baseAddress, a.count, b.baseAddress, b.count, outA.baseAddress!.assumingMemoryBound(to: UInt8.self),
            outB.baseAddress!.assumingMemoryBound(to: UInt8.self))
        if done == 0 {
            Sodium.SHA256Hash.hash(a, into: outA)
            Sodium.SHA256Hash.hash(b, into: outB)
        }
    }

    /// libsodium's SHA-256 alone (for tests that compare the two paths).
    static func portableHash(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        Sodium.SHA256Hash.hash(bytes, into: out)
    }

    static var usesHardware: Bool { ledger_sha256_is_hardware() != 0 }

    static func hex(_ data: some Sequence<UInt8>) -> String {
        var h = SHA256()
        h.update(data)
        return hexString(h.finalize())
    }

    static func hexString(_ digest: [UInt8]) -> String {
        String(decoding: digest.flatMap { [JSONWriter.hexDigits[Int($0 >> 4)], JSONWriter.hexDigits[Int($0 & 0xF)]] }, as: UTF8.self)
    }
}
