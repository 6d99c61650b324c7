import Foundation

/// Progress of a rebuild: events folded so far, and the number to fold.
public typealias RebuildProgress = (_ folded: UInt64, _ total: UInt64) -> Void

extension LedgerStore {
    /// Events folded per write transaction while rebuilding.
    static let rebuildChunk: UInt64 = 250_000

    /// Rebuilds the stored projection from the log, blue/green: the inactive generation of tables
    /// is cleared and filled in chunks (each its own transaction), then one transaction folds
    /// whatever was appended meanwhile and makes it the active generation.
    ///
    /// The events are read and decoded on a second thread while the calling one folds them (a
    /// `FoldFeed`, whose decoder goes on to the next chunk while a chunk is written and
    /// committed); the call returns once both are done.
    ///
    /// Interrupted at any moment, the store keeps serving the old generation; running `rebuild`
    /// again starts over. Readers and subscribers are never fed history again: positions in the
    /// log do not change, only the tables behind them.
    public func rebuild(progress: RebuildProgress? = nil) throws(LedgerError) {
        try rebuild(progress: progress, chunk: Self.rebuildChunk)
    }

    /// `rebuild`, folding `chunk` events per transaction, decoded ahead as `plan` says.
    func rebuild(progress: RebuildProgress?, chunk: UInt64, plan: LogDecodingPlan = LogDecodingPlan()) throws(LedgerError) {
        let layout = self.layout
        try failing(as: "rebuilding the projection of \(path)") {
            let (target, logEnd) = try writeTransaction { txn in
                // Trust is a projection too: derived anew from the log's enrolments and revocations.
                try self.recomputeTrust(txn)
                let target = layout.projections[1 - (try txn.projectionStatus().generation)]
                try target.clear(txn)
                try txn.put(layout.meta, key: MetaKey.rebuildCheckpoint, value: UInt64(0).bigEndianBytes)
                return (target, try txn.lastPosition())
            }
            // The log as it was when the rebuild began, decoded ahead across the chunks.
            let feed = logEnd >= plan.minimumEvents ? FoldFeed(self.env, layout: layout, from: 1, through: logEnd, runLength: plan.runLength) : nil
            defer { feed?.stop() }
            var folded: UInt64 = 0
            // Goals whose entries are not additive, computed once, by the last transaction.
            var deferred = Set<UUID>()
            while true {
                let (last, done, goals) = try writeTransaction { txn in
                    let last = try txn.lastPosition()
                    let end = min(last, folded + chunk)
                    let goals = try txn.fold(from: folded + 1, through: end, into: target, deferring: true, feed: feed)
                    try txn.put(layout.meta, key: MetaKey.rebuildCheckpoint, value: end.bigEndianBytes)
                    return (last, end, goals)
                }
                deferred.formUnion(goals)
                folded = done
                progress?(folded, last)
                if folded >= last { break }
            }
            // The switch: fold what arrived since the last chunk, then flip the active generation.
            try writeTransaction { txn in
                let status = try txn.projectionStatus()
                let last = try txn.lastPosition()
                try txn.fold(from: folded + 1, through: last, into: target, recomputing: deferred)
                try txn.put(layout.meta, key: MetaKey.projectionActive, value: UInt64(1 - status.generation).bigEndianBytes)
                try txn.put(layout.meta, key: MetaKey.projectionVersion, value: StoredProjection.version.bigEndianBytes)
                try txn.put(layout.meta, key: MetaKey.projectionCheckpoint, value: last.bigEndianBytes)
                try txn.delete(layout.meta, key: MetaKey.rebuildCheckpoint)
                try layout.projections[status.generation].clear(txn)
                // Tables only an earlier projection version wrote (their pages become free).
                for (name, duplicates) in ProjectionTables.obsoleteTables {
                    for g in [0, 1] { try txn.dropDatabase(named: "p\(g).\(name)", duplicates: duplicates) }
                }
            }
        }
    }

    /// The event stored at `position`, without its chain fields (which no fold reads); a
    /// damaged record is refused as `decodeRecord` refuses it.
    static func decodeForFolding(_ bytes: UnsafeRawBufferPointer, position: UInt64) throws(LedgerError) -> Event {
        do throws(RecordDecodingError) {
            return try EventCodec.decode(bytes, keepingChain: false)
        } catch {
            return try decodeRecord(bytes, position: position)
        }
    }

    /// Brings the stored projection in line with the code and the log: a projection written by an
    /// older fold is rebuilt; one behind the log (which a store written by this code never is)
    /// catches up. A projection newer than the code is refused.
    func ensureProjectionIsCurrent(onRebuild: ((String) -> Void)?) throws(LedgerError) {
        let (status, last) = try readTransaction { txn in (try txn.projectionStatus(), try txn.lastPosition()) }
        if status.version > StoredProjection.version {
            throw LedgerError(
                .store,
                "the projection of \(path) has version \(status.version), newer than this ledger (\(StoredProjection.version)); upgrade the ledger"
            )
        }
        if status.version < StoredProjection.version {
            onRebuild?(
                "the stored projection has version \(status.version), older than \(StoredProjection.version): rebuilding it from \(last) events"
            )
            try rebuild()
            return
        }
        if status.checkpoint < last {
            onRebuild?("the stored projection stops at position \(status.checkpoint) of \(last): folding the rest")
            let layout = self.layout
            try failing(as: "catching up the projection of \(path)") {
                try writeTransaction { txn in
                    let s = try txn.projectionStatus()
                    let end = try txn.lastPosition()
                    try txn.fold(from: s.checkpoint + 1, through: end, into: layout.projections[s.generation], decodingIn: self.env)
                    try txn.put(layout.meta, key: MetaKey.projectionCheckpoint, value: end.bigEndianBytes)
                }
            }
        }
    }
}
