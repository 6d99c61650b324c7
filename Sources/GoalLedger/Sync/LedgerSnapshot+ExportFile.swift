import Foundation

extension LedgerSnapshot {
    /// Writes every event of the store to an export file at `path`, readable by its owner only
    /// (atomically: a new file beside it, synced, then renamed into place); the number of events
    /// written.
    public func export(to file: String) throws(LedgerError) -> Int {
        // The change set since an empty state, its records written as they are read (each
        // decoded on the way, so a damaged one is refused) a piece of about 1 MiB at a time: no
        // event, and no more of the file than a piece, is kept in memory. Every origin's events
        // from its first to its head, or to its revocation's cut (as the change set reads
        // them): the count the file states up front.
        let count = try run { try txn.exchangedHeads().values.reduce(UInt64(0)) { $0 &+ $1 } }
        var written: UInt64 = 0
        // What stopped the write, when it was not the file.
        var stopped: LedgerError?
        do throws(AtomicFile.Failure) {
            try AtomicFile.write(to: file) { (sink) throws(AtomicFile.Failure) in
                var writer = ExportFile.Writer(ledger: ledgerID, count: count)
                do throws(LedgerError) {
                    try visitRecords(missingFrom: [:], overlap: true) { (_, bytes) throws(LedgerError) in
                        do throws(AtomicFile.Failure) {
                            try writer.append(bytes) { (piece) throws(AtomicFile.Failure) in try sink.write(piece) }
                        } catch {
                            throw LedgerError(.invalidInput, "cannot write \(file): \(error.reason)")
                        }
                    }
                    guard writer.count == count else {
                        throw LedgerError.damaged("the origin heads count \(count) events and the log gave \(writer.count)")
                    }
                } catch {
                    stopped = error
                    throw AtomicFile.Failure(reason: error.message)
                }
                try writer.finish { (piece) throws(AtomicFile.Failure) in try sink.write(piece) }
                written = writer.count
            }
        } catch {
            // A person's history: owner-only, like the store's own files.
            throw stopped ?? LedgerError(.invalidInput, "cannot write \(file): \(error.reason)")
        }
        return Int(written)
    }
}
