import Foundation

/// The stored form of an event.
///
///     byte 0       codec version (1 or 2)
///     bytes 1…4    CRC-32C of everything after it, little-endian
///     id (16) · hlc (8, big-endian) · at (zig-zag varint ms) · sequence (varint)
///     · origin (string) · schema (1) · type (1) · payload
///     version 2 only, after the payload: flags (varint: 1 deletionsSeen, 2 previousHash,
///     4 signature), then deletionsSeen (varint count, then device (string) · sequence
///     (varint), devices in UTF-8 byte order) · previousHash (32) · signer's public key (32)
///     and signature (64)
///
/// An event that carries none of those is written as version 1, one that carries any as
/// version 2, so a record decoded and encoded again keeps its bytes whichever ledger wrote it.
///
/// Payload fields are written in a fixed order per type; optional fields are announced by a
/// presence bitmask (varint) that comes first. New optional fields take new bits, so older
/// records stay readable; a change of layout takes a new codec version.
package enum EventCodec {
    public static let version: UInt8 = 2

    public static func encode(_ e: Event) -> [UInt8] { encode(e, checksum: true) }

    /// The record; without `checksum`, its checksum bytes are left zero (for hashing, which
    /// covers only what follows them).
    static func encode(_ e: Event, checksum: Bool) -> [UInt8] {
        // Room for a progress record at once (about 90 bytes, 32 more with the chain's hash),
        // so that the common record is not copied to a larger buffer as it is written.
        var w = ByteWriter(capacity: e.previousHash == nil ? 112 : 144)
        let extended = e.deletionsSeen != nil || e.previousHash != nil || e.signature != nil
        w.u8(extended ? 2 : 1)
        w.u8(0)
        w.u8(0)
        w.u8(0)
        w.u8(0)
        w.uuid(e.id)
        w.u64BE(e.hlc.rawValue)
        w.instant(e.at)
        w.varint(e.sequence)
        w.string(e.origin)
        w.u8(e.schema)
        w.u8(e.type.rawValue)
        e.payload.visit(&w)
        if extended {
            w.varint((e.deletionsSeen == nil ? 0 : 1) | (e.previousHash == nil ? 0 : 2) | (e.signature == nil ? 0 : 4))
            if let seen = e.deletionsSeen {
                w.varint(UInt64(seen.count))
                for (device, sequence) in seen.sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
                    w.string(device)
                    w.varint(sequence)
                }
            }
            if let h = e.previousHash { w.bytes.append(contentsOf: h) }
            if let s = e.signature {
                w.bytes.append(contentsOf: e.signer ?? [UInt8](repeating: 0, count: 32))
                w.bytes.append(contentsOf: s)
            }
        }
        guard checksum else { return w.bytes }
        let crc = w.bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[5...])) }
        for i in 0..<4 { w.bytes[1 + i] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * i)) }
        return w.bytes
    }

    /// Decodes a stored record, checking its checksum first.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) -> Event {
        try decode(bytes, keepingChain: true)
    }

    /// `decode`, checking the chain fields (previous hash, signer, signature) but, unless
    /// `keepingChain`, leaving them out of the event: a fold never reads them, and each would be
    /// an allocation per event. With `checksumKnownGood`, the checksum is not checked again: for
    /// bytes whose checksum the caller has already checked in the same snapshot (`verify`'s
    /// second read of a record); everything else is checked as ever.
    package static func decode(
        _ bytes: UnsafeRawBufferPointer, keepingChain: Bool, checksumKnownGood: Bool = false
    ) throws(RecordDecodingError) -> Event {
        guard bytes.count >= 5 else { throw RecordDecodingError(reason: "record shorter than its header") }
        let recordVersion = bytes[0]
        guard (1...version).contains(recordVersion) else { throw RecordDecodingError(reason: "unknown codec version \(bytes[0])") }
        let stored = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[1 + $1]) << UInt32(8 * $1) }
        guard checksumKnownGood || CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[5...])) == stored else {
            throw RecordDecodingError(reason: "checksum mismatch")
        }
        var r = ByteReader(bytes)
        r.index = 5
        let id = try r.uuid()
        let hlc = HLC(rawValue: try r.u64BE())
        let at = try r.instant()
        let sequence = try r.varint()
        guard sequence <= Event.largestSequence else {
            throw RecordDecodingError(reason: "origin sequence \(sequence) is past the largest a store holds (\(Event.largestSequence))")
        }
        let origin = try r.string()
        let schema = try r.u8()
        let code = try r.u8()
        guard let type = EventType(rawValue: code) else { throw RecordDecodingError(reason: "unknown event type \(code)") }
        let payload = try type.make(&r)
        var deletionsSeen: [String: UInt64]?
        var previousHash: [UInt8]?
        var signature: [UInt8]?
        var signer: [UInt8]?
        if recordVersion >= 2 {
            let flags = try r.varint()
            guard flags != 0, flags < 8 else { throw RecordDecodingError(reason: "unknown record extensions \(flags)") }
            if flags & 1 != 0 {
                var seen: [String: UInt64] = [:]
                let count = try r.varint()
                guard count <= UInt64(r.bytes.count - r.index) else {
                    throw RecordDecodingError(reason: "deletionsSeen count beyond the record")
                }
                for _ in 0..<count {
                    let device = try r.string()
                    guard seen[device] == nil else { throw RecordDecodingError(reason: "deletionsSeen names \(device) twice") }
                    let sequence = try r.varint()
                    guard sequence <= Event.largestSequence else {
                        throw RecordDecodingError(
                            reason:
                                "deletionsSeen sequence \(sequence) of \(device) is past the largest a store holds (\(Event.largestSequence))"
                        )
                    }
                    seen[device] = sequence
                }
                deletionsSeen = seen
            }
            if keepingChain {
                if flags & 2 != 0 { previousHash = try r.fixed(32) }
                if flags & 4 != 0 {
                    signer = try r.fixed(32)
                    signature = try r.fixed(64)
                }
            } else {
                try r.skip((flags & 2 != 0 ? 32 : 0) + (flags & 4 != 0 ? 96 : 0))
            }
        }
        guard r.isAtEnd else { throw RecordDecodingError(reason: "trailing bytes after the payload") }
        return Event(
            id: id, origin: origin, sequence: sequence, hlc: hlc, at: at, schema: schema, payload: payload, deletionsSeen: deletionsSeen,
            previousHash: previousHash, signature: signature, signer: signer)
    }

    /// The origin and sequence a record names, read from its envelope alone: its checksum and
    /// the rest are checked when it is decoded.
    static func place(of bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) -> (origin: String, sequence: UInt64) {
        guard bytes.count >= 5 else { throw RecordDecodingError(reason: "record shorter than its header") }
        guard (1...version).contains(bytes[0]) else { throw RecordDecodingError(reason: "unknown codec version \(bytes[0])") }
        var r = ByteReader(bytes)
        r.index = 5
        try r.skip(16 + 8)
        _ = try r.instant()
        let sequence = try r.varint()
        guard sequence <= Event.largestSequence else {
            throw RecordDecodingError(reason: "origin sequence \(sequence) is past the largest a store holds (\(Event.largestSequence))")
        }
        return (try r.string(), sequence)
    }

    public static func decode(_ bytes: [UInt8]) throws(RecordDecodingError) -> Event {
        do {
            return try bytes.withUnsafeBytes { try decode($0) }
        } catch let e as RecordDecodingError {
            throw e
        } catch {
            throw RecordDecodingError(reason: "\(error)")
        }
    }
}

