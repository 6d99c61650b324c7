import Foundation
import Testing

@testable import GoalLedger

/// An import of an export file reads and imports a page of events at a time, in one write, and
/// ends as an import of everything at once: the same result, events, waiting entries and
/// digest, whatever the page size, the file's order, or what in it is refused. Only where a
/// page ends may the log's local order differ: a page takes each open signed run on to its
/// signature, so events of other origins from before that signature follow in the next page.
struct PagedImportTests {
    let now = instant("2026-11-05T12:00:00Z")
    /// Page sizes that cut the file's signed runs at every kind of place.
    let pageSizes = [1, 2, 3, 5, 7, 16]

    /// A signed ledger of four origins whose events interleave in clock order, and a store of
    /// it (the laptop) that holds only its first day and its devices' enrolments.
    func ledger(_ dir: TemporaryDirectory) throws -> (phone: LedgerStore, laptop: String) {
        (try interleavedLedger(dir, rounds: 3, perRound: 4, alsoCloned: ["laptop"]), dir.path + "/laptop")
    }

    /// The scenario's phone exported to a file, with the file's records, to write back altered.
    struct Exported {
        let phone: LedgerStore
        let laptop: String
        let file: String
        let ledgerID: UUID
        let records: [[UInt8]]

        /// Makes the file hold `records` instead.
        func write(_ records: [[UInt8]]) throws {
            try Data(ExportFile.encode(ledger: ledgerID, records: records)).write(to: URL(fileURLWithPath: file))
        }

        /// The places in the file of `origin`'s records.
        func places(of origin: String) -> [Int] { records.indices.filter { try! EventCodec.decode(records[$0]).origin == origin } }
    }

    func exported(_ dir: TemporaryDirectory) throws -> Exported {
        let (phone, laptop) = try ledger(dir)
        let file = dir.path + "/phone.export"
        _ = try phone.export(to: file)
        let (ledgerID, _, records) = try ExportFile.decode(try ExportFile.read(file), name: file)
        return Exported(phone: phone, laptop: laptop, file: file, ledgerID: ledgerID, records: records)
    }

    /// The ids of a store's events, by position.
    func log(_ store: LedgerStore) throws -> [UUID] {
        try store.reading { s in try (1...max(s.lastPosition(), 1)).compactMap { try s.event(at: $0)?.id } }
    }

    /// Whether each origin's events lie in the log in sequence order.
    func inSequenceOrder(_ store: LedgerStore) throws -> Bool {
        var last: [String: UInt64] = [:]
        return try store.reading { s in
            try (1...max(s.lastPosition(), 1)).allSatisfy { p in
                guard let e = try s.event(at: p) else { return false }
                defer { last[e.origin] = e.sequence }
                return e.sequence == (last[e.origin] ?? e.sequence - 1) + 1
            }
        }
    }

    /// Imports `file` into a copy of the store at `receiver` in one page, and into a copy for
    /// each page size; expects every paged import to end as the one-page import did, and returns
    /// that import's result.
    func importsAlike(_ file: String, into receiver: String, _ dir: TemporaryDirectory) throws -> ImportResult {
        func importing(pages: Int) throws -> (LedgerStore, ImportResult) {
            let path = dir.path + "/import-\(pages)-\(UUID().uuidString)"
            try FileManager.default.copyItem(atPath: receiver, toPath: path)
            let store = try LedgerStore.open(at: path)
            let opened = try store.openExportFile(file)
            return (store, try store.writing { try $0.importFile(opened, pageEvents: pages) })
        }
        let (whole, expected) = try importing(pages: .max)
        for pages in pageSizes {
            let (paged, result) = try importing(pages: pages)
            #expect(result == expected, "pages of \(pages): \(result) / \(expected)")
            #expect(try Set(log(paged)) == Set(log(whole)), "pages of \(pages)")
            #expect(try inSequenceOrder(paged), "pages of \(pages)")
            #expect(try paged.waitingEvents() == whole.waitingEvents(), "pages of \(pages)")
            #expect(try paged.originHeads() == whole.originHeads(), "pages of \(pages)")
            #expect(try paged.digest() == whole.digest(), "pages of \(pages)")
            #expect(try paged.verify().isClean, "pages of \(pages)")
        }
        return expected
    }

