import Foundation
import LedgerTestSupport
import Sodium
import Testing

@testable import GoalLedger

/// A rotation's new key is durable before the rotation commits, and a store whose process died
/// between the commit and making the key current adopts it when it opens.
struct KeyRotationTests {
    let now = instant("2026-11-05T12:00:00Z")

    static func keyFile(_ path: String) -> String { path + "/" + DirectoryKeyStore.fileName }

    @Test func theNewKeyIsStagedBeforeTheRotationCommits() throws {
        let t = try TemporaryStore()
        let path = t.directory.path + "/store"
        let original = try #require(try t.store.read { try $0.publicKey() })
        try t.store.write { w in
            try w.rotateKey(now: now)
            // Not yet committed: the new key is already on disk, beside the current one.
            let staged = try #require(FileManager.default.contents(atPath: Self.keyFile(path) + ".next"))
            #expect(SigningKey(secretBytes: Array(staged))?.publicKey != original)
            #expect(try t.store.read { try $0.publicKey() } == original)
        }
        #expect(!FileManager.default.fileExists(atPath: Self.keyFile(path) + ".next"))
        #expect(try t.store.read { try $0.publicKey() } != original)
    }

    /// The state a process killed after the rotation's commit leaves: the rotation committed,
    /// `device.key.next` holding the new key, `device.key` still the old one.
    static func crashedRotation(at path: String, now: Instant) throws -> (old: [UInt8], new: [UInt8]) {
        let store = try LedgerStore.create(at: path, device: "phone")
        _ = try store.write { try $0.createGoal(title: "Before the rotation", now: now) }
        let old = try #require(FileManager.default.contents(atPath: keyFile(path)))
        try store.rotateKey(now: now)
        let new = try #require(FileManager.default.contents(atPath: keyFile(path)))
        try FileManager.default.moveItem(atPath: keyFile(path), toPath: keyFile(path) + ".next")
        try Data(old).write(to: URL(fileURLWithPath: keyFile(path)))
        return (Array(old), Array(new))
    }

    @Test func aStoreKilledBetweenTheCommitAndTheRenameAdoptsTheNewKeyWhenItOpens() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/phone"
        let (_, new) = try Self.crashedRotation(at: path, now: now)
        let store = try LedgerStore.open(at: path)
        #expect(FileManager.default.contents(atPath: Self.keyFile(path)).map(Array.init) == new)
        #expect(!FileManager.default.fileExists(atPath: Self.keyFile(path) + ".next"))
        // It appends, signed by the enrolled key, and rotates again.
        _ = try store.write { try $0.createGoal(title: "After the crash", now: now) }
        try store.rotateKey(now: now)
        _ = try store.write { try $0.createGoal(title: "After the second rotation", now: now) }
        let report = try store.read { try $0.verify() }
        #expect(report.isClean, "\(report.findings)")
        let enrolled = try store.read { try $0.enrolledDevices() }.first { $0.device == "phone" }?.publicKey
        #expect(try store.read { try $0.publicKey() } == enrolled)
    }

    @Test func aKeyStagedByARotationThatRolledBackIsDiscardedNotAdopted() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/phone"
        let key: [UInt8]
        do {
            let store = try LedgerStore.create(at: path, device: "phone")
            _ = try store.write { try $0.createGoal(title: "Kept", now: now) }
            key = try #require(FileManager.default.contents(atPath: Self.keyFile(path))).map { $0 }
        }
        try Data(SigningKey.generate().secretBytes).write(to: URL(fileURLWithPath: Self.keyFile(path) + ".next"))
        let store = try LedgerStore.open(at: path)
        #expect(FileManager.default.contents(atPath: Self.keyFile(path)).map(Array.init) == key)
        #expect(!FileManager.default.fileExists(atPath: Self.keyFile(path) + ".next"))
        _ = try store.write { try $0.createGoal(title: "Still signed by the enrolled key", now: now) }
        #expect(try store.read { try $0.verify() }.isClean)
    }
}
