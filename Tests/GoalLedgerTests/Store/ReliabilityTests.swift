import Foundation
import LMDB
import LedgerFileCenter
import Synchronization
import Testing

@testable import GoalLedger

struct ReliabilityTests {
    let now = instant("2026-11-05T12:00:00Z")

    func progress(_ n: Int, goal: String = runGoal) throws -> [EventDraft] {
        try drafts((0..<n).map { _ in #"{"type":"progressRecorded","goal":"\#(goal)","amount":1}"# })
    }

    @Test func aStoreWithATinyMapKeepsAcceptingAppends() throws {
        let dir = TemporaryDirectory()
        var options = StoreOptions()
        options.initialMapSize = 128 << 10
        let store = try LedgerStore.create(at: dir.path + "/s", device: "phone", options: options)
        try store.append(try drafts(dayOne), now: now)
        for _ in 0..<10 { try store.append(try progress(1_000), now: now) }
        #expect(try store.lastPosition() == 10_007)
        #expect(store.env.mapSize > options.initialMapSize)
        #expect(try store.verify().isClean)
        // Reopened with the same tiny setting, the store adopts the grown map.
        let reopened = try LedgerStore.open(at: dir.path + "/s", options: options)
        try reopened.append(try progress(10), now: now)
        #expect(try reopened.lastPosition() == 10_017)
    }

    @Test func storeFilesAreTheOwnersOnly() throws {
        let t = try TemporaryStore()
        let fm = FileManager.default
        #expect((try fm.attributesOfItem(atPath: t.store.path)[.posixPermissions] as? Int) == 0o700)
        for file in ["data.mdb", "lock.mdb"] {
            #expect((try fm.attributesOfItem(atPath: t.store.path + "/" + file)[.posixPermissions] as? Int) == 0o600, "\(file)")
        }
        let backup = t.directory.path + "/backup"
        try t.store.backup(to: backup)
        #expect((try fm.attributesOfItem(atPath: backup)[.posixPermissions] as? Int) == 0o700)
        #expect((try fm.attributesOfItem(atPath: backup + "/data.mdb")[.posixPermissions] as? Int) == 0o600)
        let export = t.directory.path + "/store.export"
        _ = try t.store.export(to: export)
        #expect((try fm.attributesOfItem(atPath: export)[.posixPermissions] as? Int) == 0o600)
        let center = try NotificationCenterFile.load(t.directory.path + "/center.json", defaultCapacity: 64)
        try center.save()
        #expect((try fm.attributesOfItem(atPath: t.directory.path + "/center.json")[.posixPermissions] as? Int) == 0o600)
    }

    @Test func aDamagedStoreRefusesWritesInsteadOfBuildingOnThem() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        let record = try #require(try t.store.readTransaction { txn in try txn.get(t.store.layout.events, key: UInt64(7).bigEndianBytes) })
        let file = URL(fileURLWithPath: t.store.path + "/data.mdb")
        var data = try Data(contentsOf: file)
        let range = try #require(data.range(of: Data(record)))
        data[range.lowerBound + record.count - 3] ^= 0x10
        try data.write(to: file)
        let damaged = try LedgerStore.open(at: t.store.path)
        let before = try damaged.snapshot()
        let error = ledgerError { try damaged.append(try self.progress(1), now: self.now) }
        #expect(error?.code == .store)
        #expect(error?.message.contains("damaged at position 7") == true, "\(error?.message ?? "")")
        #expect(try damaged.snapshot() == before)
        #expect(ledgerError { try damaged.importEvents([], from: "test") }?.code == .store)
    }

    @Test func backupsAreConsistentAndCompact() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        try t.store.append(try progress(500), now: now)
        try t.store.rebuild()
        let copy = t.directory.path + "/copy"
        try t.store.backup(to: copy)
        let restored = try LedgerStore.open(at: copy)
        #expect(try restored.verify().isClean)
        #expect(try restored.replay() == (try t.store.replay()))
        #expect(try restored.storageReport().fileBytes <= (try t.store.storageReport().fileBytes))
        #expect(ledgerError { try t.store.backup(to: copy) }?.code == .invalidInput)  // not empty
    }

