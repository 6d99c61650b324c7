import Foundation

/// What `migrate` did.
public struct MigrationReport: Sendable {
    /// The identifiers of the migrations this run applied, in order (empty: none was pending).
    public var applied: [String]
    /// The store's event schema afterwards.
    public var schema: Int
    /// Whether the projections were rebuilt (after a migration, or to finish an interrupted
    /// rebuild).
    public var rebuilt: Bool
}
