import Foundation
import GoalLedger
import HubTestSupport
import LedgerCommandLine
import LedgerHub
import PostgreSQL
import Sodium
import Testing

/// A pull or a clone from a hub reads and imports a page at a time (`LEDGER_HUB_PAGE_EVENTS`,
/// which `ledger` reads from its process's environment: the paged runs are child processes),
/// and ends exactly as one page of everything would: the same output, the same store.
@Suite struct HubPagingTests {
    static let smallPages = ["LEDGER_HUB_PAGE_EVENTS": "7"]

    /// What a store holds, without its path: its goal state and its log.
    func held(_ hub: HubFixture, _ device: String) -> String {
        hub.run(device, ["replay", "--json"]).stdout + hub.run(device, ["log", "--json"]).stdout
    }

    func digest(_ hub: HubFixture, _ device: String) throws -> JSONValue? {
        try JSONParser.parse(hub.run(device, ["status", "--json"]).stdout)["digest"]
    }

    /// Changes the record of the phone's event `sequence` in the hub, as a role that may write
    /// the table could.
    func alter(_ hub: HubFixture, _ ledger: UUID, phone sequence: UInt64, _ change: (inout [UInt8]) throws -> Void) throws {
        let admin = try hub.admin()
        let key: [Parameter] = [.uuid(ledger), .int64(Int64(sequence))]
        var record = try admin.query("SELECT record FROM hub.events WHERE ledger = $1 AND origin = 'phone' AND sequence = $2", key).bytes(0, 0)
        try change(&record)
        try admin.query("UPDATE hub.events SET record = $3 WHERE ledger = $1 AND origin = 'phone' AND sequence = $2", key + [.bytea(record)])
    }

    /// The phone writes in five batches (each a signed run) and syncs; the laptop pulls them in
    /// pages of 7 events, a copy of the laptop in one page.
    func laptopBehind() throws -> HubFixture {
        let hub = try HubFixture()
        hub.seed()
        #expect(try hub.join("laptop"))
        for batch in 0..<5 { hub.run("phone", ["append"], input: HubFixture.progress(9, from: batch * 9)) }
        #expect(hub.run("phone", ["sync", hub.url]).exitCode == 0)
        try FileManager.default.copyItem(atPath: hub.path("laptop"), toPath: hub.path("copy"))
        return hub
    }

    @Test func aPullInPagesEndsAsOnePullDoes() throws {
        let hub = try laptopBehind()
        let paged = try hub.child("laptop", ["sync", hub.url], environment: Self.smallPages)
        let whole = hub.run("copy", ["sync", hub.url])
        #expect(paged.status == 0, "\(paged.stderr)")
        #expect(paged.stdout == whole.stdout && paged.stderr == whole.stderr, "\(paged.stdout)\(paged.stderr) / \(whole.stdout)\(whole.stderr)")
        #expect(paged.stdout.contains("received 45 events"), "\(paged.stdout)")
        #expect(same(held(hub, "laptop"), held(hub, "copy")))
        #expect(try digest(hub, "laptop") == digest(hub, "phone"))
        #expect(try LedgerStore.open(at: hub.path("laptop")).verify().isClean)
    }

    /// A record damaged in the hub in a later page: it and the rest of its origin wait, counted
    /// as one pull of everything counts them, and what came before it is taken.
    @Test func aRecordDamagedInALaterPageWaitsCountedAsOnePullCountsIt() throws {
        let hub = try laptopBehind()
        let ledger = UUID(uuidString: try hub.ledgerID("phone"))!
        let head = try #require(try LedgerStore.open(at: hub.path("phone")).originHeads()["phone"])
        // Four events before the phone's head: past the first pages, in the last batch.
        let damaged = head - 4
        try alter(hub, ledger, phone: damaged) { record in record[record.count - 2] ^= 0x20 }
        let paged = try hub.child("laptop", ["sync", hub.url], environment: Self.smallPages)
        let whole = hub.run("copy", ["sync", hub.url])
        #expect(paged.status == 0, "\(paged.stderr)")
        #expect(paged.stderr.contains("phone/\(damaged)"), "\(paged.stderr)")
        #expect(paged.stdout == whole.stdout && paged.stderr == whole.stderr, "\(paged.stdout)\(paged.stderr) / \(whole.stdout)\(whole.stderr)")
        #expect(same(held(hub, "laptop"), held(hub, "copy")))
        let laptop = try LedgerStore.open(at: hub.path("laptop"))
        let copy = try LedgerStore.open(at: hub.path("copy"))
        // The damaged record's batch waits from its first event; the batches before it came.
        #expect(try laptop.originHeads()["phone"] == head - 9)
        #expect(try laptop.waitingEvents() == copy.waitingEvents())
        #expect(try laptop.waitingEvents().map(\.sequence) == [head - 8])
        #expect(try laptop.verify().isClean)
    }

