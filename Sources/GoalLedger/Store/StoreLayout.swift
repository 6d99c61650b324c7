import Foundation
import LMDB

/// The named LMDB databases of a store and the form of their keys.
///
/// | database       | key                               | value                    |
/// |----------------|-----------------------------------|--------------------------|
/// | `meta`         | name (UTF-8)                      | see `MetaKey`            |
/// | `events`       | position (u64 BE)                 | `EventCodec` record      |
/// | `ids`          | an event id's first 8 bytes       | positions (u64 BE, no leading zero bytes), a set of duplicates: see `IDIndex` |
/// | `recentIds`    | as `ids`                          | as `ids`: the id index's newest rows, moved into `ids` in bulk (see `IDIndex`) |
/// | `origins`      | origin device · 0x00 · first seq (u64 BE) | first position, count (u64 BE each): a run (`OriginRun`) |
/// | `originHeads`  | origin device                     | last sequence (u64 BE)   |
/// | `goalPositions`| goal id (16) · first position (u64 BE) | the goal's count, then the row's positions as distances (varints): see `GoalPositionRow` |
/// | `deviceEvents` | position (u64 BE) of an event about no goal | empty        |
/// | `trust`        | `k` · device · 0x00 · from (u64 BE) | public key (32)        |
/// |                | `r` · device                      | revoked after (u64 BE)   |
///
/// The goal projection lives in two generations of tables, `p0.*` and `p1.*` (see
/// `ProjectionTables`); `meta` names the active one, so a rebuild fills the other and switches.
struct StoreLayout {
    static let names = ["meta", "events", "ids", "recentIds", "origins", "originHeads", "goalPositions", "deviceEvents", "trust"]

    let meta: Database
    let events: Database
    let ids: Database
    /// The id index's newest rows (see `IDIndex`).
    let recentIDs: Database
    let origins: Database
    let originHeads: Database
    let goalPositions: Database
    let deviceEvents: Database
    /// Enrolled device keys and revocations, from `deviceEnrolled` and `deviceRevoked` events.
    let trust: Database
    /// The two generations of projection tables.
    let projections: [ProjectionTables]

    /// What the keys of the database `name` hold: sets of positions of a few bytes in the id
    /// index (see `IDIndex`), sorted sets of rows of any size in each generation's entries (see
    /// `StoreTransaction.scanEntries`), one value elsewhere.
    static func duplicates(of name: String) -> DuplicateValues { anySize.contains(name) ? .anySize : .none }

    private static let anySize = Set(
        ["ids", "recentIds"] + ProjectionTable.allCases.filter(\.hasDuplicates).flatMap { t in [0, 1].map { "p\($0).\(t.storedName)" } })

    init(_ open: (String) throws -> Database) rethrows {
        meta = try open("meta")
        events = try open("events")
        ids = try open("ids")
        recentIDs = try open("recentIds")
        origins = try open("origins")
        originHeads = try open("originHeads")
        goalPositions = try open("goalPositions")
        deviceEvents = try open("deviceEvents")
        trust = try open("trust")
        projections = try [0, 1].map { g in try ProjectionTables(generation: g, open) }
    }

    static func originKey(_ device: String, _ sequence: UInt64) -> [UInt8] {
        Array(device.utf8) + [0] + sequence.bigEndianBytes
    }
}