    @Test func anImportInPagesEndsAsAnImportOfEverything() throws {
        let dir = TemporaryDirectory()
        let (phone, laptop) = try ledger(dir)
        let file = dir.path + "/phone.export"
        let count = try phone.export(to: file)
        #expect(count > 40)
        let result = try importsAlike(file, into: laptop, dir)
        #expect(result.imported > 30 && result.waiting.isEmpty, "\(result)")
        // Every event the phone holds, and its projection.
        let whole = try LedgerStore.open(at: laptop)
        _ = try whole.writing { try $0.importFile(try whole.openExportFile(file), pageEvents: 5) }
        #expect(try whole.originHeads().filter { $0.key != "laptop" } == phone.originHeads().filter { $0.key != "laptop" })
        #expect(try whole.digest() == phone.digest())
    }

    /// A file in another order than an export's (shuffled, with records given twice) imports
    /// in pages as it does whole.
    @Test func aFileInAnyOrderImportsInPagesAsItDoesWhole() throws {
        let dir = TemporaryDirectory()
        let e = try exported(dir)
        var generator = SeededRandom(seed: 7)
        try e.write((e.records + e.records.prefix(9)).shuffled(using: &generator))
        let result = try importsAlike(e.file, into: e.laptop, dir)
        #expect(result.waiting.isEmpty && result.alreadyPresent >= 9, "\(result)")
    }

    /// An event altered in the file (well-formed, its checksum made anew, so its signature no
    /// longer holds): its run and every later event of its origin wait, counted whole, though
    /// the pages after it were never read.
    @Test func anAlteredEventWaitsCountedAsAnImportOfEverythingCountsIt() throws {
        let dir = TemporaryDirectory()
        let e = try exported(dir)
        let tablet = e.places(of: "tablet")
        var altered = e.records
        var event = try EventCodec.decode(e.records[tablet[tablet.count / 3]])
        event.payload = .tagAdded(TagAdded(goal: UUID(uuidString: runGoal)!, tag: "altered"))
        altered[tablet[tablet.count / 3]] = EventCodec.encode(event)
        try e.write(altered)
        let result = try importsAlike(e.file, into: e.laptop, dir)
        let waits = try #require(result.waiting.first { $0.origin == "tablet" }, "\(result)")
        let tabletHead = try #require(try e.phone.originHeads()["tablet"])
        #expect(waits.sequence <= event.sequence && UInt64(waits.count) + waits.sequence - 1 == tabletHead, "\(waits)")
    }

    /// Two events that claim one origin sequence are a fork, named as an import of everything
    /// names it, wherever a page ends: the second never goes to the page after the first.
    @Test func aForkInTheFileIsNamedWhereverAPageEnds() throws {
        let dir = TemporaryDirectory()
        let e = try exported(dir)
        // The twin of an event whose signature closes a run of the watch's (not its last): a page
        // may end right after it.
        let twin = try #require(e.places(of: "watch").dropLast().first { try! EventCodec.decode(e.records[$0]).signature != nil })
        var other = try EventCodec.decode(e.records[twin])
        other.id = UUID()
        var forked = e.records
        forked.insert(EventCodec.encode(other), at: twin + 1)
        try e.write(forked)
        let result = try importsAlike(e.file, into: e.laptop, dir)
        let waits = try #require(result.waiting.first { $0.origin == "watch" }, "\(result)")
        #expect(waits.cause == .fork && waits.reason.contains("in what was offered"), "\(waits)")
    }

    /// A record whose bytes do not decode, late in the file, refuses the whole import: nothing
    /// of the pages before it stays, and the error names the record.
    @Test func aDamagedRecordInALaterPageRefusesTheWholeFile() throws {
        let dir = TemporaryDirectory()
        let e = try exported(dir)
        var damaged = e.records
        let last = e.records.count - 2
        damaged[last][damaged[last].count - 1] ^= 0x20
        try e.write(damaged)
        let store = try LedgerStore.open(at: e.laptop)
        let before = try log(store)
        let opened = try store.openExportFile(e.file)
        let error = ledgerError { _ = try store.writing { try $0.importFile(opened, pageEvents: 3) } }
        #expect(error?.code == .invalidInput && error?.message.contains("record \(last + 1): checksum mismatch") == true, "\(String(describing: error))")
        #expect(try log(store) == before)
        #expect(try store.verify().isClean)
    }

