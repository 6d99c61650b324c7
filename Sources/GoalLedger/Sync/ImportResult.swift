import Foundation

/// What an import or one direction of a sync did.
public struct ImportResult: Equatable, Sendable {
    /// Events written (missing here before).
    public var imported: Int = 0
    /// Events offered that this store already held.
    public var alreadyPresent: Int = 0
    /// Events of revoked devices, written after their revocation, that were left out.
    public var revoked: [RevokedEvents] = []
    /// Events that could not be verified, by origin: the first of them and every later one of
    /// its origin wait (see ``LedgerWriter/importEvents(_:from:)``).
    public var waiting: [WaitingEvents] = []
    /// Events written that fail the gate (by a store written before every event passed it):
    /// kept in the log, in their origins' chains, and set aside by every fold
    /// (``SetAsideEvent``).
    public var setAside = 0
    /// In a signed ledger, events of origins that hold no key (no enrolment names them): not
    /// named one by one nor kept as waiting, since anyone can make up an origin, only counted.
    /// They are offered again by the next exchange, and taken once an enrolment arrives.
    public var unknownOrigins = 0
    /// How many events those origins offered (see ``unknownOrigins``).
    public var unknownOriginEvents = 0

    /// A result with these counts and no revoked events.
    public init(imported: Int = 0, alreadyPresent: Int = 0) {
        self.imported = imported
        self.alreadyPresent = alreadyPresent
    }

}
