import Foundation

/// The unit every transport carries: signed event records one store holds and another lacks,
/// computed from the other's ``SyncState`` (``LedgerSnapshot/changeSet(since:)``) and applied with
/// the checks of an import (``LedgerWriter/apply(_:from:)``). An export file is a change set
/// since an empty state.
///
/// Its byte form (``encoded()``), version 1:
///
///     "GOALLEDG" · version (1) · ledger id (16) · record count (u64 big-endian)
///     count × ( record length (varint) · record )
///     "END!" · SHA-256 of everything before "END!" (32)
///
/// Records are each origin's events in sequence order, origins in UTF-8 byte order; each
/// starts with the peer's last held event of that origin when the peer holds any, so that the
/// peer finds a fork (a blob for a relay, ``LedgerSnapshot/outgoing(since:limit:byteLimit:)``,
/// carries none). A record is the ledger's stored event form: codec version (1 byte),
/// CRC-32C of the rest (4, little-endian), event id (16), hybrid logical clock (8, big-endian),
/// wall time (zig-zag varint of milliseconds), origin sequence (varint), origin (varint
/// length · UTF-8), then schema, type, payload and signature fields, which a relay need not
/// read. `docs/sync-wire-format.md` states every field.
public struct ChangeSet: Equatable, Sendable {
    /// The ledger the records belong to.
    public let ledger: UUID
    /// The events, decoded and checked (every record's checksum).
    public let events: [Event]
    /// The records as they were stored or received, byte for byte.
    public let records: [[UInt8]]

    /// The number of events.
    public var count: Int { events.count }

    /// The version of the byte form this code writes and reads.
    public static let formatVersion: UInt8 = 1

    /// A change set of `records` of `ledger`, each checked by decoding.
    public init(ledger: UUID, records: [[UInt8]]) throws(LedgerError) {
        var events: [Event] = []
        events.reserveCapacity(records.count)
        for (i, record) in records.enumerated() {
            let decoded: Result<Event, RecordDecodingError> = record.withUnsafeBytes { b in
                do throws(RecordDecodingError) { return .success(try EventCodec.decode(b)) } catch { return .failure(error) }
            }
            switch decoded {
            case .success(let e): events.append(e)
            case .failure(let error): throw LedgerError(.invalidInput, "record \(i + 1) of the change set is damaged: \(error.reason)")
            }
        }
        self.ledger = ledger
        self.events = events
        self.records = records
    }

    /// A change set of records already decoded into `events` (aligned).
    package init(ledger: UUID, events: [Event], records: [[UInt8]]) {
        self.ledger = ledger
        self.events = events
        self.records = records
    }

    /// The byte form.
    public func encoded() -> [UInt8] { ExportFile.encode(ledger: ledger, records: records) }

    /// Reads the byte form; a truncated, altered or otherwise unusable one is an invalid-input
    /// error naming `source` and what is wrong, before anything is applied.
    public init(decoding bytes: [UInt8], source: String = "the change set") throws(LedgerError) {
        let (ledger, events, records) = try ExportFile.decode(bytes, name: source)
        self.init(ledger: ledger, events: events, records: records)
    }
}
