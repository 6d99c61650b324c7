import Foundation

extension LedgerStore {
    /// Applies pending migrations (each in its own transaction, with its record), then rebuilds
    /// every projection, blue/green. Interrupted at any moment, the store is on the old schema
    /// or the new one, never between; running `migrate` again finishes the job.
    public func migrate(progress: RebuildProgress? = nil, now: Instant = .systemNow) throws(LedgerError) -> MigrationReport {
        let layout = self.layout
        var applied: [String] = []
        try failing(as: "migrating \(path)") {
            for m in Migrator.migrations {
                let done = try writeTransaction { txn in
                    if try txn.get(layout.meta, key: Migrator.key(m.identifier)) != nil { return false }
                    try m.apply(txn)
                    try txn.put(layout.meta, key: Migrator.key(m.identifier), value: [])
                    return true
                }
                if done { applied.append(m.identifier) }
            }
        }
        try startSigning(now: now)
        let (schema, unfinished) = try readTransaction { txn in
            (try txn.schema(), try txn.get(layout.meta, key: MetaKey.rebuildCheckpoint) != nil)
        }
        if !applied.isEmpty || unfinished {
            try rebuild(progress: progress)
        }
        return MigrationReport(applied: applied, schema: schema, rebuilt: !applied.isEmpty || unfinished)
    }
}
