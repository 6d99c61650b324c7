import Foundation

/// What could be read from a damaged store without LMDB: its identity, every event whose record
/// is whole, and where it is damaged (``LedgerStore/salvage(at:)``). Nothing in it is trusted
/// for being there: the events are admitted into a new store by the checks every import makes.
public struct SalvagedStore: Sendable {
    /// The store's directory.
    public var path: String
    /// The ledger's id, from the store's metadata (nil when unreadable).
    public var ledgerID: UUID?
    /// The store's device, from its metadata (nil when unreadable).
    public var device: String?
    /// The store's event schema, from its metadata (nil when unreadable).
    public var schema: Int?
    /// The events read, in position order (each record's checksum verified).
    public var events: [Event] = []
    /// Their records, byte for byte.
    package var records: [[UInt8]] = []
    /// The log positions read, in order.
    public var positions: [UInt64] = []
    /// Of ``events``, those found only on pages no tree reaches (older copies of pages, pages
    /// below a damaged branch page).
    public var fromOtherPages = 0
    /// Positions below the last one read that no readable page holds.
    public var missingPositions: [UInt64] = []
    /// Positions whose record was found but fails its checksum (and no whole copy of it was).
    public var damagedRecords: [UInt64] = []
    /// Each origin's last sequence as the store recorded it, when readable: what it held.
    public var originHeads: [String: UInt64] = [:]
    /// The damage met.
    public var damage: [StoreDamage] = []

    /// The highest sequence read of each origin.
    public var readHeads: [String: UInt64] {
        var heads: [String: UInt64] = [:]
        for e in events where e.sequence > heads[e.origin] ?? 0 { heads[e.origin] = e.sequence }
        return heads
    }
}
