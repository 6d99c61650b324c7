import Foundation

/// What a relay of blobs (a CloudKit container, a bucket, any store that keeps what it is
/// given) is known to hold of a ledger: per origin, a sequence through which the relay holds
/// every event of that origin. A store hands out what lies past it
/// (``LedgerSnapshot/outgoing(since:limit:byteLimit:)``) and moves it past what the relay
/// delivers (``LedgerWriter/applyRelayed(_:token:)``); the app keeps it between runs.
///
/// The app keeps the token the relay last *confirmed*: after an upload succeeds, the token that
/// came with the blob; after a download is applied, the token the apply returned. An upload
/// that failed is retried from the old token (the same events again: harmless). When an upload
/// and a download overlap, ``merging(_:)`` joins the two tokens.
///
/// It is small: one sequence per origin, never event ids. Its `Codable` form carries a format
/// version, so a token written by a newer version of the library is refused clearly:
///
///     {"version":1,"ledger":"<UUID>","marks":{"<origin>":<sequence>,…}}
public struct RelayToken: Codable, Sendable, Equatable {
    /// The ledger the token is of.
    public let ledger: UUID
    /// Per origin, the sequence through which the relay holds every event of that origin.
    public private(set) var marks: [String: UInt64]

    /// The version of the `Codable` form this code writes and reads.
    public static let formatVersion = 1
    /// The default most events of one blob (``LedgerSnapshot/outgoing(since:limit:byteLimit:)``).
    public static let defaultLimit = 1_000
    /// The default most record bytes of one blob: 1 MiB, the size of a CloudKit record.
    public static let defaultByteLimit = 1 << 20
    /// The most origins a decoded token may name (a ledger has a few devices).
    static let largestOriginCount = 65_536

    /// A token of `ledger` covering nothing: the relay holds nothing yet.
    public init(ledger: UUID) {
        self.ledger = ledger
        self.marks = [:]
    }

    package init(ledger: UUID, marks: [String: UInt64]) {
        self.ledger = ledger
        self.marks = marks
    }

    /// The sequence through which the relay holds every event of `origin` (0: none).
    public func mark(of origin: String) -> UInt64 { marks[origin] ?? 0 }

    /// This token and `other` together: per origin, the higher mark (each says the relay holds
    /// every event through it). Refuses a token of another ledger.
    public func merging(_ other: RelayToken) throws(LedgerError) -> RelayToken {
        guard other.ledger == ledger else {
            throw LedgerError(
                .invalidInput,
                "the relay tokens belong to ledgers \(ledger.uuidString) and \(other.ledger.uuidString): tokens of different ledgers do not merge"
            )
        }
        return RelayToken(ledger: ledger, marks: marks.merging(other.marks, uniquingKeysWith: max))
    }

    /// Moves `origin`'s mark to `sequence` when that is higher.
    mutating func advance(_ origin: String, to sequence: UInt64) {
        if sequence > mark(of: origin) { marks[origin] = sequence }
    }

    private enum CodingKeys: String, CodingKey {
        case version, ledger, marks
    }

    /// Reads the `Codable` form; a token of another version, or one naming something other than
    /// a device name or a sequence past the largest a store holds, is a data-corrupted error
    /// saying which.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let version = try c.decode(Int.self, forKey: .version)
        func bad(_ why: String, at key: CodingKeys = .version) -> DecodingError {
            .dataCorruptedError(forKey: key, in: c, debugDescription: "not a usable relay token: \(why)")
        }
        guard version == Self.formatVersion else {
            throw bad(
                version > Self.formatVersion
                    ? "it is of version \(version), newer than this version of the library reads (\(Self.formatVersion))"
                    : "version \(version) is not supported")
        }
        let ledger = try c.decode(UUID.self, forKey: .ledger)
        let marks = try c.decode([String: UInt64].self, forKey: .marks)
        guard marks.count <= Self.largestOriginCount else {
            throw bad("it names \(marks.count) origins, more than a ledger holds", at: .marks)
        }
        for (origin, sequence) in marks {
            guard DeviceName.isValid(origin) else { throw bad("\"\(origin)\" is not a device name", at: .marks) }
            guard sequence <= Event.largestSequence else {
                throw bad(
                    "the mark of \(origin), \(sequence), is past the largest sequence a store holds (\(Event.largestSequence))",
                    at: .marks)
            }
        }
        self.init(ledger: ledger, marks: marks.filter { $0.value > 0 })
    }

    /// Writes the `Codable` form, with its version.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Self.formatVersion, forKey: .version)
        try c.encode(ledger, forKey: .ledger)
        try c.encode(marks, forKey: .marks)
    }
}
