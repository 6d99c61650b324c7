import Foundation
import LMDB

/// Reading and updating the stored projection inside a transaction. Append, import and rebuild
/// all update it through `Batch`, so there is one way an event reaches the stored state.
enum StoredProjection {
    /// Bumped whenever the fold or the stored form changes; stores built by an older version
    /// are rebuilt before they are read.
    /// 3: tags folded in NFC, compared by bytes; 4: the pending tables; 5: `entries` (by goal and
    /// day, carrying what the views read) replaces the day index `entryDays`; 6: entry values
    /// compact (the time as a difference from the clock, whole amounts as varints); 7: events
    /// that fail the gate are set aside (`setAside`), never folded; 8: the digest's parts
    /// (`digest`), kept with the projection; 9: per-day summaries and runs of completed periods
    /// (`days`, `periods`, `runs`), so that a view reads what it shows; 10: a history write's row
    /// in `entries` holds its event's canonical key, so the one in effect is found without
    /// decoding the others; 11: amounts exact (millionths in every stored row, the digest's
    /// amounts in plain decimal); 12: the gate checks a time zone's spelling, not this system's
    /// time zone database, so a `deviceConfigured` that an older store set aside for a zone its
    /// system did not know is folded; 13: a reminder's weekday (goal headers, reminder facts and
    /// pending rows), and a goal header keeps its creation's wall time and its position
    /// register (`goalMoved`); 14: the digest's version 2 (an entry hashed in a binary form); 15:
    /// `entries` keeps a goal's rows as duplicates under its id (`pN.goalEntries`), appended in
    /// full pages; 16: an amount in a row (an entry, a target) is stored without its trailing
    /// decimal zeros (`ByteWriter.amount`): a whole number a byte, not four.
    static let version: UInt64 = 16

    struct Status: Equatable, Sendable {
        var generation: Int
        var version: UInt64
        var checkpoint: UInt64
    }

    // MARK: Reading

    static func header(_ goal: UUID, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> GoalState? {
        try txn.withValue(t.goals, key: goal.bytes) { bytes in
            try decoded { () throws(RecordDecodingError) in try ProjectionCodec.decodeHeader(bytes, id: goal) }
        }
    }

    static func device(_ name: String, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> DeviceState {
        try txn.withValue(t.devices, key: Array(name.utf8)) { bytes in
            try decoded { () throws(RecordDecodingError) in try ProjectionCodec.decodeDevice(bytes, name: name) }
        } ?? DeviceState(name: name)
    }

    /// The digest's parts kept for `goal` (none: no row).
    static func goalDigest(_ goal: UUID, _ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> GoalDigest {
        try txn.withValue(t.digest, key: goal.bytes) { bytes in
            guard let d = GoalDigest(bytes: bytes) else {
                throw LedgerError("a projection row is damaged: the digest row of goal \(goal.uuidString) has \(bytes.count) bytes", reason: .projectionDamaged)
            }
            return d
        } ?? .none
    }

    /// The digest's totals kept for the whole ledger (none: no goal is created).
    static func ledgerDigest(_ txn: borrowing StoreTransaction, _ t: ProjectionTables) throws -> LedgerDigest {
        try txn.withValue(t.digest, key: ProjectionTables.ledgerKey) { bytes in
            guard let d = LedgerDigest(bytes: bytes) else {
                throw LedgerError("a projection row is damaged: the ledger's digest row has \(bytes.count) bytes", reason: .projectionDamaged)
            }
            return d
        } ?? LedgerDigest()
    }

    static func uuid(_ b: UnsafeRawBufferPointer) -> UUID { UUID(uuid: b.loadUnaligned(as: uuid_t.self)) }

    static func decoded<T>(_ body: () throws(RecordDecodingError) -> T) throws -> T {
        do throws(RecordDecodingError) {
            return try body()
        } catch {
            throw LedgerError("a projection row is damaged: \(error.reason)", reason: .projectionDamaged)
        }
    }
}
