import Foundation

extension LedgerSnapshot {
    /// The events this store holds that a store with origin heads `heads` lacks, in origin order.
    public func events(missingFrom heads: [String: UInt64]) throws(LedgerError) -> [Event] {
        var out: [Event] = []
        try visitRecords(missingFrom: heads, overlap: true) { (e, _) throws(LedgerError) in out.append(e) }
        return out
    }
}
