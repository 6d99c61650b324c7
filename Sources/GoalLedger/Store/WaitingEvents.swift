import Foundation

/// Events of one origin that an exchange could not verify: they and every later event of
/// their origin wait, and are offered again by the next exchange, until the origin's real
/// events arrive.
public struct WaitingEvents: Equatable, Sendable {
    /// The device the events claim to come from.
    public var origin: String
    /// The first sequence that waits.
    public var sequence: UInt64
    /// How many of the offered events wait.
    public var count: Int
    /// Why the first of them could not be taken, for an app to branch on.
    public var cause: Cause
    /// Why the first of them could not be taken, in a sentence for a person.
    public var reason: String

    /// Why events wait. None of these is an error of the exchange: what can be verified is
    /// taken, and these events wait until a later exchange brings what makes them verifiable
    /// (a missing event, an enrolment) or forever (a fork, a forgery).
    public enum Cause: String, Hashable, Sendable {
        /// The origin has two histories: an event claims a sequence this store holds another
        /// event for (a device restored from an old backup, or a store copied and used twice).
        case fork
        /// Sequences of the origin are missing before them.
        case gap
        /// An event cannot be read, or breaks the rules of its envelope.
        case malformed
        /// An event does not continue its origin's chain: its previous hash, its clock or its id
        /// does not fit, or it differs from the copy held here.
        case brokenChain
        /// A signature does not verify: the events were altered, or forged.
        case badSignature
        /// Events are not signed where the ledger requires signatures.
        case unsigned
        /// The origin, or the key that signed, is not enrolled by the ledger's trust (or events
        /// claim this store's own device): a device writing in another's name.
        case untrustedSigner
        /// A cause this version does not know (from a newer peer).
        case other
    }
    /// One line for people.
    public var description: String {
        count > 1
            ? "\(origin)/\(sequence) and \(count - 1) later event\(count == 2 ? "" : "s") of \(origin) wait: \(reason)"
            : "\(origin)/\(sequence) waits: \(reason)"
    }

    /// Events of `origin` from `sequence` on (`count` of them offered) that wait for `cause`,
    /// described by `reason`.
    package init(origin: String, sequence: UInt64, count: Int, cause: Cause, reason: String) {
        self.origin = origin
        self.sequence = sequence
        self.count = count
        self.cause = cause
        self.reason = reason
    }

    /// The stored form: sequence and count (8 bytes each, big-endian), a zero byte, the cause's
    /// name, a zero byte, and the reason (rows written before causes were kept hold the reason
    /// right after the count: their cause reads as `other`).
    package var storedValue: [UInt8] {
        sequence.bigEndianBytes + UInt64(count).bigEndianBytes + [0] + Array(cause.rawValue.utf8) + [0] + Array(reason.utf8)
    }

    /// Reads the stored form of `origin`'s row; nil when it is too short.
    package init?(origin: String, stored value: some Collection<UInt8>) {
        let bytes = Array(value)
        guard bytes.count >= 16 else { return nil }
        let (sequence, count) = bytes.withUnsafeBytes {
            (
                UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: $0[0..<8])),
                Int(clamping: UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: $0[8..<16])))
            )
        }
        var rest = bytes[16...]
        var cause = Cause.other
        if rest.first == 0, let end = rest.dropFirst().firstIndex(of: 0) {
            cause = Cause(rawValue: String(decoding: rest[(rest.startIndex + 1)..<end], as: UTF8.self)) ?? .other
            rest = rest[(end + 1)...]
        }
        self.init(origin: origin, sequence: sequence, count: count, cause: cause, reason: String(decoding: rest, as: UTF8.self))
    }
}
