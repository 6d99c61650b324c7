import Foundation

extension LedgerStore {
    /// Brings a store of an older `format` to this code's, in one write transaction: interrupted,
    /// the store stays in its old format, and the next open does it again. The log is not
    /// touched; only what is derived from it changes form.
    ///
    /// - 1 to 2: the origin index, a row per event, becomes a row per run of consecutive
    ///   sequences at consecutive positions (``OriginRun``).
    /// - 2 to 3: the id index (`eventIds`, the whole id to a full position) is made again from
    ///   the log as `ids` (the id's first 8 bytes to positions of a few bytes: `IDIndex`).
    /// - 3 to 4: the goal index (`goalEvents`, a sorted set of 8-byte positions under each goal)
    ///   becomes `goalPositions` (rows of a goal's positions as distances: `GoalPositionRow`).
    /// - 4 to 5: the device index (`deviceEvents`), keyed by device and position, is keyed by
    ///   the position alone (8 bytes; the event names its device).
    /// - 5 to 6: the id index gains `recentIds`, its newest rows (see `IDIndex`), created empty
    ///   when the store is opened: nothing to convert, but a format-5 ledger would not read it.
    func upgradeFormat(from format: UInt64) throws(LedgerError) {
        let layout = self.layout
        try failing(as: "bringing the store at \(path) from format \(format) to \(Self.format)") {
            try writeTransaction { txn in
                // Another process may have done it since this one read the format.
                let stored = try txn.u64(layout.meta, MetaKey.format) ?? 1
                guard stored < Self.format else { return }
                if stored < 2 { try txn.rewriteOriginsAsRuns() }
                if stored < 3 { try txn.rebuildIDIndex() }
                if stored < 4 { try txn.rebuildGoalIndex() }
                if stored < 5 { try txn.rekeyDeviceIndex() }
                try txn.put(layout.meta, key: MetaKey.format, value: Self.format.bigEndianBytes)
            }
        }
    }
}
