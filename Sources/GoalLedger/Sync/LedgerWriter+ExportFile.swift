import Foundation

extension LedgerWriter {
    /// Imports the events of an export file that this store lacks; `file` may be a regular
    /// file, a pipe or a device, read once before the write.
    public func importFile(_ file: String) throws(LedgerError) -> ImportResult {
        try apply(try store.exportFileChanges(file), from: file)
    }
}