/// The presence bitmask a payload's stored form starts with: one bit per optional field (or
/// per fact, such as "cleared"), in the order the fields are marked.
struct Presence {
    var bits: UInt64 = 0
    private var next: UInt64 = 1
    mutating func mark(_ present: Bool) {
        if present { bits |= next }
        next <<= 1
    }
}

/// Reads a presence bitmask, bit by bit in the order `Presence` marked them.
struct PresenceReader {
    let bits: UInt64
    private var next: UInt64 = 1
    init(_ bits: UInt64) { self.bits = bits }
    mutating func take() -> Bool {
        defer { next <<= 1 }
        return bits & next != 0
    }
}

extension ByteWriter {
    /// A list of strings (reminder devices): a count, then each string.
    mutating func strings(_ list: [String]) {
        varint(UInt64(list.count))
        for s in list { string(s) }
    }
}

extension ByteReader {
    /// A list `ByteWriter.strings` wrote (at most 256).
    mutating func strings() throws(RecordDecodingError) -> [String] {
        let n = try varint()
        guard n <= 256 else { throw RecordDecodingError(reason: "list too long") }
        var out: [String] = []
        for _ in 0..<n { out.append(try string()) }
        return out
    }

    /// The count of a list that follows (at most 2^20).
    mutating func count() throws(RecordDecodingError) -> Int {
        let n = try varint()
        guard n <= 1 << 20 else { throw RecordDecodingError(reason: "list too long") }
        return Int(n)
    }
}

/// The payload part of a record: the payload type writes it.
extension ByteWriter: PayloadVisitor {
    mutating func visit<P: EventPayload>(_ payload: P, as type: EventType) { payload.encode(into: &self) }
}

/// The payload part of a record: the payload type reads it.
extension ByteReader: PayloadMaker {
    mutating func make<P: EventPayload>(_: P.Type) throws(RecordDecodingError) -> P { try P(binary: &self) }
}
