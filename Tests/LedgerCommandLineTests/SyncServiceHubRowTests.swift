import Foundation
import LedgerService
import LedgerSync
import Sodium
import Testing

@testable import GoalLedger

/// The service folds trust only from hub rows their origin signed: a row a hub role inserts
/// (a forged rotation, garbage) sets its origin aside and never fails the ledger.
struct SyncServiceHubRowTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

    /// Inserts a row as a hub role could; `record` nil: garbage that still carries the id and
    /// clock the table's check asks of a record's bytes.
    func insert(_ f: ServiceFixture, ledger: UUID, origin: String, sequence: UInt64, record: [UInt8]? = nil) throws {
        let id = UUID()
        let hlc = Int64(sequence) * 1000
        let bytes = record ?? ([2, 0, 0, 0, 0] + id.bytes + UInt64(hlc).bigEndianBytes + Array("not a record".utf8))
        let e = record.flatMap { try? EventCodec.decode($0) }
        _ = try f.hub.admin().query(
            "INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record) VALUES ($1, $2, $3, $4, $5, $6)",
            [
                .uuid(ledger), .text(origin), .int64(Int64(sequence)), .uuid(e?.id ?? id),
                .int64(e.map { Int64(bitPattern: $0.hlc.rawValue) } ?? hlc), .bytea(bytes),
            ])
    }

    /// A rotation of `store`'s device to `key` as a hub role could write one: the device's next
    /// sequence, chained to its last event and naming its real key as the signer, with a
    /// signature of random bytes.
    static func forgedRotation(of store: LedgerStore, to key: [UInt8]) throws -> Event {
        let head = try #require(try store.originHeads()[store.device])
        let last = try #require(try store.event(origin: store.device, sequence: head))
        var forged = last
        forged.id = UUID()
        forged.sequence = head + 1
        forged.hlc = HLC(rawValue: last.hlc.rawValue + 1)
        forged.payload = .deviceEnrolled(DeviceEnrolled(device: store.device, publicKey: key, from: head + 2))
        forged.previousHash = EventChain.hash(last)
        forged.signature = (0..<64).map { _ in UInt8.random(in: 0...255) }
        return forged
    }

    /// Writes `e` straight into the hub's rows of `ledger`, as a role granted it could.
    static func write(_ e: Event, into f: ServiceFixture, ledger: UUID) throws {
        _ = try f.hub.admin().query(
            "INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record) VALUES ($1, $2, $3, $4, $5, $6)",
            [
                .uuid(ledger), .text(e.origin), .int64(Int64(e.sequence)), .uuid(e.id),
                .int64(Int64(bitPattern: e.hlc.rawValue)), .bytea(EventCodec.encode(e)),
            ])
    }

    func setUp(_ f: ServiceFixture) throws -> (phone: LedgerStore, tablet: LedgerStore, client: SyncServiceClient) {
        let c = SyncServiceClient(baseURL: URL(string: f.base)!)
        let phone = try SyncServiceAttackTests.founder(at: f.hub.path("phone"), now: now)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        try tablet.append(SyncServiceAttackTests.progress(1), now: now)
        _ = try c.syncBlocking(phone)
        _ = try c.syncBlocking(tablet)
        _ = try c.syncBlocking(phone)
        return (phone, tablet, c)
    }

    @Test func aForgedRotationRowGivesTheAttackerNoKeyAndTheRealKeyKeepsWorking() throws {
        let f = try ServiceFixture()
        let (phone, tablet, c) = try setUp(f)
        let attacker = SigningKey.generate()
        let real = try #require(try tablet.keys.key(ledger: tablet.ledgerID, device: "tablet"))
        try Self.write(try Self.forgedRotation(of: tablet, to: attacker.publicKey), into: f, ledger: tablet.ledgerID)
        let state = try tablet.syncState().encoded()
        // The attacker is not the tablet; the tablet's real key still is.
        #expect(try f.signed(tablet, "pull", body: state, key: attacker).status == 401)
        #expect(try f.signed(tablet, "pull", body: state).status == 200)
        // The honest devices go on: the phone's events reach the tablet, and the phone sets the
        // forged row aside as it pulls it.
        try phone.append(SyncServiceAttackTests.progress(2), now: now)
        _ = try c.syncBlocking(phone)
        let r = try c.syncBlocking(tablet)
        #expect(r.pulled.imported == 2, "\(r)")
        #expect(try phone.reading { try $0.enrolledDevices() }.first { $0.device == "tablet" }?.publicKey == real.publicKey)
        #expect(try phone.verify().isClean && tablet.verify().isClean)
    }

    @Test func aGarbageRowSetsItsOriginAsideAndTheLedgerStillAnswers() throws {
        let f = try ServiceFixture()
        let (phone, tablet, c) = try setUp(f)
        let head = try #require(try tablet.originHeads()["tablet"])
        // One row of garbage after the tablet's last event, and one in place of a made-up origin.
        try insert(f, ledger: tablet.ledgerID, origin: "tablet", sequence: head + 1)
        try insert(f, ledger: tablet.ledgerID, origin: "ghost", sequence: 1)
        // And a well-formed event of a made-up origin, signed by a key of its own.
        let key = SigningKey.generate()
        var made = Event(
            id: UUID(), origin: "made-up", sequence: 1, hlc: HLC(rawValue: 5_000), at: now, schema: 2,
            payload: .tagAdded(TagAdded(goal: SyncServiceAttackTests.goal, tag: "x")))
        made.previousHash = EventChain.genesis
        made.signer = key.publicKey
        made.signature = key.sign(EventChain.message(ledger: tablet.ledgerID, origin: "made-up", sequence: 1, hash: EventChain.hash(made)))
        try insert(f, ledger: tablet.ledgerID, origin: "made-up", sequence: 1, record: EventCodec.encode(made))
        // Every request of the ledger still answers; the honest devices sync both ways.
        try phone.append(SyncServiceAttackTests.progress(2), now: now)
        let p = try c.syncBlocking(phone)
        #expect(p.pushed.imported == 2, "\(p)")
        let t = try c.syncBlocking(tablet)
        #expect(t.pulled.imported == 2, "\(t)")
        let pull = try f.signed(tablet, "pull", body: tablet.syncState().encoded())
        #expect(pull.status == 200)
        // The made-up origins hold no key: their rows are not sent.
        let origins = Set(try ChangeSet(decoding: pull.body).events.map(\.origin))
        #expect(origins.isSubset(of: ["phone", "tablet"]) && !origins.isEmpty, "\(origins)")
        #expect(try phone.verify().isClean && tablet.verify().isClean)
        #expect(try phone.digest() == tablet.digest())
    }
}
