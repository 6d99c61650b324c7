import Foundation

/// What ``LedgerStore/recover(from:to:sources:ledger:device:key:)`` did.
public struct RecoveryReport: Sendable {
    /// What the damaged store gave.
    public var salvaged: SalvagedStore
    /// The events admitted into the new store from the damaged one and every source together.
    public var admitted: ImportResult
    /// Each source's name and the events it held.
    public var sources: [(name: String, events: Int)] = []
    /// Events read from the damaged store that the new store could not admit, as a change
    /// set: they wait behind a gap in their origin's sequence that no source filled (named by
    /// ``LedgerSnapshot/waitingEvents()``). Kept so that they can be imported once the gap is
    /// found (`ChangeSet/encoded()` is an export file's bytes).
    public var notAdmitted: ChangeSet?
    /// Of the device's own events, the sequences the damaged store recorded but neither it nor
    /// any source could give back (nil: none lost, or unknown).
    public var lostOwnEvents: ClosedRange<UInt64>?
}
