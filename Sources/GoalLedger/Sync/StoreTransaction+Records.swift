import Foundation

// Reading an origin's stored records, for the exchanges.
extension StoreTransaction {
    /// Visits the stored records of `origin` from sequence `first` on, in sequence order, each
    /// with its log position, until `body` returns false. Events of a revoked device after its
    /// revocation are not visited: no exchange passes them on. An origin index entry whose
    /// position holds no event is damage.
    func scanRecords(
        of origin: String, from first: UInt64,
        _ body: (_ position: UInt64, _ bytes: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let cutoff = try revokedAfter(origin) ?? .max
        try scanPositions(of: origin, from: first) { sequence, p in
            guard sequence <= cutoff else { return false }
            var goOn = true
            let found: Void? = try withValue(layout.events, key: p.bigEndianBytes) { bytes in goOn = try body(p, bytes) }
            guard found != nil else {
                throw LedgerError.damaged("the origin index names position \(p), which holds no event", position: p)
            }
            return goOn
        }
    }

    /// Each origin's last event an exchange reads (``scanRecords(of:from:_:)``): its head, or
    /// its revocation's cut when that comes first.
    func exchangedHeads() throws -> [String: UInt64] {
        var last: [String: UInt64] = [:]
        for (origin, head) in try originHeads() { last[origin] = min(head, try revokedAfter(origin) ?? .max) }
        return last
    }
}
