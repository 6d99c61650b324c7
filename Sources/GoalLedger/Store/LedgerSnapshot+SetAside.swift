import Foundation

extension LedgerSnapshot {
    /// The events of the log that the stored projection set aside, in position order.
    public func setAsideEvents() throws(LedgerError) -> [SetAsideEvent] {
        try run { try txn.setAsideEvents() }
    }
}
