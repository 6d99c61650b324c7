import Foundation

extension LedgerSnapshot {
    /// Writes every event of the store to an export file at `path`, readable by its owner only
    /// (atomically: a new file beside it, synced, then renamed into place); the number of events
    /// written.
    public func export(to file: String) throws(LedgerError) -> Int {
        // The change set since an empty state, its records encoded as they are read (each
        // decoded on the way, so a damaged one is refused): no event is kept in memory.
        var encoder = ExportFile.Encoder(ledger: ledgerID)
        try visitRecords(missingFrom: [:], overlap: true) { (_, bytes) throws(LedgerError) in encoder.append(bytes) }
        let bytes = encoder.finish()
        do {
            // A person's history: owner-only, like the store's own files.
            try AtomicFile.write(bytes, to: file)
        } catch {
            throw LedgerError(.invalidInput, "cannot write \(file): \(error.reason)")
        }
        return Int(encoder.count)
    }
}
