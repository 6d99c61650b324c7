import Foundation
import Sodium

/// The signed hash chain of each origin's events.
///
/// Every event of a signing device carries `previousHash`, the hash of that device's previous
/// event (32 zero bytes before its first), so an origin's history is one chain; the last event
/// of each appended batch also carries the device's Ed25519 signature of its own hash. A valid
/// signature on an event vouches for every earlier event of the chain, so a store checks one
/// signature per origin and exchange, whatever the number of events.
public enum EventChain {
    /// The `previousHash` of a device's first event: 32 zero bytes.
    package static let genesis = [UInt8](repeating: 0, count: BLAKE2b.hashBytes)

    /// The event's hash: BLAKE2b-256 of its record without the signature (the record holds the
    /// previous hash, so the hash covers the whole chain before it).
    public static func hash(_ e: Event) -> [UInt8] {
        var unsigned = e
        unsigned.signature = nil
        unsigned.signer = nil
        return hash(record: EventCodec.encode(unsigned, checksum: false))
    }

    /// The hash of an unsigned event from its record (what follows the version and checksum).
    static func hash(record: [UInt8]) -> [UInt8] {
        record.withUnsafeBytes { hash(record: $0) }
    }

    static func hash(record: UnsafeRawBufferPointer) -> [UInt8] {
        BLAKE2b.hash(hashed(record))
    }

    /// `hash(record:)` written to the first 32 bytes of `out`, without an array.
    static func hash(record: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        BLAKE2b.hash(hashed(record), into: out)
    }

    /// What a record's hash covers: all but its version and checksum.
    private static func hashed(_ record: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: record[5...])
    }

    /// What a device signs: a domain tag, the ledger, the event's origin and sequence, and its
    /// hash (so a signature cannot be replayed in another ledger or at another place).
    public static func message(ledger: UUID, origin: String, sequence: UInt64, hash: [UInt8]) -> [UInt8] {
        Array("goal-ledger event chain 1".utf8) + [0] + ledger.bytes + Array(origin.utf8) + [0] + sequence.bigEndianBytes + hash
    }

    /// The id of a ledger founded by `device` holding `publicKey`: derived from both, so that
    /// every store can tell the founder's key (the ledger's first trust) without an enrolment.
    public static func ledgerID(founder device: String, publicKey: [UInt8]) -> UUID {
        var b = BLAKE2b.hash(Array("goal-ledger founder 1".utf8) + [0] + Array(device.utf8) + [0] + publicKey)
        b[6] = (b[6] & 0x0F) | 0x80  // version 8: a custom UUID
        b[8] = (b[8] & 0x3F) | 0x80  // the RFC 9562 variant
        return b.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }
    }

    /// A short fingerprint of a public key, for people to compare.
    public static func fingerprint(_ publicKey: [UInt8]) -> String {
        let h = Hex.string(BLAKE2b.hash(publicKey))
        return stride(from: 0, to: 16, by: 4).map { i in
            String(h[h.index(h.startIndex, offsetBy: i)..<h.index(h.startIndex, offsetBy: i + 4)])
        }.joined(separator: ":")
    }
}
