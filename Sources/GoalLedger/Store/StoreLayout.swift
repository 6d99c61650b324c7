import Foundation
import LMDB

/// The named LMDB databases of a store and the form of their keys.
///
/// | database       | key                               | value                    |
/// |----------------|-----------------------------------|--------------------------|
/// | `meta`         | name (UTF-8)                      | see `MetaKey`            |
/// | `events`       | position (u64 BE)                 | `EventCodec` record      |
/// | `eventIds`     | event id (16)                     | position (u64 BE)        |
/// | `origins`      | origin device · 0x00 · seq (u64 BE) | position (u64 BE)      |
/// | `originHeads`  | origin device                     | last sequence (u64 BE)   |
/// | `goalEvents`   | goal id (16)                      | positions (u64 BE), a sorted set of duplicates |
/// | `deviceEvents` | device · 0x00 · position (u64 BE) | empty                    |
/// | `trust`        | `k` · device · 0x00 · from (u64 BE) | public key (32)        |
/// |                | `r` · device                      | revoked after (u64 BE)   |
///
/// The goal projection lives in two generations of tables, `p0.*` and `p1.*` (see
/// `ProjectionTables`); `meta` names the active one, so a rebuild fills the other and switches.
struct StoreLayout {
    static let names = ["meta", "events", "eventIds", "origins", "originHeads", "goalEvents", "deviceEvents", "trust"]

    let meta: Database
    let events: Database
    let eventIds: Database
    let origins: Database
    let originHeads: Database
    let goalEvents: Database
    let deviceEvents: Database
    /// Enrolled device keys and revocations, from `deviceEnrolled` and `deviceRevoked` events.
    let trust: Database
    /// The two generations of projection tables.
    let projections: [ProjectionTables]

    /// Databases whose keys hold sorted sets of fixed-size values.
    static let duplicates: Set<String> = ["goalEvents"]

    init(_ open: (String) throws -> Database) rethrows {
        meta = try open("meta")
        events = try open("events")
        eventIds = try open("eventIds")
        origins = try open("origins")
        originHeads = try open("originHeads")
        goalEvents = try open("goalEvents")
        deviceEvents = try open("deviceEvents")
        trust = try open("trust")
        projections = try [0, 1].map { g in try ProjectionTables(generation: g, open) }
    }

    static func originKey(_ device: String, _ sequence: UInt64) -> [UInt8] {
        Array(device.utf8) + [0] + sequence.bigEndianBytes
    }

    static func deviceKey(_ device: String, _ position: UInt64) -> [UInt8] {
        Array(device.utf8) + [0] + position.bigEndianBytes
    }
}

/// Keys of the `meta` database.
enum MetaKey {
    /// Store format (u64 BE); a store newer than the code is refused.
    static let format = Array("format".utf8)
    /// The ledger's id (16 bytes).
    static let ledger = Array("ledger".utf8)
    /// The local device's name (UTF-8).
    static let device = Array("device".utf8)
    /// The event schema the store accepts (u64 BE).
    static let schema = Array("schema".utf8)
    /// The latest hybrid logical clock reading (u64 BE).
    static let hlc = Array("hlc".utf8)
    /// The active projection generation (u64 BE: 0 or 1).
    static let projectionActive = Array("projection.active".utf8)
    /// The version of the projection code that built the active generation (u64 BE).
    static let projectionVersion = Array("projection.version".utf8)
    /// The last position folded into the active generation (u64 BE).
    static let projectionCheckpoint = Array("projection.checkpoint".utf8)
    /// Present while a rebuild fills the other generation: its last folded position (u64 BE).
    static let rebuildCheckpoint = Array("rebuild.checkpoint".utf8)
    /// Present in a store restored from a backup until it has exchanged events with another
    /// store: it may be behind its own device's history, and appending would fork it.
    static let restored = Array("restored".utf8)
    /// `waiting:` and an origin: the first of its offered events an exchange could not take
    /// (u64 BE sequence, u64 BE count, then the reason in UTF-8), until the origin moves past it.
    static let waiting = Array("waiting:".utf8)
    /// Per waiting origin: the store's clock (milliseconds, 8 bytes big-endian) when its entry
    /// was first recorded, so that entries age out.
    static let waitingSince = Array("waitsince:".utf8)
}

/// Device names: `[a-z0-9][a-z0-9._-]{0,63}`.
package enum DeviceName {
    public static func isValid(_ name: String) -> Bool {
        let b = Array(name.utf8)
        guard (1...64).contains(b.count) else { return false }
        func ok(_ c: UInt8, first: Bool) -> Bool {
            (97...122).contains(c) || (48...57).contains(c) || (!first && (c == 46 || c == 95 || c == 45))
        }
        return ok(b[0], first: true) && b.dropFirst().allSatisfy { ok($0, first: false) }
    }
}