    /// A backup taken while another thread keeps appending holds a prefix of the log that
    /// opens and verifies.
    @Test func aBackupTakenWhileAWriterRunsIsConsistent() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        let store = t.store
        let batches = try (0..<40).map { _ in try progress(250) }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for b in batches { _ = try? store.append(b, now: instant("2026-11-05T12:00:00Z")) }
            done.signal()
        }
        var copies: [String] = []
        for i in 0..<4 {
            let copy = t.directory.path + "/backup\(i)"
            try store.backup(to: copy)
            copies.append(copy)
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        let final = try store.lastPosition()
        for copy in copies {
            let restored = try LedgerStore.open(at: copy)
            let count = try restored.lastPosition()
            // Whole batches only: the snapshot falls between two commits.
            #expect(count >= 7 && count <= final && (count - 7) % 250 == 0, "\(copy): \(count) events")
            let report = try restored.verify()
            #expect(report.isClean, "\(copy): \(report.problems.prefix(3))")
        }
    }

    /// A reader runs to completion while a writer is inside its transaction; a second writer
    /// waits for the first and then writes.
    @Test func readersAreNeverBlockedByAWriterAndWritersTakeTurns() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        let store = t.store
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writerDone = DispatchSemaphore(value: 0)
        let secondDone = DispatchSemaphore(value: 0)
        let batch = try progress(100)
        let later = try progress(5)
        Thread.detachNewThread {
            _ = try? store.writeTransaction { txn in
                try txn.put(store.layout.meta, key: Array("test.marker".utf8), value: [1])
                inside.signal()
                _ = release.wait(timeout: .now() + 20)
            }
            _ = try? store.append(batch, now: instant("2026-11-05T12:00:00Z"))
            writerDone.signal()
        }
        #expect(inside.wait(timeout: .now() + 20) == .success)
        // While the writer holds the write lock, reads complete.
        #expect(try store.replay().position == 7)
        #expect(try store.verify().isClean)
        Thread.detachNewThread {
            _ = try? store.append(later, now: instant("2026-11-05T12:00:00Z"))
            secondDone.signal()
        }
        release.signal()
        #expect(writerDone.wait(timeout: .now() + 20) == .success)
        #expect(secondDone.wait(timeout: .now() + 20) == .success)
        #expect(try store.lastPosition() == 112)
        #expect(try store.verify().isClean)
    }

    /// A subscriber that follows the feed holds no transaction between reads, so writers keep
    /// reusing freed pages: the file grows no more than without it.
    @Test func aLongLivedFeedDoesNotGrowTheStore() throws {
        func run(withFeed: Bool) throws -> Int {
            let t = try TemporaryStore()
            try t.store.append(try drafts(dayOne), now: now)
            var feed = ChangeFeed(store: t.store, after: 0)
            for _ in 0..<60 {
                try t.store.append(try drafts([#"{"type":"goalEdited","goal":"\#(runGoal)","title":"x"}"#]), now: now)
                if withFeed { _ = try feed.next() }
            }
            return try t.store.storageReport().fileBytes
        }
        let without = try run(withFeed: false)
        let with = try run(withFeed: true)
        #expect(with <= without + 16 * 4096, "\(with) bytes with a feed, \(without) without")
    }
}

struct OneStorePerProcessTests {
    @Test func aSecondOpenOfAStoreSharesTheFirstOnesEnvironment() throws {
        // LMDB allows one open environment per file and process: a second `open` (another
        // spelling of the path too) shares the first one's, so each sees the other's writes.
        let dir = TemporaryDirectory()
        var first: LedgerStore? = try LedgerStore.create(at: dir.path + "/s", device: "phone")
        let second = try LedgerStore.open(at: dir.path + "/./s")
        #expect(first!.env === second.env)
        let goal = UUID()
        try first!.append(
            [EventDraft(payload: .goalCreated(GoalCreated(goal: goal, title: "Shared")))], now: instant("2026-11-05T12:00:00Z"))
        #expect(try second.goal(goal)?.title == "Shared")
        first = nil
        #expect(try second.lastPosition() == 1)
        #expect(try LedgerStore.open(at: dir.path + "/s").env === second.env)
    }
}
