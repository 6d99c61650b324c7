import Foundation
import Testing

@testable import GoalLedger

struct SyncTests {
    let now = instant("2026-11-05T12:00:00Z")

    /// Three devices append and sync at random; after a final full exchange every store prints
    /// the same replay, no recorded entry is lost unless it was removed, and each verifies.
    @Test(arguments: 0..<150)
    func randomMultiDeviceHistoriesConverge(_ seed: Int) throws {
        let dir = TemporaryDirectory()
        let a = try LedgerStore.create(at: dir.path + "/a", device: "phone")
        let b = try a.clone(to: dir.path + "/b", device: "tablet", now: instant("2026-11-01T00:00:00Z"))
        let c = try a.clone(to: dir.path + "/c", device: "watch", now: instant("2026-11-01T00:00:00Z"))
        let stores = [a, b, c]
        var rng = SeededRandom(seed: UInt64(seed) &* 31 &+ 7)
        var recorded = Set<UUID>()
        var removed = Set<UUID>()
        for step in 0..<24 {
            let store = stores[Int(rng.next() % 3)]
            if rng.next() % 4 == 0 {
                let other = stores.filter { $0 !== store }[Int(rng.next() % 2)]
                _ = try store.sync(with: other)
                continue
            }
            let batch = try RandomHistory.validBatch(for: store, rng: &rng, size: 1 + Int(rng.next() % 4), step: step)
            try store.append(batch, now: now)
            for d in batch {
                if case .progressRecorded = d.payload { recorded.insert(d.id!) }
                if case .progressRemoved(let p) = d.payload { removed.insert(p.entry) }
            }
        }
        _ = try a.sync(with: b)
        _ = try b.sync(with: c)
        _ = try a.sync(with: b)
        let replays = try stores.map { s in try s.replay() }
        let texts = try replays.map { try JSONWriter.string($0.canonicalJSON) }
        #expect(texts[0] == texts[1] && texts[1] == texts[2])
        #expect(Set(replays.map(\.position)).count == 1)
        #expect(Set(try stores.map { try $0.projection().digest }).count == 1)
        let live = Set(replays[0].goals.values.flatMap { $0.entries.map(\.id) })
        #expect(recorded.subtracting(removed).isSubset(of: live), "entries lost: \(recorded.subtracting(removed).subtracting(live))")
        for s in stores {
            let report = try s.verify()
            #expect(report.isClean, "\(s.device): \(report.problems)")
        }
    }

