import Foundation
import Synchronization
import Testing

@testable import GoalLedger

/// The id filter an append checks its new ids against before the id index: never a duplicate
/// missed, whatever wrote to the store since the filter was made.
struct StoredIDFilterTests {
    let now = instant("2026-11-20T12:00:00Z")
    static let goal = UUID(uuidString: "0C7A1E55-2B3D-4E5F-8A9B-0C1D2E3F4A5B")!

    /// The filter never turns away a key it holds, and turns away most others: at 32 bits a
    /// key, about 4 in 1,000 strangers find both their bits set.
    @Test func theKeyFilterKeepsEveryKeyAndTurnsAwayMostStrangers() {
        var random = SeededRandom(seed: 41)
        var filter = KeyFilter(for: 4_000)
        #expect(!filter.wantsRebuilding(for: 4_000))
        #expect(filter.wantsRebuilding(for: 9_000))
        let held = (0..<4_000).map { _ in random.next() }
        for key in held { filter.insert(key) }
        #expect(held.allSatisfy { filter.mayHold($0) })
        let strangers = (0..<20_000).map { _ in random.next() }
        let passed = strangers.filter { filter.mayHold($0) }.count
        #expect(passed < 20_000 * 3 / 100, "\(passed) of 20,000 strangers passed")
        // Without bits, every key may be held.
        #expect(KeyFilter().mayHold(strangers[0]))
        #expect(KeyFilter().wantsRebuilding(for: 1))
    }

    func creation() throws -> EventDraft {
        try draft(#"{"type":"goalCreated","goal":"\#(Self.goal)","title":"Run","progress":{"kind":"measurable","target":50}}"#)
    }

    /// `count` progress drafts with ids drawn from `random`.
    func progress(_ count: Int, _ random: inout SeededRandom) throws -> [EventDraft] {
        try (0..<count).map { _ in
            try draft(#"{"id":"\#(random.uuid())","type":"progressRecorded","goal":"\#(Self.goal)","amount":1}"#)
        }
    }

    /// The ids' results of appending `drafts`: each a duplicate or not, with its position.
    func append(_ drafts: [EventDraft], to store: LedgerStore) throws -> [(duplicate: Bool, position: UInt64)] {
        try store.append(drafts, now: now).map { ($0.duplicate, $0.position) }
    }

    /// Many appends of new ids, then one that brings back ids of several earlier ones among
    /// new ones: the filter is in use by then, and each old id is a duplicate, at its position.
    @Test func idsOfEarlierAppendsAreDuplicatesWhileTheFilterIsInUse() throws {
        let t = try TemporaryStore()
        var random = SeededRandom(seed: 61)
        _ = try append([creation()], to: t.store)
        var earlier: [(draft: EventDraft, position: UInt64)] = []
        for _ in 0..<30 {
            let drafts = try progress(40, &random)
            let results = try append(drafts, to: t.store)
            #expect(results.allSatisfy { !$0.duplicate })
            earlier += zip(drafts, results).map { ($0, $1.position) }
        }
        #expect(t.store.idFilter.withLock { $0.holdsCommittedKeys })
        let again = stride(from: 3, to: earlier.count, by: 97).map { earlier[$0] }
        let fresh = try progress(20, &random)
        let results = try append(again.map(\.draft) + fresh, to: t.store)
        #expect(results.prefix(again.count).map(\.duplicate) == Array(repeating: true, count: again.count))
        #expect(results.prefix(again.count).map(\.position) == again.map(\.position))
        #expect(results.suffix(fresh.count).allSatisfy { !$0.duplicate })
        #expect(t.store.idFilter.withLock { $0.holdsCommittedKeys })
    }

    /// Two store objects on the same files, two threads each, appending at once: each batch
    /// brings new ids and ids an earlier batch of any thread wrote. Whatever the interleaving
    /// (a commit reported after another write began, another object's writes between one's
    /// own), every id written before is a duplicate, and every new one is appended once.
    @Test func concurrentWritersNeverMissADuplicate() throws {
        let t = try TemporaryStore()
        _ = try append([creation()], to: t.store)
        var seed = SeededRandom(seed: 63)
        for _ in 0..<10 { _ = try append(try progress(40, &seed), to: t.store) }
        let other = try LedgerStore.open(at: t.store.path)
        let stores = [t.store, t.store, other, other]
        let written = Mutex<[EventDraft]>([])
        let missed = Mutex(0)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: stores.count) { worker in
            var random = SeededRandom(seed: UInt64(100 + worker))
            do {
                for round in 0..<15 {
                    let fresh = try progress(8, &random)
                    let earlier = written.withLock { w in w.isEmpty ? [] : (0..<4).map { w[(round * 7 + $0 * 13 + worker) % w.count] } }
                    let results = try append(earlier + fresh, to: stores[worker])
                    missed.withLock { $0 += results.prefix(earlier.count).filter { !$0.duplicate }.count }
                    if results.suffix(fresh.count).contains(where: \.duplicate) {
                        failures.withLock { $0.append("worker \(worker), round \(round): a new id reported as a duplicate") }
                    }
                    written.withLock { $0 += fresh }
                }
            } catch {
                failures.withLock { $0.append("worker \(worker): \(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(missed.withLock { $0 } == 0)
        // Each id once in the log: 1 creation, 400 earlier events, 4 × 15 × 8 new ones.
        let count = try t.store.reading { try $0.status().events }
        #expect(count == 1 + 400 + 4 * 15 * 8)
    }

    /// Events the filter never saw: another store object on the same files appends (as another
    /// process would), or this store imports, alone or with an append in one transaction. The
    /// next append that brings their ids finds them stored.
    @Test(arguments: ["another store", "an import", "an import and an append in one write"])
    func idsWrittenPastTheFilterAreDuplicatesAllTheSame(_ writer: String) throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        var random = SeededRandom(seed: 62)
        _ = try append([creation()], to: t.store)
        for _ in 0..<10 { _ = try append(try progress(40, &random), to: t.store) }
        #expect(t.store.idFilter.withLock { $0.holdsCommittedKeys })
        let written = try progress(30, &random)
        switch writer {
        case "another store":
            let other = try LedgerStore.open(at: t.store.path)
            _ = try append(written, to: other)
        default:
            // The phone's events, made in a store of its own, imported.
            let phoneDirectory = TemporaryDirectory()
            let phone = try LedgerStore.create(at: phoneDirectory.path + "/store", device: "phone", ledger: t.store.ledgerID, signed: false)
            _ = try phone.importEvents(try t.store.reading { try $0.events(missingFrom: [:]) }, from: "laptop")
            _ = try phone.append(written, now: now)
            let events = try phone.reading { try $0.events(missingFrom: try t.store.originHeads()) }
            #expect(Set(events.map(\.id)).isSuperset(of: written.compactMap(\.id)))
            if writer == "an import" {
                _ = try t.store.importEvents(events, from: "phone")
            } else {
                // The append in the import's transaction brings new ids only: the filter
                // must not take the import's for its own.
                let more = try progress(5, &random)
                try t.store.write { w in
                    _ = try w.importEvents(events, from: "phone")
                    _ = try w.append(more, now: now)
                }
            }
        }
        let results = try append(written, to: t.store)
        #expect(results.allSatisfy { $0.duplicate }, "\(results.filter { !$0.duplicate }.count) of \(written.count) appended again")
    }
}
