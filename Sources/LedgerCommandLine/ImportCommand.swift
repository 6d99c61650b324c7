import Foundation
import GoalLedger
import LedgerHub

enum ImportCommand {
    static let spec = CommandSpec(
        name: "import", arguments: "FILE", summary: "import the events of an export file that this store lacks (atomic)",
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        // Opened before the write, which starts over when the store's file grows: a pipe is read
        // once. The events are read and imported a page at a time, in the one write.
        let file = try store.openExportFile(inv.positionals[0])
        try store.reserveRoom(forImportOf: file)
        let pages = inv.environment["LEDGER_IMPORT_PAGE_EVENTS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? LedgerStore.cloneChunkEvents
        let r = try store.writing { try $0.importFile(file, pageEvents: pages) }
        if inv.json {
            try inv.printJSON(.object([("imported", .number(Double(r.imported))), ("alreadyPresent", .number(Double(r.alreadyPresent)))]))
        } else {
            inv.print("imported \(r.imported) event\(r.imported == 1 ? "" : "s") (\(r.alreadyPresent) already here)")
        }
        SyncCommand.reportWaiting(r.waiting, here: true, &inv)
        SyncCommand.reportUnknownOrigins(r, &inv)
    }
}