    /// A sync between two stores reads the other store a page at a time, each way, and ends as a
    /// sync in one page: the same results, events, waiting entries and digests on both sides.
    @Test func aSyncBetweenStoresInPagesEndsAsOneInOnePage() throws {
        let dir = TemporaryDirectory()
        let (_, laptop) = try ledger(dir)
        // The laptop writes too, so that both ways move events.
        let own = try LedgerStore.open(at: laptop)
        try own.append(try drafts([#"{"type":"tagAdded","goal":"\#(runGoal)","tag":"laptop"}"#]), now: now)
        func syncing(pages: Int) throws -> (SyncResult, LedgerStore, LedgerStore) {
            let copy = dir.path + "/sync-\(pages)"
            for side in ["laptop", "phone"] { try FileManager.default.copyItem(atPath: dir.path + "/" + side, toPath: copy + "-" + side) }
            let (a, b) = (try LedgerStore.open(at: copy + "-laptop"), try LedgerStore.open(at: copy + "-phone"))
            return (try a.sync(with: b, pageEvents: pages), a, b)
        }
        let (expected, wholeLaptop, wholePhone) = try syncing(pages: .max)
        #expect(expected.pulled.imported > 30 && expected.pushed.imported == 1, "\(expected)")
        // As the change sets since each side's state, applied each way, do.
        for side in ["laptop", "phone"] { try FileManager.default.copyItem(atPath: dir.path + "/" + side, toPath: dir.path + "/sets-" + side) }
        let (a, b) = (try LedgerStore.open(at: dir.path + "/sets-laptop"), try LedgerStore.open(at: dir.path + "/sets-phone"))
        let pulled = try a.apply(try b.changeSet(since: a.syncState()), from: b.path)
        let pushed = try b.apply(try a.changeSet(since: b.syncState()), from: a.path)
        #expect(SyncResult(pulled: pulled, pushed: pushed) == expected)
        #expect(try a.originHeads() == wholeLaptop.originHeads() && b.originHeads() == wholePhone.originHeads())
        #expect(try a.digest() == wholeLaptop.digest() && b.digest() == wholePhone.digest())
        for pages in pageSizes {
            let (result, a, b) = try syncing(pages: pages)
            #expect(result == expected, "pages of \(pages): \(result) / \(expected)")
            for (paged, whole) in [(a, wholeLaptop), (b, wholePhone)] {
                #expect(try Set(log(paged)) == Set(log(whole)) && inSequenceOrder(paged), "pages of \(pages)")
                #expect(try paged.waitingEvents() == whole.waitingEvents() && paged.digest() == whole.digest(), "pages of \(pages)")
                #expect(try paged.verify().isClean, "pages of \(pages)")
            }
        }
    }

    /// A file that another process shortens after it was opened: the import stops with an error
    /// that says so, and leaves the store as it was (the file is read, not mapped, so the
    /// process does not fault).
    @Test func aFileShortenedWhileItIsReadIsAnErrorThatSaysSo() throws {
        let dir = TemporaryDirectory()
        let e = try exported(dir)
        let store = try LedgerStore.open(at: e.laptop)
        let before = try log(store)
        let opened = try store.openExportFile(e.file)
        #expect(truncate(e.file, off_t(opened.size / 2)) == 0)
        let error = ledgerError { _ = try store.writing { try $0.importFile(opened, pageEvents: 5) } }
        #expect(error?.code == .invalidInput && error?.message.contains("changed while it was read") == true, "\(String(describing: error))")
        #expect(try log(store) == before)
    }

    /// A file read from a pipe is copied aside and imported in pages as a regular file is.
    @Test func aFileFromAPipeImportsAsTheFileDoes() throws {
        let dir = TemporaryDirectory()
        let e = try exported(dir)
        let fifo = dir.path + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: e.file))
        let writer = Thread { try? bytes.write(to: URL(fileURLWithPath: fifo)) }
        writer.start()
        let store = try LedgerStore.open(at: e.laptop)
        let opened = try store.openExportFile(fifo)
        #expect(opened.count == e.records.count)
        let result = try store.writing { try $0.importFile(opened, pageEvents: 5) }
        #expect(result.imported > 30 && result.waiting.isEmpty, "\(result)")
        #expect(try store.digest() == e.phone.digest())
    }
}
