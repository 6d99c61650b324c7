import Foundation

extension LedgerWriter {
    /// Imports the events of an export file that this store lacks, in this write: all of them
    /// or, when any check refuses the file, none. `file` may be a regular file, a pipe or a
    /// device. The file is read a page of 100,000 events at a time, so that an import of any
    /// size holds one page of events, not the file: the result, the events held and the goals
    /// are those an import of everything at once gives (only the log's local order may differ
    /// where a page ends).
    public func importFile(_ file: String) throws(LedgerError) -> ImportResult {
        try importFile(try store.openExportFile(file))
    }

    /// Imports `file` (opened before the write, which may run again from its start) a page of
    /// `pageEvents` events at a time, each page through the checks of an import, in this write.
    package func importFile(_ file: ExportFile.Opened, pageEvents: Int = LedgerStore.cloneChunkEvents) throws(LedgerError)
        -> ImportResult
    {
        var walk = PageWalk(ledger: file.ledger, source: ExportFile.Source(file), pageEvents: pageEvents)
        for origin in file.origins.keys.sorted(by: String.bytesPrecede) { walk.add(origin) }
        return try walk.importPages(
            unreadable: [],
            apply: { (changes, unreadable, _) throws(LedgerError) in try apply(changes, from: file.name, unreadable: unreadable) },
            heads: { () throws(LedgerError) in try originHeads() },
            rename: { (entry) throws(LedgerError) in try renameWaiting(entry) })
    }
}
