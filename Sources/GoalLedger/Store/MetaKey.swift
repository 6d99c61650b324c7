import Foundation

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
