import Foundation
import GoalLedger

enum BackupCommand {
    static let withKey = Flag("--with-key", "also copy the device's secret signing key (left out by default)")

    static let spec = CommandSpec(
        name: "backup", arguments: "DEST",
        summary: "write a consistent, compacted copy of the store to a new directory (appends may go on)",
        options: [withKey.spec],
        positionals: 1...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let destination = inv.positionals[0]
        try store.backup(to: destination, withKey: inv.isSet(Self.withKey))
        let copy = try LedgerStore.open(at: destination)
        let events = try copy.reading { try $0.lastPosition() }
        if inv.json {
            try inv.printJSON(.object([("backup", .string(destination)), ("events", .number(Double(events)))]))
        } else {
            inv.print("backed up \(events) events to \(destination)")
        }
    }
}
