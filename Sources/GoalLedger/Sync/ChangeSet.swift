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

extension LedgerSnapshot {
    /// This store's ``SyncState``: what a peer needs to compute the change set this store lacks.
    public func syncState() throws(LedgerError) -> SyncState {
        try run {
            var state = SyncState(ledger: ledgerID)
            for (origin, head) in try LedgerStore.originHeads(txn, layout) {
                state.heads[origin] = SyncState.Head(sequence: head, hash: try LedgerStore.chainHash(origin, head, txn, layout))
            }
            return state
        }
    }

    /// The signed records this store holds that a store in state `peer` lacks (with the peer's
    /// last event of each origin both hold, for the peer to compare), events of revoked devices
    /// after their revocation left out. Refuses a state of another ledger.
    public func changeSet(since peer: SyncState) throws(LedgerError) -> ChangeSet {
        try store.checkSameLedger(peer.ledger, source: "the peer")
        var events: [Event] = []
        var records: [[UInt8]] = []
        try visitRecords(missingFrom: peer.heads.mapValues(\.sequence), overlap: true) { (e, bytes) throws(LedgerError) in
            events.append(e)
            records.append(Array(bytes))
        }
        return ChangeSet(ledger: ledgerID, events: events, records: records)
    }
}

extension LedgerWriter {
    /// Applies a change set from `source` with every check of an import
    /// (``importEvents(_:from:)``): what cannot be verified waits, the rest is written in this
    /// transaction. Refuses a change set of another ledger.
    @discardableResult
    public func apply(_ changeSet: ChangeSet, from source: String) throws(LedgerError) -> ImportResult {
        try apply(changeSet, from: source, unreadable: [])
    }

    /// `apply`, where the transport could not read some records (`unreadable`: the first of
    /// each origin, which waits with the rest of its origin), with `beforeCommit` run last
    /// inside the write transaction (a hub commits its side there).
    @discardableResult
    package func apply(
        _ changeSet: ChangeSet, from source: String, unreadable: [WaitingEvents], beforeCommit: (() throws(LedgerError) -> Void)? = nil
    ) throws(LedgerError) -> ImportResult {
        try store.checkSameLedger(changeSet.ledger, source: source)
        // The records as received are written as they are: no second encoding.
        return try importEvents(
            changeSet.events, records: changeSet.records, from: source, unreadable: unreadable, beforeCommit: beforeCommit)
    }
}
