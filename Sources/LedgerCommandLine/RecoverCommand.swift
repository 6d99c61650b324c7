import Foundation
import GoalLedger
import LedgerHub
import LedgerSync

enum RecoverCommand {
    static let out = Option.text("--out", "NEWDIR", "the new store to build (a new or empty directory; required)")
    static let from = Option.text(
        "--from", "SOURCE", "where else the ledger's events are: a store, an export file, a hub or sync service URL (repeatable)",
        repeats: true)
    static let ledger = Option.uuid("--ledger", "ID", "the ledger, when the damaged store's metadata cannot be read")
    static let device = Option.text("--device", "NAME", "this device, when the damaged store's metadata cannot be read")

    static let spec = CommandSpec(
        name: "recover",
        summary:
            "build a new store from every readable event of a damaged store (--store) and what each --from source holds, for the same device and key",
        options: [out.spec, from.spec, ledger.spec, device.spec],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let damaged = inv.storePath
        let destination = try inv.required(Self.out, by: "recover")
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory) {
            guard isDirectory.boolValue, ((try? FileManager.default.contentsOfDirectory(atPath: destination)) ?? ["?"]).isEmpty else {
                throw LedgerError(
                    .invalidInput, "\(destination) exists and is not an empty directory: name a new directory for the recovered store")
            }
            try LedgerStore.checkOwnerOnly(
                directory: destination, holding: "a store (a person's whole history and the device's secret key)")
        }
        // Stores and export files are read first and offered with the damaged store's events
        // in one import; services are synced with the new store after it exists.
        var offered: [(name: String, changes: ChangeSet)] = []
        var services: [String] = []
        for source in try inv.values(Self.from) {
            if Hub.isURL(source) || SyncServiceClient.isServiceURL(source) {
                services.append(source)
            } else if FileManager.default.fileExists(atPath: source + "/data.mdb") {
                CrashGuard.opening(source)
                let peer = try LedgerStore.open(at: source)
                offered.append((source, try peer.reading { try $0.changeSet(since: SyncState(ledger: peer.ledgerID)) }))
            } else {
                offered.append((source, try ChangeSet(decoding: try ExportFile.read(source), source: source)))
            }
        }
        let (store, report) = try LedgerStore.recover(
            from: damaged, to: destination, sources: offered, ledger: try inv.value(Self.ledger), device: try inv.value(Self.device))
        CrashGuard.opening(destination)
        var fromServices: [(name: String, events: Int)] = []
        var admittedLater = 0
        for url in services {
            let r = Hub.isURL(url) ? try Hub(url: url).sync(store) : try SyncCommand.serviceClient(url).syncBlocking(store)
            fromServices.append((SyncServiceClient.redacted(url), r.pulled.imported))
            SyncCommand.reportWaiting(r.pulled.waiting, here: true, &inv)
        }
        if !services.isEmpty {
            // What waited on a gap a service filled.
            admittedLater = try store.writing { try $0.admit(report.salvaged) }.imported
        }
        let s = report.salvaged
        let events = try store.reading { try $0.lastPosition() }
        // Read events the new store could not admit (behind a gap no source filled) are kept
        // beside it, as an export file to import once the gap is found.
        var keptFile: String?
        var kept = 0
        if let left = report.notAdmitted {
            let held = try store.reading { s in Set(try s.events(missingFrom: [:]).map(\.id)) }
            let still = left.events.indices.filter { !held.contains(left.events[$0].id) }
            if !still.isEmpty {
                let file = destination + "/" + Self.waitingFile
                let bytes = try ChangeSet(ledger: store.ledgerID, records: still.map { left.records[$0] }).encoded()
                guard FileManager.default.createFile(atPath: file, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
                    throw LedgerError(.store, "cannot write \(file)")
                }
                keptFile = file
                kept = still.count
            }
        }
        let waiting = try store.reading { try $0.waitingEvents() }
        if inv.json {
            try inv.printJSON(
                .object([
                    ("store", .string(destination)), ("ledger", .string(store.ledgerID.uuidString)), ("device", .string(store.device)),
                    ("read", .number(Double(s.events.count))), ("fromOtherPages", .number(Double(s.fromOtherPages))),
                    ("missingPositions", .array(s.missingPositions.map { .number(Double($0)) })),
                    ("damagedRecords", .array(s.damagedRecords.map { .number(Double($0)) })),
                    ("damage", .array(s.damage.map { .string("\($0)") })),
                    (
                        "sources",
                        .array(
                            (report.sources + fromServices).map {
                                .object([("source", .string($0.name)), ("events", .number(Double($0.events)))])
                            })
                    ),
                    ("events", .number(Double(events))), ("waiting", .number(Double(waiting.count))),
                    ("kept", .number(Double(kept))), ("keptFile", keptFile.map { .string($0) } ?? .null),
                    ("lostOwnEvents", report.lostOwnEvents.map { .string("\($0.lowerBound)…\($0.upperBound)") } ?? .null),
                ]))
        } else {
            inv.print(
                "read \(s.events.count) event\(s.events.count == 1 ? "" : "s") from the damaged store at \(damaged)"
                    + (s.fromOtherPages > 0 ? " (\(s.fromOtherPages) from pages no tree reaches)" : ""))
            for d in s.damage { inv.print("skipped damaged \(d)") }
            if !s.missingPositions.isEmpty { inv.print("unreadable positions: \(ranges(s.missingPositions))") }
            if !s.damagedRecords.isEmpty { inv.print("damaged records at positions: \(ranges(s.damagedRecords))") }
            for source in report.sources + fromServices { inv.print("from \(source.name): \(source.events) events") }
            inv.print(
                "recovered \(events) event\(events == 1 ? "" : "s") into \(destination) for device \(store.device) of ledger \(store.ledgerID.uuidString)"
                    + (admittedLater > 0 ? " (\(admittedLater) admitted after a sync)" : ""))
            if let lost = report.lostOwnEvents {
                let read = Set(s.events.filter { $0.origin == store.device }.map(\.sequence))
                let unreadable = (lost.lowerBound...lost.upperBound).filter { !read.contains($0) }
                inv.print(
                    "lost: \(store.device)'s own events \(ranges(unreadable)) were on unreadable pages and no source held them")
            }
            if let keptFile {
                inv.print(
                    "kept: \(kept) read event\(kept == 1 ? "" : "s") that wait behind a missing one, in \(keptFile) (`ledger import` it once the missing events are back)"
                )
            }
            inv.print(
                "next: check it with `ledger --store \(destination) verify`, then keep \(damaged) aside and move the new store into its place"
            )
        }
        for w in waiting { inv.err += "ledger: \(w.description); the rest was recovered\n" }
        if store.isRestoredPendingExchange {
            inv.err += "ledger: the new store appends only after it has exchanged events with another device or the hub (`ledger sync`)\n"
        }
    }

    /// The export file, in the new store's directory, of the read events it could not admit.
    static let waitingFile = "recovered-waiting.export"

    /// "3…7, 12".
    static func ranges(_ values: [UInt64]) -> String {
        var parts: [String] = []
        var i = 0
        while i < values.count {
            var j = i
            while j + 1 < values.count, values[j + 1] == values[j] + 1 { j += 1 }
            parts.append(i == j ? "\(values[i])" : "\(values[i])…\(values[j])")
            i = j + 1
        }
        return parts.joined(separator: ", ")
    }
}
