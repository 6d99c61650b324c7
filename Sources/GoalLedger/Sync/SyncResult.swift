import Foundation

/// What `sync` moved in each direction.
public struct SyncResult: Equatable, Sendable {
    /// Events the local store received from the peer.
    public var pulled: ImportResult
    /// Events the peer received from the local store.
    public var pushed: ImportResult

    /// A result of these two imports.
    public init(pulled: ImportResult, pushed: ImportResult) {
        self.pulled = pulled
        self.pushed = pushed
    }
}