    @Test func onlyMissingEventsMoveAndASecondSyncMovesNone() throws {
        let dir = TemporaryDirectory()
        let a = try LedgerStore.create(at: dir.path + "/a", device: "phone")
        try a.append(try drafts(dayOne), now: now)
        let b = try a.clone(to: dir.path + "/b", device: "tablet", now: instant("2026-11-01T00:00:00Z"))
        let progress = { (n: Int, goal: String) in
            try drafts((0..<n).map { _ in #"{"type":"progressRecorded","goal":"\#(goal)","amount":1}"# })
        }
        try a.append(try progress(200, runGoal), now: now)
        try b.append(try progress(500, runGoal), now: now)
        let first = try a.sync(with: b)
        #expect(first.pulled.imported == 500 && first.pushed.imported == 200)
        // Besides the missing events, each side sends the last event of each origin the other
        // holds, which the other compares with its own copy (a fork shows there).
        #expect(first.pulled.alreadyPresent == 0 && first.pushed.alreadyPresent == 2)
        let second = try b.sync(with: a)
        #expect(second.pulled.imported == 0 && second.pushed.imported == 0)
        // 7 events of day one, the phone's enrolment of the tablet, 200 and 500 entries.
        #expect(try a.lastPosition() == 708 && b.lastPosition() == 708)
        #expect(try a.originHeads() == ["phone": 208, "tablet": 500])
    }

    @Test func theClockAdvancesPastImportedEvents() throws {
        let dir = TemporaryDirectory()
        let a = try LedgerStore.create(at: dir.path + "/a", device: "phone")
        try a.append(try drafts(dayOne), now: now)
        let b = try a.clone(to: dir.path + "/b", device: "tablet", now: instant("2026-11-01T00:00:00Z"))
        let future = try b.append(
            try drafts([#"{"type":"tagAdded","goal":"\#(runGoal)","tag":"x","at":"2030-01-01T00:00:00Z"}"#]), now: now)
        _ = try a.sync(with: b)
        let local = try a.append(try drafts([#"{"type":"tagAdded","goal":"\#(runGoal)","tag":"y","at":"2026-11-06T00:00:00Z"}"#]), now: now)
        #expect(local[0].hlc > future[0].hlc)
    }

    /// Two stores of one ledger and events crafted against the receiving store `a`.
    struct Refusals {
        let dir = TemporaryDirectory()
        let a: LedgerStore
        let b: LedgerStore
        let tabletEvents: [Event]

        init() throws {
            a = try LedgerStore.create(at: dir.path + "/a", device: "phone")
            try a.append(try drafts(dayOne), now: instant("2026-11-05T12:00:00Z"))
            b = try a.clone(to: dir.path + "/b", device: "tablet", now: instant("2026-11-01T00:00:00Z"))
            try b.append(
                try drafts([
                    #"{"type":"tagAdded","goal":"\#(runGoal)","tag":"x"}"#, #"{"type":"tagAdded","goal":"\#(runGoal)","tag":"y"}"#,
                ]), now: instant("2026-11-06T12:00:00Z"))
            tabletEvents = try b.events(missingFrom: a.originHeads()).filter { $0.origin == "tablet" }
        }

        /// Whether the import set the offered events aside (they wait, named with `text`) and
        /// left the store as it was.
        func waits(_ text: String, _ body: () throws -> ImportResult) throws -> Bool {
            let before = try a.snapshot()
            let result = try body()
            let after = try a.snapshot()
            if !result.waiting.contains(where: { $0.reason.contains(text) }) { Issue.record("waiting: \(result.waiting.map(\.reason)), expected \(text)") }
            return result.imported == 0 && result.waiting.contains { $0.reason.contains(text) } && after == before
        }

        func refused(_ code: LedgerError.Code, _ body: () throws -> Void) throws -> Bool {
            let before = try a.snapshot()
            let error = ledgerError(body)
            let after = try a.snapshot()
            return error?.code == code && after == before
        }
    }

    @Test func anotherLedgersEventsAreRefused() throws {
        let r = try Refusals()
        let stranger = try LedgerStore.create(at: r.dir.path + "/stranger", device: "laptop")
        #expect(try r.refused(.store) { _ = try r.a.sync(with: stranger) })
        _ = try stranger.export(to: r.dir.path + "/stranger.export")
        #expect(try r.refused(.store) { _ = try r.a.importFile(r.dir.path + "/stranger.export") })
    }

    @Test func forgedCollidingGappedAndMalformedEventsAreRefused() throws {
        let r = try Refusals()
        var forged = r.tabletEvents[0]
        forged.origin = "phone"
        forged.sequence = 8
        forged.id = UUID()
        #expect(try r.waits("phone/8") { try r.a.importEvents([forged], from: "test") })
        // Half a signed batch: its end carries the signature, so the first event alone waits.
        #expect(try r.waits("without a signature") { try r.a.importEvents([r.tabletEvents[0]], from: "test") })
        #expect(try r.a.waitingEvents().map(\.origin) == ["phone", "tablet"])
        #expect(try r.a.importEvents(r.tabletEvents, from: "test").imported == 2)
        #expect(try r.a.waitingEvents().map(\.origin) == ["phone"])
        var colliding = r.tabletEvents[0]
        colliding.id = UUID()
        #expect(try r.waits("fork") { try r.a.importEvents([colliding], from: "test") })
        var altered = r.tabletEvents[0]
        altered.at = instant("2027-01-01T00:00:00Z")
        #expect(try r.waits("differs from the copy held here") { try r.a.importEvents([altered], from: "test") })
        var gap = r.tabletEvents[1]
        gap.sequence = 4
        #expect(try r.waits("a gap") { try r.a.importEvents([gap], from: "test") })
        var reused = r.tabletEvents[1]
        reused.sequence = 3
        reused.id = r.tabletEvents[0].id
        #expect(try r.waits("already used") { try r.a.importEvents([reused], from: "test") })
        var malformed = r.tabletEvents[1]
        malformed.sequence = 3
        malformed.id = UUID()
        malformed.payload = .tagAdded(TagAdded(goal: UUID(uuidString: runGoal)!, tag: ""))
        #expect(try r.waits("tablet/3") { try r.a.importEvents([malformed], from: "test") })
        #expect(try r.a.verify().isClean)
    }

    /// An export of several 1 MiB pieces (the file is written a piece at a time, hashed as it
    /// goes) is byte for byte the change set since an empty state, and imports whole.
    @Test func anExportOfManyPiecesIsTheWholeChangeSetAndImportsBack() throws {
        let r = try Refusals()
        var lines: [String] = []
        for i in 0..<20_000 { lines.append(#"{"type":"progressRecorded","goal":"\#(runGoal)","amount":\#(i % 7 + 1)}"#) }
        try r.b.append(try drafts(lines), now: instant("2026-11-06T13:00:00Z"))
        let file = r.dir.path + "/b.export"
        #expect(try r.b.export(to: file) == 20_010)
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(bytes.count > 2 << 20)
        #expect(bytes == (try r.b.changeSet(since: SyncState(ledger: r.b.ledgerID)).encoded()))
        #expect(try r.a.importFile(file) == ImportResult(imported: 20_002, alreadyPresent: 8))
        #expect(try r.a.originHeads() == r.b.originHeads())
        #expect(try r.a.verify().isClean)
    }

    /// A well-formed export of another ledger whose records could not even be decoded is refused
    /// for its ledger, before any record is decoded; the same file of this ledger is refused for
    /// the record.
    @Test func anExportOfAnotherLedgerIsRefusedBeforeItsRecordsAreDecoded() throws {
        let r = try Refusals()
        let file = r.dir.path + "/other.export"
        let garbage: [[UInt8]] = [[2, 0, 0, 0, 0, 1, 2, 3]]
        try Data(ExportFile.encode(ledger: UUID(), records: garbage)).write(to: URL(fileURLWithPath: file))
        let other = ledgerError { _ = try r.a.importFile(file) }
        #expect(other?.code == .store && other?.message.contains("stores of different ledgers never exchange events") == true, "\(String(describing: other))")
        try Data(ExportFile.encode(ledger: r.a.ledgerID, records: garbage)).write(to: URL(fileURLWithPath: file))
        let own = ledgerError { _ = try r.a.importFile(file) }
        #expect(own?.code == .invalidInput && own?.message.contains("record 1") == true, "\(String(describing: own))")
    }

    @Test func truncatedOrDamagedExportFilesAreRefused() throws {
        let r = try Refusals()
        let file = r.dir.path + "/b.export"
        #expect(try r.b.export(to: file) == 10)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        // The file is the change set since an empty state, written record by record.
        #expect(Array(bytes) == (try r.b.changeSet(since: SyncState(ledger: r.b.ledgerID)).encoded()))
        for cut in [0, 10, 40, bytes.count / 2, bytes.count - 1] {
            try bytes.prefix(cut).write(to: URL(fileURLWithPath: file))
            #expect(try r.refused(.invalidInput) { _ = try r.a.importFile(file) }, "cut at \(cut)")
        }
        for offset in [9, 30, bytes.count / 2, bytes.count - 5] {
            var damaged = bytes
            damaged[offset] ^= 0x40
            try damaged.write(to: URL(fileURLWithPath: file))
            #expect(try r.refused(.invalidInput) { _ = try r.a.importFile(file) }, "flip at \(offset)")
        }
        try bytes.write(to: URL(fileURLWithPath: file))
        #expect(try r.a.importFile(file) == ImportResult(imported: 2, alreadyPresent: 8))
        #expect(try r.a.importFile(file) == ImportResult(imported: 0, alreadyPresent: 10))
    }

    @Test func cloneRefusesADeviceTheLedgerAlreadyHas() throws {
        let r = try Refusals()
        _ = try r.a.sync(with: r.b)
        #expect(ledgerError { _ = try r.a.clone(to: r.dir.path + "/c", device: "tablet", now: instant("2026-11-01T00:00:00Z")) }?.code == .invalidArgument)
        #expect(ledgerError { _ = try r.a.sync(with: try LedgerStore.open(at: r.a.path)) }?.code == .store)
    }
}
