import Foundation

extension LedgerSnapshot {
    /// Every figure of the store's status, read in one read transaction: one state of the store,
    /// never figures of two commits side by side (reading them one call at a time, an append
    /// between two calls would show, say, a digest of fewer events than the count).
    public func status() throws(LedgerError) -> LedgerStatus {
        var status = try run {
            let projection = try txn.projectionStatus()
            let totals = try StoredProjection.ledgerDigest(txn, layout.projections[projection.generation])
            return LedgerStatus(
                schema: schema,
                events: try txn.lastPosition(),
                goals: Int(clamping: totals.count),
                originHeads: try txn.originHeads(),
                projectionVersion: projection.version,
                projectionCheckpoint: projection.checkpoint,
                digest: totals.hex,
                migrations: try txn.appliedMigrations(),
                enrolledDevices: try txn.enrolledDevices(),
                setAside: try txn.setAsideEvents(),
                waiting: try txn.waitingEvents(),
                deviceKey: nil)
        }
        status.deviceKey = try publicKey()
        return status
    }
}
