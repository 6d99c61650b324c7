import Foundation
import LMDB
import Testing

@testable import GoalLedger

/// Per-device keys, signed hash chains per origin, enrolment, revocation, forks and restores.
struct SignedEventsTests {
    let now = instant("2026-11-05T12:00:00Z")
    static let goal = "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1"

    static func lines(_ n: Int, from: Int = 0) throws -> [EventDraft] {
        try (0..<n).map { i in
            try draft(#"{"type":"progressRecorded","goal":"\#(goal)","amount":\#(from + i)}"#)
        }
    }

    /// A phone with one goal, and a tablet cloned from it (the phone enrols the tablet).
    static func pair(_ dir: TemporaryDirectory, at: Instant) throws -> (phone: LedgerStore, tablet: LedgerStore) {
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        try phone.append(
            [try draft(#"{"type":"goalCreated","goal":"\#(goal)","title":"Save","cadence":"daily","progress":{"kind":"measurable","target":5}}"#)],
            now: at)
        let tablet = try phone.clone(to: dir.path + "/tablet", device: "tablet", now: at)
        return (phone, tablet)
    }

    /// The import takes nothing and names, in what waits, `text`; the store is unchanged.
    func refused(_ store: LedgerStore, _ body: () throws -> ImportResult, mentioning text: String) throws {
        let before = try store.snapshot()
        let result = try body()
        #expect(result.imported == 0)
        if !result.waiting.contains(where: { $0.reason.contains(text) }) { Issue.record("\(result.waiting.map(\.reason)): expected \(text)") }
        #expect(try store.snapshot() == before, "a refused import changed the store")
        #expect(try store.verify().isClean)
    }

    @Test func everyAppendedBatchIsChainedAndSignedOnce() throws {
        let dir = TemporaryDirectory()
        let (phone, _) = try Self.pair(dir, at: now)
        try phone.append(try Self.lines(3), now: now)
        let events = try phone.events(missingFrom: [:]).filter { $0.origin == "phone" }
        #expect(events.allSatisfy { $0.previousHash != nil })
        // Batches: the goal (1), the tablet's enrolment (2), three entries (3…5).
        #expect(events.filter { $0.signature != nil }.map(\.sequence) == [1, 2, 5])
        for (a, b) in zip(events, events.dropFirst()) { #expect(b.previousHash == EventChain.hash(a)) }
        #expect(phone.isSignedLedger)
        #expect(try phone.verify().isClean)
        let devices = try phone.enrolledDevices().map(\.device).sorted()
        #expect(devices == ["phone", "tablet"])
    }

    /// A long batch links its chain on a thread of its own (`ChainEncoder`): the same links
    /// and signatures as a short batch makes inline, a chain the next batch continues, and the
    /// tablet takes the whole history with every link and signature checked.
    @Test func aLongBatchIsChainedAsAShortOneIs() throws {
        let dir = TemporaryDirectory()
        let (phone, tablet) = try Self.pair(dir, at: now)
        let long = LedgerStore.signedRunLength + 1_000
        #expect(ChainEncoder.pays(for: long) || ProcessInfo.processInfo.activeProcessorCount < 2)
        try phone.append(try Self.lines(long), now: now)
        try phone.append(try Self.lines(3, from: long), now: now)
        let events = try phone.events(missingFrom: [:]).filter { $0.origin == "phone" }
        #expect(events.count == 2 + long + 3)
        #expect(events.allSatisfy { $0.previousHash != nil })
        var broken = 0
        for (a, b) in zip(events, events.dropFirst()) where b.previousHash != EventChain.hash(a) { broken += 1 }
        #expect(broken == 0, "\(broken) links name another hash than their previous event's")
        // Batches: the goal (1), the enrolment (2), the long one (3…) signed every
        // signedRunLength events and at its end, then the short one at its end.
        let end = UInt64(2 + long)
        #expect(events.filter { $0.signature != nil }.map(\.sequence) == [1, 2, 2 + UInt64(LedgerStore.signedRunLength), end, end + 3])
        #expect(try phone.verify().isClean)
        let result = try tablet.sync(with: phone)
        #expect(result.pulled.imported == long + 3 && result.pulled.waiting.isEmpty)
        #expect(try tablet.verify().isClean)
        // The long batch's entries are hashed for the digest on the chain's thread: the same
        // digest as the tablet's import and a rebuild compute.
        let appended = try phone.digest()
        #expect(try tablet.digest() == appended)
        try phone.rebuild()
        #expect(try phone.digest() == appended)
    }

    /// A long batch refused at its last draft writes nothing, and the next batch chains from
    /// the store's last event as if it had never begun.
    @Test func aLongBatchRefusedWritesNothingAndTheChainGoesOn() throws {
        let dir = TemporaryDirectory()
        let (phone, _) = try Self.pair(dir, at: now)
        let before = try phone.snapshot()
        var drafts = try Self.lines(2_000)
        drafts.append(try draft(#"{"type":"progressRecorded","goal":"\#(UUID().uuidString)","amount":1}"#))
        #expect(throws: LedgerError.self) { try phone.append(drafts, now: now) }
        #expect(try phone.snapshot() == before, "a refused batch changed the store")
        try phone.append(try Self.lines(1_500), now: now)
        let events = try phone.events(missingFrom: [:]).filter { $0.origin == "phone" }
        #expect(events.count == 2 + 1_500)
        for (a, b) in zip(events, events.dropFirst()) { #expect(b.previousHash == EventChain.hash(a)) }
        #expect(try phone.verify().isClean)
    }

    @Test func forgedAlteredTruncatedAndReorderedHistoriesAreRefused() throws {
        let dir = TemporaryDirectory()
        let (phone, tablet) = try Self.pair(dir, at: now)
        try tablet.append(try Self.lines(3), now: now)
        let run = try tablet.events(missingFrom: try phone.originHeads()).filter { $0.origin == "tablet" }
        #expect(run.count == 3)
        // A well-formed event under the phone's name, signed by the tablet's key.
        var forged = run[0]
        forged.origin = "phone"
        forged.sequence = try phone.originHeads()["phone"]! + 1
        forged.id = UUID()
        forged.previousHash = try phone.events(missingFrom: [:]).filter { $0.origin == "phone" }.last.map(EventChain.hash)
        let key = try #require(try tablet.keys.key(ledger: tablet.ledgerID, device: "tablet"))
        forged.signer = key.publicKey
        forged.signature = key.sign(
            EventChain.message(ledger: phone.ledgerID, origin: "phone", sequence: forged.sequence, hash: EventChain.hash(forged)))
        try refused(phone, { try phone.importEvents([forged], from: "test") }, mentioning: "not enrolled for phone")
        // The same without a signature.
        forged.signature = nil
        forged.signer = nil
        try refused(phone, { try phone.importEvents([forged], from: "test") }, mentioning: "without a signature")
        // An altered amount: the chain still links, the signature no longer verifies.
        var altered = run
        altered[1].payload = .progressRecorded(ProgressRecorded(goal: UUID(uuidString: Self.goal)!, amount: try! Amount("999"), occurredAt: now, day: day("2026-11-05")))
        try refused(phone, { try phone.importEvents(altered, from: "test") }, mentioning: "tablet/2")
        // Reordered: two events swap places (and sequences).
        var reordered = run
        reordered.swapAt(0, 1)
        (reordered[0].sequence, reordered[1].sequence) = (1, 2)
        (reordered[0].hlc, reordered[1].hlc) = (reordered[1].hlc, reordered[0].hlc)
        try refused(phone, { try phone.importEvents(reordered, from: "test") }, mentioning: "breaks its chain")
        // Truncated: the batch without its signed end.
        try refused(phone, { try phone.importEvents(Array(run.prefix(2)), from: "test") }, mentioning: "without a signature")
        #expect(try phone.importEvents(run, from: "test").imported == 3)
        #expect(try phone.verify().isClean)
    }

    @Test func aCloneEnrolledByItsSourceIsTrustedByADeviceThatNeverMetTheSource() throws {
        let dir = TemporaryDirectory()
        let (phone, tablet) = try Self.pair(dir, at: now)
        // The watch is cloned from the tablet: the tablet vouches for it; it never meets the phone.
        let watch = try tablet.clone(to: dir.path + "/watch", device: "watch", now: now)
        try phone.append(try Self.lines(2), now: now)
        try watch.append(try Self.lines(2, from: 10), now: now)
        _ = try tablet.sync(with: phone)
        _ = try watch.sync(with: tablet)
        _ = try tablet.sync(with: phone)
        let replays = try [phone, tablet, watch].map { try JSONWriter.string($0.replay().canonicalJSON) }
        #expect(Set(replays).count == 1)
        for s in [phone, tablet, watch] {
            let report = try s.verify()
            #expect(report.isClean, "\(s.device): \(report.problems)")
            #expect(try s.enrolledDevices().map(\.device).sorted() == ["phone", "tablet", "watch"])
        }
    }

    @Test func aRevokedDevicesLaterEventsAreRefusedAndItsEarlierOnesKept() throws {
        let dir = TemporaryDirectory()
        let (phone, tablet) = try Self.pair(dir, at: now)
        try tablet.append(try Self.lines(2), now: now)
        _ = try tablet.sync(with: phone)
        // The tablet is lost: the phone revokes it after the two entries it holds.
        try phone.revoke(device: "tablet", now: now)
        // Meanwhile the tablet (not knowing) writes more, and a sync brings them.
        try tablet.append(try Self.lines(3, from: 5), now: now)
        let result = try phone.sync(with: tablet)
        #expect(result.pulled.imported == 0)
        #expect(result.pulled.revoked.first?.origin == "tablet" && result.pulled.revoked.first?.count == 3)
        #expect(try phone.originHeads()["tablet"] == 2)
        // The tablet learned of its revocation: it may not append any more.
        #expect(ledgerError { try tablet.append(try Self.lines(1), now: now) }?.code == .store)
        #expect(try phone.enrolledDevices().first { $0.device == "tablet" }?.revokedAfter == 2)
        // A device cannot revoke itself, nor an unknown device.
        #expect(ledgerError { try phone.revoke(device: "phone", now: now) }?.code == .invalidInput)
        #expect(ledgerError { try phone.revoke(device: "nobody", now: now) }?.code == .invalidInput)
        #expect(try phone.verify().isClean)
    }

    /// A store that accepted a device's events before it learned of the device's revocation
    /// stops counting them once it does: every store then folds the same events.
    @Test func afterARevocationEveryStoreFoldsTheSameEventsWhateverItHeldBefore() throws {
        let dir = TemporaryDirectory()
        let (phone, tablet) = try Self.pair(dir, at: now)
        let watch = try phone.clone(to: dir.path + "/watch", device: "watch", now: now)
        try tablet.append(try Self.lines(2), now: now)
        _ = try tablet.sync(with: phone)
        _ = try watch.sync(with: phone)
        try phone.revoke(device: "tablet", now: now)
        // The watch receives the tablet's later entries before it hears of the revocation.
        try tablet.append(try Self.lines(3, from: 5), now: now)
        _ = try watch.sync(with: tablet)
        #expect(try watch.goalState(UUID(uuidString: Self.goal)!).entries.count == 5)
        _ = try watch.sync(with: phone)
        #expect(try watch.goalState(UUID(uuidString: Self.goal)!).entries.count == 2)
        let folded = try [phone, watch].map { try JSONWriter.string($0.replay().canonicalJSON) }
        #expect(folded[0] == folded[1])
        #expect(try phone.replay().digest == watch.projection().digest)
        #expect(try watch.verify().isClean && phone.verify().isClean)
    }

    @Test func aStoreRestoredFromAnOldBackupRecoversItsOwnLaterEventsBeforeAppending() throws {
        let dir = TemporaryDirectory()
        let (phone, tablet) = try Self.pair(dir, at: now)
        try phone.backup(to: dir.path + "/backup", withKey: true)
        try phone.append(try Self.lines(2), now: now)
        try phone.append(try Self.lines(2, from: 2), now: now)
        _ = try phone.sync(with: tablet)
        // The phone is lost; its backup from two batches ago comes back.
        let restored = try LedgerStore.open(at: dir.path + "/backup")
        #expect(ledgerError { try restored.append(try Self.lines(1), now: now) }?.code == .store)
        let pulled = try restored.sync(with: tablet).pulled
        #expect(pulled.imported == 4)
        try restored.append(try Self.lines(1, from: 9), now: now)
        _ = try restored.sync(with: tablet)
        #expect(try restored.verify().isClean && tablet.verify().isClean)
        #expect(try JSONWriter.string(restored.replay().canonicalJSON) == JSONWriter.string(tablet.replay().canonicalJSON))
        // A backup without its key cannot sign.
        try phone.backup(to: dir.path + "/keyless")
        let keyless = try LedgerStore.open(at: dir.path + "/keyless")
        _ = try keyless.sync(with: tablet)
        #expect(ledgerError { try keyless.append(try Self.lines(1), now: now) }?.message.contains("key") == true)
    }

    @Test func aForkOfOneDevicesHistoryIsReportedOnTheFirstSync() throws {
        let dir = TemporaryDirectory()
        let (phone, tablet) = try Self.pair(dir, at: now)
        // A copy of the tablet's store (its key included) lives on as a second "tablet".
        try FileManager.default.copyItem(atPath: dir.path + "/tablet", toPath: dir.path + "/copy")
        let copy = try LedgerStore.open(at: dir.path + "/copy")
        try tablet.append(try Self.lines(1), now: now)
        try copy.append(try Self.lines(1, from: 7), now: now)
        _ = try tablet.sync(with: phone)
        // Each side keeps its own and sets the other's aside, naming the fork, and goes on.
        let result = try copy.sync(with: phone)
        let reasons = (result.pulled.waiting + result.pushed.waiting).map(\.reason)
        #expect(reasons.contains { $0.contains("fork") && $0.contains("tablet") }, "\(reasons)")
        #expect(try phone.waitingEvents().first?.origin == "tablet")
        // Same length, different content: found by comparing the last event each holds.
        #expect(try copy.originHeads()["tablet"] == phone.originHeads()["tablet"])
    }

    /// A copy of a store renamed to another device (its metadata rewritten, as `mdb_dump` and
    /// `mdb_load` allow) cannot write in that device's name: its key is not the one enrolled.
    @Test func aStoreRenamedToAnotherDeviceCannotWriteInItsName() throws {
        let dir = TemporaryDirectory()
        let (phone, _) = try Self.pair(dir, at: now)
        try FileManager.default.copyItem(atPath: dir.path + "/tablet", toPath: dir.path + "/renamed")
        do {
            let env = try Environment(path: dir.path + "/renamed")
            let meta = try env.existingDatabase(named: "meta")
            try env.write { txn in try txn.put(meta, key: MetaKey.device, value: Array("phone".utf8)) }
        }
        let renamed = try LedgerStore.open(at: dir.path + "/renamed")
        #expect(renamed.device == "phone")
        let error = ledgerError { try renamed.append(try Self.lines(1), now: now) }
        #expect(error?.code == .store && error?.message.contains("not the one enrolled for phone") == true, "\(String(describing: error))")
        #expect(try phone.verify().isClean)
    }

    @Test func aLedgerFoundedBeforeSigningMigratesAndKeepsItsHistory() throws {
        let dir = TemporaryDirectory()
        let old = try LedgerStore.create(at: dir.path + "/old", device: "phone", signed: false)
        try old.append(
            [try draft(#"{"type":"goalCreated","goal":"\#(Self.goal)","title":"Save","progress":{"kind":"measurable","target":5}}"#)]
                + (try Self.lines(3)), now: now)
        let other = try old.clone(to: dir.path + "/other", device: "tablet", now: now)
        try other.append(try Self.lines(2), now: now)
        _ = try other.sync(with: old)
        #expect(!old.isSignedLedger)
        let before = try old.events(missingFrom: [:])
        _ = try old.migrate(now: now)
        // The old events are unchanged and unsigned; the enrolment starts the chain.
        let after = Dictionary(uniqueKeysWithValues: try old.events(missingFrom: [:]).map { ($0.id, $0) })
        #expect(before.allSatisfy { after[$0.id].map(EventCodec.encode) == EventCodec.encode($0) })
        #expect(after.count == before.count + 1)
        #expect(try old.enrolledDevices().map(\.device) == ["phone"])
        try old.append(try Self.lines(1), now: now)
        // The other device still writes unsigned until it migrates; then it signs too.
        try other.append(try Self.lines(1, from: 3), now: now)
        _ = try other.sync(with: old)
        _ = try other.migrate(now: now)
        try other.append(try Self.lines(1, from: 4), now: now)
        _ = try other.sync(with: old)
        let report = try old.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.unsignedEvents == 7)
        #expect(try JSONWriter.string(old.replay().canonicalJSON) == JSONWriter.string(other.replay().canonicalJSON))
        // After its enrolment, an unsigned event of the phone is refused.
        var unsigned = try old.events(missingFrom: [:]).filter { $0.origin == "phone" }.last!
        unsigned.sequence += 1
        unsigned.hlc = HLC(rawValue: unsigned.hlc.rawValue + 10)
        unsigned.id = UUID()
        unsigned.previousHash = nil
        unsigned.signature = nil
        unsigned.signer = nil
        try refused(other, { try other.importEvents([unsigned], from: "test") }, mentioning: "not signed")
    }
}
