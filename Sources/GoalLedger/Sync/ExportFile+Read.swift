import Foundation

extension ExportFile {
    /// The bytes of the export file at `path`, read to its end whatever it is (a regular file,
    /// a pipe such as `/dev/stdin`, a FIFO, a device), as `append` reads its input. The read
    /// stops at once when the first bytes are not an export's (`/dev/zero` is not read on).
    public static func read(_ path: String) throws(LedgerError) -> [UInt8] {
        func failed(_ why: String) -> LedgerError { LedgerError(.invalidInput, "cannot read \(path): \(why)") }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw failed(String(cString: strerror(errno))) }
        defer { try? handle.close() }
        var bytes: [UInt8] = []
        do {
            while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty {
                bytes += piece
                if bytes.count >= magic.count, Array(bytes.prefix(magic.count)) != magic {
                    throw LedgerError(.invalidInput, "\(path) is not a usable export: it does not start like a ledger export")
                }
            }
        } catch let error as LedgerError {
            throw error
        } catch {
            throw failed(error.localizedDescription)
        }
        return bytes
    }
}

extension LedgerStore {
    /// The export file at `file`, opened for an import (``LedgerWriter/importFile(_:)``) and
    /// refused as soon as its checksum holds and its header names another ledger than this
    /// store's: before its records are read.
    package func openExportFile(_ file: String) throws(LedgerError) -> ExportFile.Opened {
        try ExportFile.Opened(file) { (ledger) throws(LedgerError) in try self.checkSameLedger(ledger, source: file) }
    }

    /// Grows the store's map, outside any transaction, to hold an import of `file`: what the
    /// import writes (its records, their indexes and the projection's rows) is about two and a
    /// half times the file at most, and a write that fills the map runs again from its start.
    package func reserveRoom(forImportOf file: ExportFile.Opened) throws(LedgerError) {
        try reserveRoom(file.size, times: 3)
    }
}
