import Foundation

extension LedgerSnapshot {
    /// The devices enrolled in the ledger, by name.
    public func enrolledDevices() throws(LedgerError) -> [EnrolledDevice] {
        try run { try txn.enrolledDevices() }
    }

    /// Events that wait behind one an exchange could not verify, by origin.
    public func waitingEvents() throws(LedgerError) -> [WaitingEvents] {
        try run { try txn.waitingEvents() }
    }

    /// The trust state the table holds.
    func trustState() throws(LedgerError) -> TrustState {
        try run { try txn.trustState() }
    }
}