    /// An event altered in the hub (well-formed, its checksum recomputed, so its signature no
    /// longer holds) early in the pull: its run and every later event of its origin wait, and
    /// the count names all of them, though later pages were never read.
    @Test func anOriginThatWaitsIsReadNoFurtherAndCountedWhole() throws {
        let hub = try laptopBehind()
        let ledger = UUID(uuidString: try hub.ledgerID("phone"))!
        let head = try #require(try LedgerStore.open(at: hub.path("phone")).originHeads()["phone"])
        // In the second of the five batches: some 30 events of the phone come after it.
        let altered = head - 30
        try alter(hub, ledger, phone: altered) { record in
            var event = try EventCodec.decode(record)
            event.payload = .tagAdded(TagAdded(goal: UUID(uuidString: goalIDs[0])!, tag: "altered"))
            record = EventCodec.encode(event)
        }
        let paged = try hub.child("laptop", ["sync", hub.url], environment: Self.smallPages)
        let whole = hub.run("copy", ["sync", hub.url])
        #expect(paged.status == 0, "\(paged.stderr)")
        #expect(paged.stdout == whole.stdout && paged.stderr == whole.stderr, "\(paged.stdout)\(paged.stderr) / \(whole.stdout)\(whole.stderr)")
        let laptop = try LedgerStore.open(at: hub.path("laptop"))
        let waiting = try laptop.waitingEvents()
        #expect(waiting == (try LedgerStore.open(at: hub.path("copy")).waitingEvents()))
        #expect(waiting.count == 1 && waiting.first.map { UInt64($0.count) + $0.sequence - 1 } == head, "\(waiting)")
        #expect(try laptop.originHeads()["phone"] ?? 0 < altered)
        #expect(same(held(hub, "laptop"), held(hub, "copy")))
        #expect(try laptop.verify().isClean)
    }

    /// A clone in pages of 7 holds what a clone in one page holds, and verifies.
    @Test func aCloneInPagesHoldsWhatACloneInOnePageHolds() throws {
        let hub = try laptopBehind()
        let ledger = try hub.ledgerID("phone")
        let paged = try hub.child("tablet", ["clone", hub.url, "--ledger", ledger, "--device", "tablet"], environment: Self.smallPages)
        let whole = hub.run("watch", ["clone", hub.url, "--ledger", ledger, "--device", "watch"])
        #expect(paged.status == whole.exitCode, "\(paged.stderr) / \(whole.stderr)")
        #expect(paged.stdout.replacingOccurrences(of: "tablet", with: "watch") == whole.stdout, "\(paged.stdout) / \(whole.stdout)")
        #expect(same(held(hub, "tablet"), held(hub, "watch")))
        #expect(try digest(hub, "tablet") == digest(hub, "phone"))
        let tablet = try LedgerStore.open(at: hub.path("tablet"))
        #expect(try tablet.originHeads() == LedgerStore.open(at: hub.path("phone")).originHeads())
        #expect(try tablet.verify().isClean)
    }

    /// A hub role wrote 20 events under a made-up origin, signed by a key nobody enrolled, and
    /// dated before everything else. A new store of the ledger (which trusts nobody yet, so it
    /// takes every origin) pulls them in pages of 7 through the library: the origin is read no
    /// further once a page finds it holds no key, and the result counts its 20 events once, as a
    /// pull in one page does.
    @Test func aMadeUpOriginIsCountedOnceAcrossPages() throws {
        let hub = try HubFixture()
        hub.seed()
        let phone = try LedgerStore.open(at: hub.path("phone"))
        let ledger = phone.ledgerID
        let key = SigningKey.generate()
        var previous = EventChain.genesis
        let admin = try hub.admin()
        for sequence in UInt64(1)...20 {
            var e = Event(
                id: UUID(), origin: "ghost", sequence: sequence, hlc: HLC(rawValue: 1_000 + sequence),
                at: Instant(rfc3339: "2026-11-05T12:00:00Z")!, schema: 2, payload: .tagAdded(TagAdded(goal: UUID(), tag: "x")))
            e.previousHash = previous
            e.signer = key.publicKey
            e.signature = key.sign(EventChain.message(ledger: ledger, origin: "ghost", sequence: sequence, hash: EventChain.hash(e)))
            previous = EventChain.hash(e)
            try admin.query(
                "INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record) VALUES ($1, 'ghost', $2, $3, $4, $5)",
                [.uuid(ledger), .int64(Int64(sequence)), .uuid(e.id), .int64(Int64(bitPattern: e.hlc.rawValue)), .bytea(EventCodec.encode(e))])
        }
        var results: [SyncResult] = []
        for (name, page) in [("paged", 7), ("whole", 1_000)] {
            let store = try LedgerStore.create(at: hub.path(name), device: name, ledger: ledger)
            let direct = try Hub(url: hub.url)
            direct.pageEvents = page
            results.append(try direct.sync(store))
            #expect(try store.originHeads() == phone.originHeads())
            #expect(try store.verify().isClean)
        }
        #expect(results[0].pulled.unknownOrigins == 1 && results[0].pulled.unknownOriginEvents == 20, "\(results[0].pulled)")
        #expect(results[0] == results[1], "\(results[0]) / \(results[1])")
    }
}
