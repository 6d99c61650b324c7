import Foundation

extension LedgerSnapshot {
    /// Every figure of the store's status, read in one read transaction: one state of the store,
    /// never figures of two commits side by side (reading them one call at a time, an append
    /// between two calls would show, say, a digest of fewer events than the count).
    public func status() throws(LedgerError) -> LedgerStatus {
        var status = try run {
            let projection = try StoredProjection.status(txn, layout)
            let totals = try StoredProjection.ledgerDigest(txn, layout.projections[projection.generation])
            return LedgerStatus(
                schema: schema,
                events: try LedgerStore.lastPosition(txn, layout),
                goals: Int(clamping: totals.count),
                originHeads: try LedgerStore.originHeads(txn, layout),
                projectionVersion: projection.version,
                projectionCheckpoint: projection.checkpoint,
                digest: totals.hex,
                migrations: try Migrator.applied(txn, layout),
                enrolledDevices: try LedgerStore.enrolledDevices(txn, layout),
                setAside: try LedgerStore.setAsideEvents(txn, layout),
                waiting: try LedgerStore.waitingEvents(txn, layout),
                deviceKey: nil)
        }
        status.deviceKey = try publicKey()
        return status
    }
}
