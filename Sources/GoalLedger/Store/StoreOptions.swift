import Foundation
import LMDB

/// How a store sizes its memory map: the map is the most the store's file may grow to before it
/// is enlarged; it grows by doubling, by itself, while no transaction of the process is open.
public struct StoreOptions: Equatable, Sendable {
    /// The map's size when the store opens (64 MiB by default): the first doubling happens when
    /// the data outgrows it.
    public var initialMapSize = 64 << 20
    /// The largest the map may grow to (1 TiB of address space by default, not of disk).
    public var maximumMapSize = 1 << 40

    /// The defaults.
    public init() {}

    var environment: Environment.Options {
        var o = Environment.Options()
        o.initialMapSize = initialMapSize
        o.maximumMapSize = maximumMapSize
        // The log's tables, two generations of projection tables and the obsolete ones a
        // rebuild drops, with room to grow.
        o.maxDatabases = 64
        return o
    }
}
