import Foundation
import Testing

@testable import GoalLedger

/// The reasons an app branches on, beside the message it shows.
struct ErrorReasonTests {
    let now = instant("2026-11-05T12:00:00Z")

    struct BrokenCenter: ReminderCenter {
        struct Unplugged: Error, CustomStringConvertible { var description: String { "unplugged" } }
        func pendingRequests() async throws -> [NotificationRequest] { throw Unplugged() }
        func add(_ request: NotificationRequest) async throws {}
        func removePendingRequests(withIdentifiers ids: [String]) async throws {}
        var supportsDeliveredNotifications: Bool { false }
        func deliveredNotifications() async throws -> [DeliveredNotification] { [] }
        func removeDeliveredNotifications(withIdentifiers ids: [String]) async throws {}
    }

    @Test func eachFailureAnAppHandlesHasItsReason() async throws {
        let t = try TemporaryStore()
        let goal = try t.store.createGoal(title: "Read", now: now)
        // A rule broken by the second event of a batch: its field and place.
        let bad = ledgerError {
            try t.store.append(
                [EventDraft(payload: .tagAdded(TagAdded(goal: goal, tag: "a"))), EventDraft(payload: .tagAdded(TagAdded(goal: UUID(), tag: "b")))],
                now: now)
        }
        if case .unknownGoal(_, let index, let line)? = bad?.reason {
            #expect(index == 2 && line == nil)
        } else {
            Issue.record("an unknown goal is its own reason: \(String(describing: bad?.reason))")
        }
        // The same from JSON lines names the line too.
        let unknown = UUID()
        let line = ledgerError {
            try t.store.append(try drafts([#"{"type":"tagAdded","goal":"\#(unknown.uuidString)","tag":"x"}"#]), lines: [7], now: now)
        }
        #expect(line?.reason == .unknownGoal(goal: unknown, index: 1, line: 7), "\(String(describing: line?.reason))")
        #expect(line?.code == .invalidInput)
        // Another broken rule keeps its field.
        let empty = ledgerError { try t.store.append([EventDraft(payload: .tagAdded(TagAdded(goal: goal, tag: "")))], now: now) }
        if case .invalidEvent(let field, 1, nil)? = empty?.reason { #expect(field == "tag") } else { Issue.record("\(String(describing: empty))") }
        let stale = ledgerError {
            try t.store.append([EventDraft(payload: .tagAdded(TagAdded(goal: goal, tag: "a")))], expectedVersion: 5, now: now)
        }
        #expect(stale?.reason == .versionConflict(goal: goal, expected: 5, actual: 1))
        let missing = ledgerError { _ = try LedgerStore.open(at: t.directory.path + "/nowhere") }
        #expect(missing?.reason == .noStore(path: t.directory.path + "/nowhere"))
        // A center that fails: its own error is carried.
        try t.store.reportAuthorization(.authorized, now: now)
        do {
            _ = try await Reconciler(store: t.store, centerID: "broken").reconcile(center: BrokenCenter(), now: now)
            Issue.record("a failing center went unreported")
        } catch {
            #expect(error.reason == .notificationCenterFailed(description: "unplugged"))
            #expect(error.underlyingError is BrokenCenter.Unplugged)
        }
        // A failure with no more specific reason than its code.
        #expect(LedgerError(.store, "anything").reason == nil)
        #expect(LedgerError("a projection row is damaged", reason: .projectionDamaged).code == .store)
    }

    /// The reason determines the code: one mapping, the codes the library always threw them with.
    @Test func theReasonDeterminesTheCode() {
        let goal = UUID()
        let codes: [(LedgerError.Reason, LedgerError.Code)] = [
            (.invalidEvent(field: "title", index: 1, line: nil), .invalidInput),
            (.unknownGoal(goal: goal, index: 2, line: 7), .invalidInput),
            (.versionConflict(goal: goal, expected: 1, actual: 2), .versionConflict),
            (.fieldVersionConflict(goal: goal, field: .title), .versionConflict),
            (.serviceRefused(peer: "s", status: 400), .invalidInput),
            (.serviceRefused(peer: "s", status: 413), .invalidInput),
            (.serviceRefused(peer: "s", status: 401), .store),
            (.serviceRefused(peer: "s", status: 404), .store),
            (.notificationCenterFailed(description: "unplugged"), .internal),
            (.noStore(path: "/s"), .store),
            (.storeExists(path: "/s"), .store),
            (.deviceNotEnrolled(device: "watch", publicKey: []), .store),
            (.deviceNotEnrolled(device: "watch", publicKey: [], byService: true), .store),
            (.signingKeyMissing(device: "phone", path: "/s"), .store),
            (.deviceRevoked(device: "phone", after: 3), .store),
            (.signerNotTrusted(device: "phone"), .store),
            (.restoredFromBackup(device: "phone"), .store),
            (.projectionDamaged, .store),
            (.storeDamaged(position: 2), .store),
            (.indexDamaged(position: nil), .store),
            (.fileDamaged(position: nil), .store),
            (.needsMigration, .store),
            (.hubNotInitialized(hub: "h"), .store),
            (.hubAccessNotGranted(hub: "h"), .store),
            (.peerUnreachable(peer: "p"), .store),
        ]
        for (reason, code) in codes {
            let error = LedgerError("what failed", reason: reason)
            #expect(error.code == code && error.reason == reason && error.message == "what failed", "\(reason)")
        }
        // The package's helpers say which damage it is.
        #expect(LedgerError.damaged("an index", position: 4).reason == .indexDamaged(position: 4))
        #expect(LedgerError.storeDamaged(at: "/s", "page 7").reason == .fileDamaged(position: nil))
        #expect(LedgerError.storeDamaged(at: "/s", "page 7").isFileDamage && !LedgerError.damaged("an index").isFileDamage)
    }

    /// A key store whose key can be swapped behind the store's back (a key replaced by hand).
    final class SwappableKeys: DeviceKeyStore, @unchecked Sendable {
        let lock = NSLock()
        var keys: [String: SigningKey] = [:]
        func key(ledger: UUID, device: String) throws(LedgerError) -> SigningKey? { lock.withLock { keys[device] } }
        func save(_ key: SigningKey, ledger: UUID, device: String) throws(LedgerError) { lock.withLock { keys[device] = key } }
        func swap(_ device: String) { lock.withLock { keys[device] = SigningKey.generate() } }
    }

    @Test func aKeyTheLedgerDoesNotTrustIsItsOwnReason() throws {
        let t = TemporaryDirectory()
        let keys = SwappableKeys()
        let store = try LedgerStore.create(at: t.path + "/phone", device: "phone", keys: keys)
        try store.createGoal(title: "Read", now: now)
        keys.swap("phone")
        let e = ledgerError { try store.createGoal(title: "Walk", now: now) }
        #expect(e?.reason == .signerNotTrusted(device: "phone"), "\(String(describing: e))")
        #expect(e?.code == .store)
    }

    @Test func aRevokedDeviceIsToldSo() throws {
        let t = try TemporaryStore()
        let laptop = try t.store.clone(to: t.directory.path + "/laptop", device: "laptop", now: now)
        try laptop.createGoal(title: "Read", now: now)
        _ = try t.store.sync(with: laptop)
        try t.store.revoke(device: "laptop", now: now)
        _ = try t.store.sync(with: laptop)
        let e = ledgerError { try laptop.createGoal(title: "Walk", now: now) }
        if case .deviceRevoked(let device, let after)? = e?.reason {
            #expect(device == "laptop" && after >= 1)
        } else {
            Issue.record("\(String(describing: e))")
        }
    }

    @Test func aRestoredBackupMustSyncBeforeItWrites() throws {
        let t = try TemporaryStore()
        try t.store.createGoal(title: "Read", now: now)
        try t.store.backup(to: t.directory.path + "/backup", withKey: true)
        let restored = try LedgerStore.open(at: t.directory.path + "/backup")
        let e = ledgerError { try restored.createGoal(title: "Walk", now: now) }
        #expect(e?.reason == .restoredFromBackup(device: "phone"), "\(String(describing: e))")
    }

    @Test func aDamagedRecordNamesItsPosition() throws {
        let t = try TemporaryStore()
        try t.store.createGoal(title: "Read", now: now)
        try t.store.createGoal(title: "Walk", now: now)
        try t.store.writeTransaction { txn in
            try txn.put(t.store.layout.events, key: UInt64(2).bigEndianBytes, value: [9, 9, 9, 9, 9, 9])
        }
        let e = ledgerError { try t.store.scanEvents { _, _ in true } }
        #expect(e?.reason == .storeDamaged(position: 2), "\(String(describing: e))")
    }

    @Test func aForkedPeerHistoryWaitsWithItsCause() throws {
        let t = try TemporaryStore()
        try t.store.createGoal(title: "Read", now: now)
        // The store copied file by file and used as the same device twice: two histories.
        let copyPath = t.directory.path + "/copy"
        try FileManager.default.copyItem(atPath: t.store.path, toPath: copyPath)
        let copy = try LedgerStore.open(at: copyPath)
        try copy.createGoal(title: "Walk", now: now)
        try t.store.createGoal(title: "Swim", now: now)
        let result = try t.store.apply(try copy.changeSet(since: try t.store.syncState()), from: "the copy")
        #expect(result.imported == 0)
        #expect(result.waiting.map(\.cause) == [.fork], "\(result.waiting)")
        #expect(result.waiting.first?.origin == "phone")
        // Kept with the store: the cause survives.
        #expect(try t.store.waitingEvents().map(\.cause) == [.fork])
    }

    @Test func aWaitingRowWrittenBeforeCausesWereKeptReadsAsOther() {
        let old = UInt64(3).bigEndianBytes + UInt64(2).bigEndianBytes + Array("a gap".utf8)
        let w = WaitingEvents(origin: "laptop", stored: old)
        #expect(w?.cause == .other && w?.reason == "a gap" && w?.sequence == 3 && w?.count == 2)
        let new = WaitingEvents(origin: "laptop", sequence: 4, count: 1, cause: .badSignature, reason: "altered")
        #expect(WaitingEvents(origin: "laptop", stored: new.storedValue) == new)
    }

    @Test func aDamagedProjectionRowIsRepairedByARebuild() throws {
        let t = try TemporaryStore()
        let goal = try t.store.createGoal(title: "Read", now: now)
        try t.store.writeTransaction { txn in
            let tables = try txn.activeProjection()
            try txn.put(tables.goals, key: goal.bytes, value: [UInt8](repeating: 1, count: 3))
        }
        let e = ledgerError { _ = try t.store.goals(now: now) }
        #expect(e?.reason == .projectionDamaged, "\(String(describing: e))")
        try t.store.rebuild()
        #expect(try t.store.goals(now: now).map(\.goal.title) == ["Read"])
    }
}
