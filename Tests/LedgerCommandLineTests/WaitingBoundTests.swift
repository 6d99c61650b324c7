import Foundation
import LedgerCommandLine
import LedgerTestSupport
import Sodium
import Testing

@testable import GoalLedger

/// What waits is bounded: made-up origins of a signed ledger are counted, not kept; a store names
/// at most `LedgerStore.waitingEntries` origins; `status` and `sync` summarise past 20.
struct WaitingBoundTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

    @Test func tenThousandMadeUpOriginsAreCountedNotKept() throws {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        let phone = try LedgerStore.open(at: f.store)
        // Records of 10,000 origins nobody enrolled, each signed by a key of its own, as a
        // peer, a file or a hub role could offer them.
        let key = SigningKey.generate()
        var forged: [Event] = []
        for i in 0..<10_000 {
            let origin = "ghost-\(i)"
            var e = Event(
                id: UUID(), origin: origin, sequence: 1 + UInt64(i % 2), hlc: HLC(rawValue: 1_000), at: now, schema: 2,
                payload: .tagAdded(TagAdded(goal: UUID(), tag: "x")))
            e.previousHash = EventChain.genesis
            e.signer = key.publicKey
            e.signature = key.sign(EventChain.message(ledger: phone.ledgerID, origin: origin, sequence: e.sequence, hash: EventChain.hash(e)))
            forged.append(e)
        }
        let before = try phone.lastPosition()
        let result = try phone.importEvents(forged, from: "a hostile peer")
        #expect(result.imported == 0 && result.unknownOrigins == 10_000 && result.unknownOriginEvents == 10_000, "\(result.unknownOrigins)")
        #expect(result.waiting.isEmpty)
        #expect(try phone.waitingEvents().isEmpty)
        #expect(try phone.lastPosition() == before)
        // The same through `import`: one line for them all.
        let file = f.root + "/ghosts.export"
        try Data(ExportFile.encode(ledger: phone.ledgerID, records: forged.map(EventCodec.encode))).write(to: URL(fileURLWithPath: file))
        let r = f.run(["import", file])
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("10000 event(s) of 10000 origin(s) that hold no key"), "\(r.stderr.prefix(300))")
        #expect(f.run(["status"]).stdout.split(separator: "\n").count < 20)
        // The store keeps appending.
        #expect(f.run(["append"], input: #"{"type":"goalCreated","goal":"5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9E11","title":"Read","cadence":"daily","progress":{"kind":"outcome"}}"#).exitCode == 0)
    }

    @Test func aStoreNamesAtMostItsCapOfWaitingOriginsAndStatusSumsThem() throws {
        let f = CLIFixture()
        // A ledger founded before signing: events of unknown origins are taken there, so gaps
        // (sequence 2 without 1) make them wait.
        let store = try LedgerStore.create(at: f.store, device: "phone", signed: false)
        var gaps: [Event] = []
        for i in 0..<300 {
            gaps.append(
                Event(
                    id: UUID(), origin: "device-\(i)", sequence: 2, hlc: HLC(rawValue: 1_000), at: now, schema: 2,
                    payload: .tagAdded(TagAdded(goal: UUID(), tag: "x"))))
        }
        let result = try store.importEvents(gaps, from: "a peer")
        #expect(result.waiting.count == 300)
        #expect(try store.waitingEvents().count == LedgerStore.waitingEntries)
        let status = f.run(["status"])
        let lines = status.stdout.split(separator: "\n").filter { $0.hasPrefix("waiting") }
        #expect(lines.count == 21, "\(lines.count)")
        #expect(lines.last?.contains("and 236 event(s) of 236 more origin(s)") == true, "\(lines.last ?? "")")
        // When the missing events arrive, the origin moves on and its entry goes.
        let first = Event(
            id: UUID(), origin: "device-0", sequence: 1, hlc: HLC(rawValue: 900), at: now, schema: 2,
            payload: .tagAdded(TagAdded(goal: UUID(), tag: "y")))
        _ = try store.importEvents([first, gaps[0]], from: "a peer")
        #expect(try store.waitingEvents().count == LedgerStore.waitingEntries - 1)
        // Entries nobody renews age out: 31 days later by the store's clock, the next exchange
        // forgets them, but for the one it offers again.
        let later = Instant(milliseconds: now.milliseconds + 31 * 86_400_000)
        try store.append([EventDraft(payload: .notificationAuthorization(NotificationAuthorization(status: .authorized)))], now: later)
        _ = try store.importEvents([gaps[1]], from: "a peer")
        #expect(try store.waitingEvents().map(\.origin) == ["device-1"])
    }
}

/// Rows of made-up origins in a hub are not downloaded again and again: a signed store fetches
/// the origins that hold a key there (and those a fetched event enrols), and counts the rest.
struct HubUnknownOriginTests {
    @Test func aHubFullOfMadeUpOriginsCostsEachSyncACountNotADownload() throws {
        let hub = try HubFixture()
        hub.seed("phone")
        #expect(hub.run("phone", ["sync", hub.url]).exitCode == 0)
        let ledger = UUID(uuidString: try hub.ledgerID("phone"))!
        // A laptop that knows the phone only.
        #expect(try hub.join("laptop"))
        // A hub role writes 500 rows of made-up origins.
        let admin = try hub.admin()
        for i in 0..<500 {
            let id = UUID()
            _ = try admin.query(
                "INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record) VALUES ($1, $2, 1, $3, 1, $4)",
                [.uuid(ledger), .text("ghost-\(i)"), .uuid(id), .bytea([2, 0, 0, 0, 0] + id.bytes + UInt64(1).bigEndianBytes + [0xFF])])
        }
        for _ in 0..<2 {
            let r = hub.run("phone", ["sync", hub.url])
            #expect(r.exitCode == 0)
            #expect(r.stderr == "ledger: left out 500 event(s) of 500 origin(s) that hold no key in this ledger (not enrolled); they are taken once an enrolment of theirs arrives\n", "\(r.stderr.prefix(400))")
        }
        // A new device, enrolled by the phone, writes; the laptop gets the enrolment and the new
        // device's events in one sync.
        #expect(try hub.join("tablet"))
        #expect(hub.run("tablet", ["append"], input: HubFixture.progress(3)).exitCode == 0)
        #expect(hub.run("tablet", ["sync", hub.url]).exitCode == 0)
        #expect(hub.run("laptop", ["sync", hub.url]).exitCode == 0)
        #expect(hub.run("laptop", ["log"]).stdout == hub.run("tablet", ["log"]).stdout)
    }
}
