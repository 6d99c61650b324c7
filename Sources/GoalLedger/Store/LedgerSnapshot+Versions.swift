import Foundation

extension LedgerSnapshot {
    /// The goal's version: the number of events about it this store holds (0: none), which
    /// every event about the goal moves, progress included. What `expectedVersion` of a write
    /// checks; see ``FieldVersion`` for a guard that only writes of one field move.
    public func version(ofGoal goal: UUID) throws(LedgerError) -> Int {
        try run { try txn.version(of: goal) }
    }
}
