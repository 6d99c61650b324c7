import Foundation

/// Every figure of a store's status (what `ledger status` prints), read in one snapshot.
///
/// ``LedgerSnapshot/status()`` reads them all in one read transaction, so they describe one state
/// of the store even while another thread or process appends: the event count, the origin
/// heads, the projection's checkpoint, the digest and the goal count are of the same commit.
/// The store's ledger id, device and whether the ledger is signed are properties of the store
/// (``LedgerStore/ledgerID``, ``LedgerStore/device``, ``LedgerSnapshot/isSignedLedger``), which
/// never change.
public struct LedgerStatus: Equatable, Sendable {
    /// The event schema the store records: 1 (legacy) until `migrate`, then 2.
    public var schema: Int
    /// The number of events in the log (its last position).
    public var events: UInt64
    /// The number of created goals, from the digest's ledger row.
    public var goals: Int
    /// For each origin device, the last origin sequence the store holds.
    public var originHeads: [String: UInt64]
    /// The version of the fold that built the stored projection.
    public var projectionVersion: UInt64
    /// The last position the stored projection has folded (``events`` once it is up to date).
    public var projectionCheckpoint: UInt64
    /// The digest of the stored projection (``LedgerSnapshot/digest()``).
    public var digest: String
    /// The migrations the store records (``LedgerSnapshot/appliedMigrations()``).
    public var migrations: [String]
    /// The devices enrolled in the ledger, by name (``LedgerSnapshot/enrolledDevices()``).
    public var enrolledDevices: [EnrolledDevice]
    /// The events the stored projection set aside, in position order
    /// (``LedgerSnapshot/setAsideEvents()``).
    public var setAside: [SetAsideEvent]
    /// Events that wait behind one an exchange could not verify, by origin
    /// (``LedgerSnapshot/waitingEvents()``).
    public var waiting: [WaitingEvents]
    /// This device's public signing key (``LedgerSnapshot/publicKey()``), from the store's key
    /// store rather than its file; nil when the device has no key yet.
    public var deviceKey: [UInt8]?
}
