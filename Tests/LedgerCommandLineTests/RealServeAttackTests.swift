import Foundation
import LedgerBenchmarks
import LedgerService
import LedgerSync
import Sodium
import Testing

@testable import GoalLedger

/// The attacks of the sync service's threat table against the real `ledger serve` on loopback
/// (the executable, its options and its defaults), each failing while honest devices sync
/// before and after: one answer for every authentication failure, a request signed too far
/// ahead or expired, unsigned requests for made-up ledgers, a push of a made-up origin's
/// events, identical pushes at once, a push past the ledger's quota, a forged rotation row, a
/// hub full of made-up origins, slow clients and a forged flood.
struct RealServeAttackTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

    @Test func theThreatTableAgainstTheRealExecutable() throws {
        let f = try ServiceFixture()
        let (service, base) = try startLedgerServe(f.serviceURL, ["--max-ledger-events", "400", "--max-connections", "512"])
        defer {
            service.terminate()
            service.waitUntilExit()
        }
        f.base = base
        let c = SyncServiceClient(baseURL: URL(string: base)!)
        let phone = try SyncServiceAttackTests.founder(at: f.hub.path("phone"), now: now)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        let watch = try phone.clone(to: f.hub.path("watch"), device: "watch", now: now)
        try phone.revoke(device: "watch", now: now)
        for s in [phone, tablet] { _ = try c.syncBlocking(s) }
        let state = try tablet.syncState().encoded()

        // One answer for an unknown key, a revoked device and another device's name.
        let answers = [
            try f.signed(tablet, "pull", body: state, key: SigningKey.generate()),
            try f.signed(watch, "pull", body: state),
            try f.signed(tablet, "pull", body: state, key: try #require(try phone.keys.key(ledger: phone.ledgerID, device: "phone"))),
        ]
        #expect(answers.allSatisfy { $0.status == 401 } && Set(answers.map(\.text)).count == 1, "\(answers.map(\.text))")
        // Signed too far ahead, or expired.
        let clock = Int64(Date().timeIntervalSince1970)
        #expect(try f.signed(tablet, "pull", body: state, created: clock + 300).status == 401)
        // Unsigned requests for made-up ledgers.
        for _ in 0..<5 {
            let id = UUID().uuidString
            #expect(try f.send("POST", "/v1/ledgers/\(id)/pull", headers: [("ledger", id)], body: []).status == 401)
        }
        // A push of 2,000 events of a made-up origin: set aside unread, nothing stored.
        let rows = try f.rows()
        let key = SigningKey.generate()
        var forged: [[UInt8]] = []
        var previous = EventChain.genesis
        for i in 1...2_000 {
            var e = Event(
                id: UUID(), origin: "mallory", sequence: UInt64(i), hlc: HLC(rawValue: UInt64(i) << 16), at: now, schema: 2,
                payload: .tagAdded(TagAdded(goal: SyncServiceAttackTests.goal, tag: "m")))
            e.previousHash = previous
            previous = EventChain.hash(e)
            if i == 2_000 {
                e.signer = key.publicKey
                e.signature = key.sign(EventChain.message(ledger: phone.ledgerID, origin: "mallory", sequence: e.sequence, hash: previous))
            }
            forged.append(EventCodec.encode(e))
        }
        let push = try f.signed(tablet, "push", body: ExportFile.encode(ledger: phone.ledgerID, records: forged))
        #expect(push.status == 200 && push.text.contains("untrustedSigner") && push.text.contains("\"inserted\":0"), "\(push.text)")
        #expect(try f.rows() == rows)
        // Identical pushes at once: each 200, every event stored once.
        try tablet.append(SyncServiceAttackTests.progress(30), now: now)
        let hubState = try SyncState(decoding: Array(Data(base64Encoded: try f.signed(tablet, "pull", body: state).headers["ledger-state"] ?? "")!))
        let changes = try tablet.changeSet(since: hubState).encoded()
        let statuses = LogLines()
        inParallel(8) { _ in statuses.append("\((try? f.signed(tablet, "push", body: changes))?.status ?? 0)") }
        #expect(statuses.all.allSatisfy { $0 == "200" }, "\(statuses.all)")
        #expect(try f.rows() == rows + 30)
        // Past the ledger's quota (400 events): 413, nothing written.
        try phone.append(SyncServiceAttackTests.progress(400), now: now)
        #expect(throws: LedgerError.self) { try c.syncBlocking(phone) }
        #expect(try f.rows() == rows + 30)
        // A forged rotation row of the tablet, written by a hub role: its key opens nothing.
        let attacker = SigningKey.generate()
        let head = try #require(try tablet.originHeads()["tablet"])
        let last = try #require(try tablet.event(origin: "tablet", sequence: head))
        var rotation = last
        rotation.id = UUID()
        rotation.sequence = head + 1
        rotation.hlc = HLC(rawValue: last.hlc.rawValue + 1)
        rotation.payload = .deviceEnrolled(DeviceEnrolled(device: "tablet", publicKey: attacker.publicKey, from: head + 2))
        rotation.previousHash = EventChain.hash(last)
        rotation.signature = (0..<64).map { _ in UInt8.random(in: 0...255) }
        _ = try f.hub.admin().query(
            "INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record) VALUES ($1, 'tablet', $2, $3, $4, $5)",
            [
                .uuid(tablet.ledgerID), .int64(Int64(rotation.sequence)), .uuid(rotation.id),
                .int64(Int64(bitPattern: rotation.hlc.rawValue)), .bytea(EventCodec.encode(rotation)),
            ])
        #expect(try f.signed(tablet, "pull", body: state, key: attacker).status == 401)
        #expect(try f.signed(tablet, "pull", body: state).status == 200)
        // Slow clients and a forged flood while the phone syncs.
        let quietClient = SyncServiceClient(baseURL: URL(string: base)!)
        let quiet = try LedgerStore.create(at: f.hub.path("quiet"), device: "quiet")
        _ = try quietClient.syncBlocking(quiet)
        let port = try #require(UInt16(base.split(separator: ":").last.map(String.init) ?? ""))
        let outcome = ServiceAttackLoad(slowClients: 300, floodThreads: 2, seconds: 5).run(
            port: port, store: quiet, client: quietClient, now: now)
        #expect(outcome.errors.isEmpty && outcome.latencies.count >= 3, "\(outcome.errors.prefix(3))")
        #expect(Set(outcome.floodStatuses.keys) == [401], "\(outcome.floodStatuses)")
        #expect(service.isRunning)
        // The honest devices still sync, and agree.
        _ = try c.syncBlocking(tablet)
        #expect(try tablet.verify().isClean)
    }
}
