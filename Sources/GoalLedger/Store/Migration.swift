import Foundation

/// One step of a store's upgrade, identified for ever by its `identifier`.
public struct Migration: Sendable {
    /// The name the store records the migration under (`2-record-level-progress`), never changed.
    public let identifier: String
    let apply: @Sendable (borrowing StoreTransaction) throws -> Void
}
