import Foundation
import LedgerService
import LedgerSync
import LedgerTestSupport
import Sodium
import Testing

@testable import GoalLedger

/// Key rotations and out-of-range clocks through the sync service only: a rotated device (the
/// founder too) syncs on its next try, its old key is refused from then on, and an event whose
/// clock is past the supported years waits at every door while the honest devices go on.
struct SyncServiceRotationTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!
    static let goal = SyncServiceAttackTests.goal

    func client(_ f: ServiceFixture) -> SyncServiceClient { SyncServiceClient(baseURL: URL(string: f.base)!) }

    func founder(_ f: ServiceFixture, _ name: String = "phone") throws -> LedgerStore {
        try SyncServiceAttackTests.founder(at: f.hub.path(name), name, now: now)
    }

    func key(_ store: LedgerStore) throws -> SigningKey { try #require(try store.keys.key(ledger: store.ledgerID, device: store.device)) }

    func enrolledKey(_ store: LedgerStore, _ device: String) throws -> [UInt8]? {
        try store.reading { try $0.enrolledDevices() }.first { $0.device == device }?.publicKey
    }

    /// The rotation records a device would send, as a header value.
    func proof(_ store: LedgerStore) throws -> String {
        try store.reading { try $0.ownKeyRotations() }.map { Data($0).base64EncodedString() }.joined(separator: ",")
    }

    func expectConverged(_ stores: [LedgerStore]) throws {
        #expect(Set(try stores.map { try $0.digest() }).count == 1, "digests differ")
        for s in stores {
            let report = try s.verify()
            #expect(report.isClean, "\(s.device): \(report.problems)")
        }
    }

    @Test func aDeviceThatRotatesSyncsAtOnceAndItsOldKeyIsRefusedFromThenOn() throws {
        let f = try ServiceFixture()
        let c = client(f)
        let phone = try founder(f)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        _ = try c.syncBlocking(phone)
        _ = try c.syncBlocking(tablet)
        let old = try key(tablet)
        try tablet.rotateKey(now: now)
        try tablet.append(SyncServiceAttackTests.progress(2), now: now)
        let new = try key(tablet)
        #expect(new.publicKey != old.publicKey)
        // Before the hub holds the rotation, the new key alone is not enough…
        let state = try tablet.syncState().encoded()
        #expect(try f.signed(tablet, "pull", body: state).status == 401)
        // …but its proof is, and nothing is stored from it.
        let rotation = try proof(tablet)
        let rows = try f.rows()
        #expect(try f.signed(tablet, "pull", body: state, tamper: { h, _ in h.append(("ledger-rotation", rotation)) }).status == 200)
        #expect(try f.rows() == rows)
        // The next sync goes through: the pull proves the rotation, the push delivers it.
        let r = try c.syncBlocking(tablet)
        #expect(r.pushed.imported == 3, "\(r)")
        // From then on the old key is refused, with or without the rotation's record replayed.
        #expect(try f.signed(tablet, "pull", body: state, key: old).status == 401)
        #expect(
            try f.signed(tablet, "pull", body: state, key: old, tamper: { h, _ in h.append(("ledger-rotation", rotation)) }).status == 401)
        // The new key needs no proof any more.
        #expect(try f.signed(tablet, "pull", body: state).status == 200)
        _ = try c.syncBlocking(phone)
        #expect(try enrolledKey(phone, "tablet") == new.publicKey)
        try tablet.append(SyncServiceAttackTests.progress(1), now: now)
        _ = try c.syncBlocking(tablet)
        _ = try c.syncBlocking(phone)
        try expectConverged([phone, tablet])
    }

    @Test func aForgedOrMisplacedRotationProvesNothing() throws {
        let f = try ServiceFixture()
        let c = client(f)
        let phone = try founder(f)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        let watch = try phone.clone(to: f.hub.path("watch"), device: "watch", now: now)
        _ = try c.syncBlocking(phone)
        try tablet.rotateKey(now: now)
        let rotation = try proof(tablet)
        let state = try tablet.syncState().encoded()
        // Another device's rotation: the watch cannot use the tablet's proof for its own name…
        let thief = SigningKey.generate()
        #expect(
            try f.signed(watch, "pull", body: state, key: thief, tamper: { h, _ in h.append(("ledger-rotation", rotation)) }).status == 401)
        // …nor can anyone sign as the tablet with a key the proof does not enrol.
        #expect(
            try f.signed(tablet, "pull", body: state, key: thief, tamper: { h, _ in h.append(("ledger-rotation", rotation)) }).status == 401)
        // A rotation the thief signs itself does not continue the tablet's key.
        var forged = try #require(try tablet.reading { try $0.ownKeyRotations() }.first.flatMap { try? EventCodec.decode($0) })
        forged.payload = .deviceEnrolled(DeviceEnrolled(device: "tablet", publicKey: thief.publicKey, from: forged.sequence + 1))
        forged.signer = thief.publicKey
        forged.signature = thief.sign(
            EventChain.message(ledger: tablet.ledgerID, origin: "tablet", sequence: forged.sequence, hash: EventChain.hash(forged)))
        let forgedProof = Data(EventCodec.encode(forged)).base64EncodedString()
        #expect(
            try f.signed(tablet, "pull", body: state, key: thief, tamper: { h, _ in h.append(("ledger-rotation", forgedProof)) }).status == 401)
        // Garbage, too many records, or a huge header: refused, the service up.
        for header in ["not base64!", String(repeating: "AAAA,", count: 40), String(repeating: "A", count: 20_000)] {
            #expect(try f.signed(tablet, "pull", body: state, tamper: { h, _ in h.append(("ledger-rotation", header)) }).status == 401)
        }
        // The honest tablet still syncs.
        _ = try c.syncBlocking(tablet)
        _ = try c.syncBlocking(phone)
        try expectConverged([phone, tablet])
    }

    @Test func theFounderRotatesAndItsFirstKeyNoLongerOpensTheLedger() throws {
        let f = try ServiceFixture()
        let c = client(f)
        let phone = try founder(f)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        _ = try c.syncBlocking(phone)
        _ = try c.syncBlocking(tablet)
        let first = try key(phone)
        let state = try phone.syncState().encoded()
        // The founder's first key is accepted (`device-key`, proved by the ledger id)…
        #expect(try f.signed(phone, "pull", body: state, key: first).status == 200)
        try phone.rotateKey(now: now)
        try phone.append(SyncServiceAttackTests.progress(1), now: now)
        _ = try c.syncBlocking(phone)
        // …until the hub holds the founder's rotation: then a thief keeping it is refused.
        let refused = try f.signed(phone, "pull", body: state, key: first)
        #expect(refused.status == 401, "\(refused.status) \(refused.text)")
        #expect(try f.signed(phone, "pull", body: state).status == 200)
        _ = try c.syncBlocking(tablet)
        #expect(try enrolledKey(tablet, "phone") == key(phone).publicKey)
        try tablet.append(SyncServiceAttackTests.progress(2), now: now)
        _ = try c.syncBlocking(tablet)
        _ = try c.syncBlocking(phone)
        try expectConverged([phone, tablet])
        // A founder that rotates before the service holds anything of its ledger syncs too.
        let desk = try founder(f, "desk")
        try desk.rotateKey(now: now)
        let r = try c.syncBlocking(desk)
        // Its goal and its rotation: the founder has no enrolment, the ledger id proves its key.
        #expect(r.pushed.imported == 2, "\(r)")
        #expect(try f.signed(desk, "pull", body: desk.syncState().encoded()).status == 200)
    }

    /// A store killed between its rotation's commit and making the new key current: `device.key`
    /// old, `device.key.next` new, the rotation committed.
    static func crashedRotation(of source: LedgerStore, at path: String, now: Instant) throws {
        let store = try source.clone(to: path, device: "tablet", now: now)
        let file = path + "/" + DirectoryKeyStore.fileName
        let old = try #require(FileManager.default.contents(atPath: file))
        try store.rotateKey(now: now)
        try FileManager.default.moveItem(atPath: file, toPath: file + ".next")
        try old.write(to: URL(fileURLWithPath: file))
    }

    @Test func aDeviceKilledDuringItsRotationSyncsThroughTheServiceWhenItOpens() throws {
        let f = try ServiceFixture()
        let c = client(f)
        let phone = try founder(f)
        _ = try c.syncBlocking(phone)
        let path = f.hub.path("tablet")
        try Self.crashedRotation(of: phone, at: path, now: now)
        // The enrolment of the tablet reaches the hub from the phone; the tablet reopens.
        _ = try c.syncBlocking(phone)
        let tablet = try LedgerStore.open(at: path)
        #expect(!FileManager.default.fileExists(atPath: path + "/" + DirectoryKeyStore.fileName + ".next"))
        try tablet.append(SyncServiceAttackTests.progress(2), now: now)
        let r = try c.syncBlocking(tablet)
        #expect(r.pushed.imported == 3, "\(r)")
        _ = try c.syncBlocking(phone)
        #expect(try enrolledKey(phone, "tablet") == key(tablet).publicKey)
        try expectConverged([phone, tablet])
    }

    @Test func aClockPastTheSupportedYearsWaitsAtTheServiceAndAtEveryStore() throws {
        let f = try ServiceFixture()
        let c = client(f)
        let phone = try founder(f)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        let watch = try phone.clone(to: f.hub.path("watch"), device: "watch", now: now)
        for s in [phone, tablet, watch] { _ = try c.syncBlocking(s) }
        // The watch's key is stolen: the thief signs one event with the largest clock.
        let stolen = try key(watch)
        let forged = try Forger.next(.tagAdded(TagAdded(goal: Self.goal, tag: "late")), origin: "watch", after: watch, key: stolen, clock: .max)
        let rows = try f.rows()
        let push = try f.signed(watch, "push", body: ExportFile.encode(ledger: watch.ledgerID, records: [EventCodec.encode(forged)]))
        #expect(push.status == 200 && push.text.contains("\"inserted\":0") && push.text.contains("hlc"), "\(push.text)")
        #expect(try f.rows() == rows)
        // A hostile hub role writes it anyway; every store that pulls it leaves it waiting.
        _ = try f.hub.admin().query(
            "INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record) VALUES ($1, 'watch', $2, $3, $4, $5)",
            [
                .uuid(watch.ledgerID), .int64(Int64(forged.sequence)), .uuid(forged.id), .int64(Int64(bitPattern: forged.hlc.rawValue)),
                .bytea(EventCodec.encode(forged)),
            ])
        let clock = try tablet.clock()
        let r = try c.syncBlocking(tablet)
        #expect(r.pulled.waiting.contains { $0.origin == "watch" && $0.reason.contains("hlc") }, "\(r.pulled.waiting)")
        #expect(try tablet.clock() == clock)
        // The honest devices keep appending and syncing; nothing of theirs is lost.
        for (i, s) in [phone, tablet].enumerated() {
            try s.append(SyncServiceAttackTests.progress(2 + i), now: now)
            _ = try c.syncBlocking(s)
        }
        _ = try c.syncBlocking(phone)
        #expect(try phone.clock().isSupported && tablet.clock().isSupported)
        #expect(try phone.goalState(Self.goal).entries.count == 5)
        #expect(try phone.goalState(Self.goal).tags.isEmpty)
        try expectConverged([phone, tablet])
    }
}
