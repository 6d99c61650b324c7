import Foundation

/// What applying one blob from a relay did (``LedgerWriter/applyRelayed(_:token:)``).
public struct RelayedImport: Equatable, Sendable {
    /// The import of the blob's events, and of the events earlier blobs left parked that it
    /// released. What still waits is named in ``ImportResult/waiting``.
    public var result: ImportResult
    /// The token moved past every event the relay is now known to hold: the blob's events and
    /// released ones that this store holds, where they continue the token's marks.
    public var token: RelayToken
    /// Events this store keeps aside, after this apply, until what they wait for arrives (a
    /// predecessor of their origin, an enrolment): they are offered again with every later blob.
    public var parked: Int
    /// Events of this blob that wait but could not be kept aside, because the store already
    /// keeps as many as it holds for a relay (``LedgerWriter/relayParkLimit``): download the
    /// blob again later.
    public var notKept: Int

    /// A result of these parts.
    public init(result: ImportResult, token: RelayToken, parked: Int, notKept: Int) {
        self.result = result
        self.token = token
        self.parked = parked
        self.notKept = notKept
    }
}
