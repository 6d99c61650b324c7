import Foundation

/// What a store holds of each origin: its last sequence and the chain hash of that event. A peer
/// sends its state; the other side answers with the ``ChangeSet`` the peer lacks.
///
/// Its byte form (``encoded()``), version 1, for any transport:
///
///     "GOALHEAD" · version (1) · ledger id (16) · origin count (varint)
///     count × ( origin name (varint length · UTF-8) · last sequence (varint) · hash (32) )
///
/// Origins in UTF-8 byte order. The hash is that of the origin's last event as its chain
/// records it (BLAKE2b-256; 32 zero bytes for an event its origin did not chain).
public struct SyncState: Equatable, Sendable {
    /// One origin's last event as a store holds it.
    public struct Head: Equatable, Sendable {
        /// Its origin sequence.
        public var sequence: UInt64
        /// Its chain hash (32 bytes).
        public var hash: [UInt8]

        /// A head at `sequence` whose event hashes to `hash`.
        public init(sequence: UInt64, hash: [UInt8]) {
            self.sequence = sequence
            self.hash = hash
        }
    }

    /// The ledger the state is of.
    public var ledger: UUID
    /// Each origin's head, by device name.
    public var heads: [String: Head]

    /// The state of a store of `ledger` holding `heads` (none: a new store).
    public init(ledger: UUID, heads: [String: Head] = [:]) {
        self.ledger = ledger
        self.heads = heads
    }

    static let magic = Array("GOALHEAD".utf8)
    /// The version of the byte form this code writes and reads.
    public static let formatVersion: UInt8 = 1

    /// The byte form.
    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 32 + heads.count * 48)
        w.bytes.append(contentsOf: Self.magic)
        w.u8(Self.formatVersion)
        w.uuid(ledger)
        w.varint(UInt64(heads.count))
        for (origin, head) in heads.sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
            w.string(origin)
            w.varint(head.sequence)
            w.bytes.append(contentsOf: head.hash.count == 32 ? head.hash : [UInt8](repeating: 0, count: 32))
        }
        return w.bytes
    }

    /// Reads the byte form; anything else is an invalid-input error naming what is wrong.
    public init(decoding bytes: [UInt8]) throws(LedgerError) {
        func bad(_ why: String) -> LedgerError { LedgerError(.invalidInput, "not a usable sync state: \(why)") }
        guard bytes.count >= Self.magic.count + 1 + 16 + 1, Array(bytes.prefix(Self.magic.count)) == Self.magic else {
            throw bad("it does not start like one, or is truncated")
        }
        let result: Result<SyncState, RecordDecodingError> = bytes.withUnsafeBytes { raw in
            do throws(RecordDecodingError) {
                var r = ByteReader(raw)
                r.index = Self.magic.count
                let version = try r.u8()
                guard version == Self.formatVersion else { throw RecordDecodingError(reason: "version \(version) is not supported") }
                var state = SyncState(ledger: try r.uuid())
                let count = try r.varint()
                guard count <= UInt64(raw.count) else { throw RecordDecodingError(reason: "the origin count is impossible") }
                for _ in 0..<count {
                    let origin = try r.string()
                    guard DeviceName.isValid(origin) else { throw RecordDecodingError(reason: "\"\(origin)\" is not a device name") }
                    let sequence = try r.varint()
                    guard sequence <= Event.largestSequence else {
                        throw RecordDecodingError(
                            reason: "the sequence of \(origin), \(sequence), is past the largest a store holds (\(Event.largestSequence))")
                    }
                    guard r.bytes.count - r.index >= 32 else { throw RecordDecodingError(reason: "the hash of \(origin) is truncated") }
                    let hash = Array(r.bytes[r.index..<r.index + 32])
                    r.index += 32
                    guard state.heads.updateValue(Head(sequence: sequence, hash: hash), forKey: origin) == nil else {
                        throw RecordDecodingError(reason: "origin \(origin) appears twice")
                    }
                }
                guard r.isAtEnd else { throw RecordDecodingError(reason: "bytes after the last origin") }
                return .success(state)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let s): self = s
        case .failure(let e): throw bad(e.reason)
        }
    }
}
