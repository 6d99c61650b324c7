import Foundation
import LMDB
import Sodium

/// What a write does once its transaction has committed: work that must not happen for a
/// transaction that rolls back (keeping a rotated key), or that needs transactions of its own
/// (rebuilding the projection after a revocation cut folded events).
final class WriteEffects {
    /// A key that replaces the device's key once the rotation that enrolled it commits; until
    /// then, the writer signs with it.
    var rotatedKey: SigningKey?
    /// Whether the projection is to be rebuilt after the commit.
    var rebuild = false
    /// The error of a call that failed: the write commits nothing.
    var failure: LedgerError?
    /// The map filled up during a call: the write is to run again on a larger map.
    var mapFull: LMDBError?
}
