import Foundation
import LedgerTestSupport
import Sodium
import Testing

@testable import GoalLedger

/// Each attack on who may sign for whom, refused or converging.
struct TrustAttackTests {
    let now = instant("2026-11-05T12:00:00Z")
    static let goal = UUID(uuidString: "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1")!

    /// A phone (the founder) with a goal, and devices cloned from it (or from the device named).
    static func ledger(_ dir: TemporaryDirectory, _ devices: [(String, from: String)], at: Instant) throws -> [String: LedgerStore] {
        var stores: [String: LedgerStore] = [:]
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        try phone.append(
            [
                EventDraft(
                    payload: .goalCreated(GoalCreated(goal: goal, title: "Save", cadence: .daily, progressKind: .measurable, target: try! Amount("5"))))
            ],
            now: at)
        stores["phone"] = phone
        for (name, source) in devices {
            stores[name] = try stores[source]!.clone(to: dir.path + "/" + name, device: name, now: at)
        }
        return stores
    }

    static func progress(_ amount: Amount = try! Amount(whole: 1)) -> [EventDraft] {
        [EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: amount)))]
    }

    /// Syncs every pair until nothing moves.
    static func meshSync(_ stores: [LedgerStore]) throws {
        for _ in 0..<3 {
            for a in stores { for b in stores where a !== b { _ = try a.sync(with: b) } }
        }
    }

    static func expectConverged(_ stores: [LedgerStore]) throws {
        let digests = Set(try stores.map { try $0.digest() })
        #expect(digests.count == 1, "digests differ")
        let trust = Set(
            try stores.map {
                try $0.enrolledDevices().map { "\($0.device) \($0.fingerprint) \($0.revokedAfter ?? 0) \($0.enrolledBy ?? "-")" }
            })
        #expect(trust.count == 1, "trust differs: \(trust)")
        for s in stores {
            let report = try s.verify()
            #expect(report.isClean, "\(s.device): \(report.problems)")
        }
    }

    @Test func anEnrolledDeviceCannotTakeTheFoundersNameNorAnotherDevices() throws {
        let dir = TemporaryDirectory()
        let s = try Self.ledger(dir, [("laptop", "phone"), ("tablet", "phone")], at: now)
        let (phone, laptop, tablet) = (s["phone"]!, s["laptop"]!, s["tablet"]!)
        try phone.append(Self.progress(2), now: now)
        try Self.meshSync([phone, laptop, tablet])
        let phoneKey = try phone.enrolledDevices().first { $0.device == "phone" }!.publicKey
        let tabletKey = try tablet.enrolledDevices().first { $0.device == "tablet" }!.publicKey
        // The laptop signs enrolments of its own keys for the phone (the founder) and the tablet.
        let attacker = SigningKey.generate()
        _ = try laptop.writing { try $0.enrol(device: "phone", key: attacker.publicKey, from: 1, now: now) }
        _ = try laptop.writing { try $0.enrol(device: "tablet", key: attacker.publicKey, from: 1, now: now) }
        // …and writes as the phone with that key.
        let forged = try Forger.next(.tagAdded(TagAdded(goal: Self.goal, tag: "forged")), origin: "phone", after: phone, key: attacker)
        try Self.meshSync([phone, laptop, tablet])
        for store in [phone, laptop, tablet] {
            let result = try store.importEvents([forged], from: "a stolen laptop")
            #expect(result.imported == 0 && result.waiting.first?.reason.contains("not enrolled for phone") == true, "\(result.waiting)")
            let devices = try store.enrolledDevices()
            #expect(devices.first { $0.device == "phone" }?.publicKey == phoneKey)
            #expect(devices.first { $0.device == "tablet" }?.publicKey == tabletKey)
            #expect(try store.goalState(Self.goal).tags.isEmpty)
        }
        // The real devices go on writing, and every store agrees.
        try phone.append(Self.progress(3), now: now)
        try tablet.append(Self.progress(4), now: now)
        try Self.meshSync([phone, laptop, tablet])
        try Self.expectConverged([phone, laptop, tablet])
        #expect(try laptop.goalState(Self.goal).entries.count == 3)
    }

    @Test func aBackdatedEnrolmentByADeeperDeviceLosesToTheFoundersOwn() throws {
        let dir = TemporaryDirectory()
        let s = try Self.ledger(dir, [("laptop", "phone")], at: now)
        let (phone, laptop) = (s["phone"]!, s["laptop"]!)
        // The laptop enrols "watch" first, with an early clock; the phone enrols the real watch.
        let thief = SigningKey.generate()
        _ = try laptop.writing { try $0.enrol(device: "watch", key: thief.publicKey, from: 1, now: instant("2026-01-01T00:00:00Z")) }
        let watch = try phone.clone(to: dir.path + "/watch", device: "watch", now: now)
        try watch.append(Self.progress(1), now: now)
        try Self.meshSync([phone, laptop, watch])
        let forged = try Forger.next(.tagAdded(TagAdded(goal: Self.goal, tag: "x")), origin: "watch", after: phone, key: thief)
        #expect(try phone.importEvents([forged], from: "test").imported == 0)
        #expect(try phone.enrolledDevices().first { $0.device == "watch" }?.enrolledBy == "phone")
        try Self.expectConverged([phone, laptop, watch])
    }

    @Test func aStolenDeviceCannotRevokeItsRevokerAndRevocationsConverge() throws {
        let dir = TemporaryDirectory()
        let s = try Self.ledger(dir, [("laptop", "phone"), ("tablet", "phone")], at: now)
        let (phone, laptop, tablet) = (s["phone"]!, s["laptop"]!, s["tablet"]!)
        let watch = try laptop.clone(to: dir.path + "/watch", device: "watch", now: now)
        try Self.meshSync([phone, laptop, tablet, watch])
        // The stolen watch tries to revoke the laptop that enrolled it, and the phone.
        #expect(ledgerError { try watch.revoke(device: "laptop", now: now) }?.message.contains("not enrolled below") == true)
        // A modified build writes the revocations anyway, signed by the watch's key.
        let watchKey = try #require(try watch.keys.key(ledger: watch.ledgerID, device: "watch"))
        for target in ["laptop", "phone"] {
            let forged = try Forger.next(
                .deviceRevoked(DeviceRevoked(device: target, after: 0)), origin: "watch", after: watch, key: watchKey)
            #expect(try watch.importEvents([forged], from: "the thief's own build").imported == 1)
        }
        // Meanwhile the laptop revokes the watch; the stores learn both in different orders.
        try laptop.revoke(device: "watch", now: now)
        _ = try tablet.sync(with: watch)
        _ = try phone.sync(with: laptop)
        try Self.meshSync([phone, laptop, tablet, watch])
        for store in [phone, laptop, tablet, watch] {
            let devices = try store.enrolledDevices()
            #expect(devices.first { $0.device == "phone" }?.revokedAfter == nil)
            #expect(devices.first { $0.device == "watch" }?.revokedAfter != nil)
        }
        #expect(ledgerError { try watch.append(Self.progress(), now: now) }?.code == .store)
        try phone.append(Self.progress(5), now: now)
        try Self.meshSync([phone, laptop, tablet, watch])
        try Self.expectConverged([phone, laptop, tablet, watch])
    }

    @Test func enrolmentsARevokedDeviceMadeAfterItsRevocationAreVoidInOneImport() throws {
        let dir = TemporaryDirectory()
        let s = try Self.ledger(dir, [("laptop", "phone"), ("tablet", "phone")], at: now)
        let (phone, laptop, tablet) = (s["phone"]!, s["laptop"]!, s["tablet"]!)
        try laptop.append(Self.progress(1), now: now)
        _ = try phone.sync(with: laptop)
        try phone.revoke(device: "laptop", now: now)
        // The laptop, not knowing, enrols an accomplice afterwards; one export carries both.
        let accomplice = SigningKey.generate()
        _ = try laptop.writing { try $0.enrol(device: "evil", key: accomplice.publicKey, from: 1, now: now) }
        let laptopRun = try laptop.events(missingFrom: [:]).filter { $0.origin == "laptop" }
        let result = try tablet.importEvents(try phone.events(missingFrom: [:]) + laptopRun, from: "test")
        #expect(result.revoked.first?.origin == "laptop")
        #expect(try tablet.enrolledDevices().contains { $0.device == "evil" } == false)
        #expect(try tablet.verify().isClean)
        try Self.meshSync([phone, tablet])
        try Self.expectConverged([phone, tablet])
    }

    @Test func aCorruptedSignatureInTheMiddleOfARunIsRefusedAtTheDoor() throws {
        let dir = TemporaryDirectory()
        let s = try Self.ledger(dir, [("tablet", "phone")], at: now)
        let (phone, tablet) = (s["phone"]!, s["tablet"]!)
        try tablet.append(Self.progress(1) + Self.progress(2), now: now)
        try tablet.append(Self.progress(3), now: now)
        var run = try tablet.events(missingFrom: try phone.originHeads()).filter { $0.origin == "tablet" }
        let middle = run.firstIndex { $0.signature != nil && $0.sequence < run.last!.sequence }!
        run[middle].signature![5] ^= 0x01
        let result = try phone.importEvents(run, from: "test")
        #expect(result.imported == 0)
        #expect(result.waiting.first?.reason.contains("does not verify") == true, "\(result.waiting)")
        #expect(try phone.verify().isClean)
        // The real events still arrive, and then nothing waits.
        _ = try phone.sync(with: tablet)
        #expect(try phone.waitingEvents().isEmpty)
        try Self.expectConverged([phone, tablet])
    }

    @Test func aDeviceThatNeverWroteCanBeRevokedAndItsNameIsNeverCloned() throws {
        let dir = TemporaryDirectory()
        let s = try Self.ledger(dir, [("tablet", "phone")], at: now)
        let (phone, tablet) = (s["phone"]!, s["tablet"]!)
        // Another store cannot take the enrolled name, even though it has not written yet.
        let clone = ledgerError { _ = try phone.clone(to: dir.path + "/tablet2", device: "tablet", now: now) }
        #expect(clone?.code == .invalidArgument)
        try phone.revoke(device: "tablet", now: now)
        #expect(try phone.enrolledDevices().first { $0.device == "tablet" }?.revokedAfter == 0)
        // The thief's first batch counts for nothing.
        try tablet.append(Self.progress(9), now: now)
        let result = try phone.sync(with: tablet)
        #expect(result.pulled.imported == 0 && result.pulled.revoked.first?.origin == "tablet")
        #expect(
            ledgerError { try phone.enrol(device: "tablet", publicKey: SigningKey.generate().publicKey, now: now) }?.message.contains(
                "revoked") == true)
    }

    @Test func revokingADeviceRevokesTheDevicesItEnrolled() throws {
        let dir = TemporaryDirectory()
        let s = try Self.ledger(dir, [("laptop", "phone")], at: now)
        let (phone, laptop) = (s["phone"]!, s["laptop"]!)
        let watch = try laptop.clone(to: dir.path + "/watch", device: "watch", now: now)
        try watch.append(Self.progress(1), now: now)
        try Self.meshSync([phone, laptop, watch])
        try phone.revoke(device: "laptop", now: now)
        let devices = try phone.enrolledDevices()
        #expect(devices.first { $0.device == "watch" }?.revokedAfter == 1)
        try watch.append(Self.progress(2), now: now)
        _ = try phone.sync(with: watch)
        #expect(try phone.goalState(Self.goal).entries.count == 1)
        #expect(ledgerError { try watch.append(Self.progress(3), now: now) }?.code == .store)
        try Self.expectConverged([phone, watch])
    }

    @Test func aRotatedKeySignsFromTheNextEventAndTheOldOneNoLonger() throws {
        let dir = TemporaryDirectory()
        let s = try Self.ledger(dir, [("tablet", "phone")], at: now)
        let (phone, tablet) = (s["phone"]!, s["tablet"]!)
        let old = try #require(try tablet.keys.key(ledger: tablet.ledgerID, device: "tablet"))
        try tablet.rotateKey(now: now)
        try tablet.append(Self.progress(1), now: now)
        _ = try phone.sync(with: tablet)
        #expect(try phone.goalState(Self.goal).entries.count == 1)
        #expect(try phone.enrolledDevices().first { $0.device == "tablet" }?.publicKey != old.publicKey)
        // The old key (a copy of the store made before the rotation) can no longer write.
        let forged = try Forger.next(.tagAdded(TagAdded(goal: Self.goal, tag: "old")), origin: "tablet", after: phone, key: old)
        #expect(try phone.importEvents([forged], from: "test").imported == 0)
        // Only the device itself rotates: an enrolment of a new key for it by another is void.
        _ = try phone.writing { try $0.enrol(device: "tablet", key: SigningKey.generate().publicKey, from: 100, now: now) }
        _ = try phone.sync(with: tablet)
        #expect(try tablet.enrolledDevices().first { $0.device == "tablet" }?.publicKey == tablet.publicKey())
        try tablet.append(Self.progress(2), now: now)
        _ = try phone.sync(with: tablet)
        try Self.expectConverged([phone, tablet])
    }

    @Test func inALedgerFoundedBeforeSigningNobodyWritesAsAMigratedDevice() throws {
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone", signed: false)
        try phone.append(
            [EventDraft(payload: .goalCreated(GoalCreated(goal: Self.goal, title: "Save", progressKind: .measurable, target: try! Amount("5"))))]
                + Self.progress(),
            now: now)
        let tablet = try phone.clone(to: dir.path + "/tablet", device: "tablet", now: now)
        _ = try phone.migrate(now: now)
        _ = try tablet.sync(with: phone)
        // A self-enrolment for the phone, which holds a key already, signed by another key.
        let attacker = SigningKey.generate()
        let head = try phone.originHeads()["phone"]!
        let forged = try Forger.next(
            .deviceEnrolled(DeviceEnrolled(device: "phone", publicKey: attacker.publicKey, from: head + 1)), origin: "phone", after: phone,
            key: attacker)
        let result = try tablet.importEvents([forged], from: "a hostile hub")
        #expect(result.imported == 0, "\(result)")
        // Nor without a signature at all.
        var unsigned = forged
        unsigned.signature = nil
        unsigned.signer = nil
        unsigned.previousHash = nil
        #expect(try tablet.importEvents([unsigned], from: "a hostile hub").imported == 0)
        #expect(try tablet.verify().isClean)
        // Nor as a device the phone enrolled after the migration, whose chain began at its first event.
        let watch = try phone.clone(to: dir.path + "/watch", device: "watch", now: now)
        try watch.append(Self.progress(2), now: now)
        _ = try tablet.sync(with: phone)
        _ = try tablet.sync(with: watch)
        let selfEnrolment = try Forger.next(
            .deviceEnrolled(DeviceEnrolled(device: "watch", publicKey: attacker.publicKey, from: try tablet.originHeads()["watch"]! + 1)),
            origin: "watch", after: tablet, key: attacker)
        #expect(try tablet.importEvents([selfEnrolment], from: "a hostile hub").imported == 0)
        #expect(try tablet.enrolledDevices().first { $0.device == "watch" }?.enrolledBy == "phone")
        #expect(try tablet.verify().isClean)
    }

    /// A founder row altered to name another device (a damaged or copied file) lends that name
    /// nothing: when the founder cannot be found again, the events of the name the row holds,
    /// which holds no key, are counted as an unknown origin's and not kept waiting.
    @Test func aFounderRowNamingAnotherDeviceKeepsNothingOfItsWaiting() throws {
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        let ghost = SigningKey.generate()
        // The row names "ghost" and its key; the table's key rows are gone, and the log holds
        // no signature, so the founder cannot be found again.
        try phone.writeTransaction { txn in
            var keyRows: [[UInt8]] = []
            try txn.scan(phone.layout.trust, from: [UInt8(ascii: "k")]) { k, _ in
                guard k.first == UInt8(ascii: "k") else { return false }
                keyRows.append(Array(k))
                return true
            }
            #expect(!keyRows.isEmpty)
            for k in keyRows { try txn.delete(phone.layout.trust, key: k) }
            try txn.recordFounder("ghost", ghost.publicKey)
        }
        let e = try Forger.next(.tagAdded(TagAdded(goal: Self.goal, tag: "x")), origin: "ghost", after: phone, key: ghost)
        let result = try phone.importEvents([e], from: "a hostile peer")
        #expect(result.imported == 0 && result.unknownOrigins == 1 && result.unknownOriginEvents == 1, "\(result)")
        #expect(try phone.waitingEvents().isEmpty)
        #expect(try phone.lastPosition() == 0)
    }
}
