import Foundation
import GoalLedgerTesting
import Testing

@testable import GoalLedger

// The example of the article "Syncing through a relay", compiled and run: the article quotes
// the code between "Relay begin" and "Relay end", and between "Example begin" and "Example
// end", as it is (`theArticleShowsThisCode`).

// Relay begin
/// A relay that keeps every blob it is given and hands each device every blob, as a
/// CloudKit container or a bucket would: here in memory, delivering in any order and some
/// blobs twice.
actor BlobRelay {
    private var blobs: [[UInt8]] = []
    func upload(_ blob: [UInt8]) { blobs.append(blob) }
    /// Every blob, last first, and the first one twice: the worst a relay may do.
    func download() -> [[UInt8]] { blobs.reversed() + blobs.prefix(1) }
}

/// Hands the relay what it lacks of `store`, blob by blob; returns the token to keep once the
/// relay has confirmed every upload. (An upload that fails throws, and the app keeps the old
/// token: the blob goes again next time.)
func sendToRelay(_ store: LedgerStore, token: RelayToken?, relay: BlobRelay) async throws -> RelayToken? {
    var confirmed = token
    while true {
        let since = confirmed
        let (blob, next) = try await store.read { try $0.outgoing(since: since) }
        if blob.count == 0 { return confirmed }
        await relay.upload(blob.encoded())
        confirmed = next
    }
}

/// Applies the blobs the relay delivered, in the order they came; returns the token moved past
/// them (so they are not handed back to the relay).
func receiveFromRelay(_ store: LedgerStore, token: RelayToken?, blobs: [[UInt8]]) async throws -> RelayToken? {
    var current = token
    for bytes in blobs {
        let blob = try ChangeSet(decoding: bytes, source: "a blob of the relay")
        let since = current
        let applied = try await store.write { try $0.applyRelayed(blob, token: since) }
        current = applied.token
    }
    return current
}
// Relay end

struct RelaySyncTests {
    let now = instant("2026-11-05T12:00:00Z")

    // Example begin
    @Test func threeDevicesConvergeThroughARelay() async throws {
        let ledger = try TemporaryLedger(device: "phone")
        let phone = ledger.store
        let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!
        let water = try await phone.write {
            try $0.createGoal(title: "Water", progress: .measurable(target: Amount(8), unit: nil), now: now)
        }
        let tablet = try ledger.device("tablet", now: now)
        let watch = try ledger.device("watch", now: now)
        for (store, glasses) in [(phone, 2.0), (tablet, 1.0), (watch, 3.0)] {
            try await store.write { try $0.recordProgress(water, amount: Amount(glasses), now: now) }
        }
        // Each device keeps its token between runs, as Data.
        var saved: [String: Data] = [:]
        let relay = BlobRelay()
        for store in [phone, tablet, watch] {
            let token = try await sendToRelay(store, token: nil, relay: relay)
            saved[store.device] = try JSONEncoder().encode(token)
        }
        for store in [phone, tablet, watch] {
            let token = try JSONDecoder().decode(RelayToken?.self, from: saved[store.device]!)
            let moved = try await receiveFromRelay(store, token: token, blobs: await relay.download())
            // Nothing is left to hand out: what came from the relay does not go back to it.
            #expect(try await store.read { try $0.outgoing(since: moved).changes.count } == 0)
        }
        var digests: Set<String> = []
        for store in [phone, tablet, watch] {
            digests.insert(try await store.read { try $0.digest() })
            let goals = try await store.read { try $0.goals(now: now) }
            #expect(goals.map(\.goal.title) == ["Water"] && goals[0].goal.entries.count == 3)
            #expect(try await store.read { try $0.verify() }.isClean)
        }
        #expect(digests.count == 1)
    }
    // Example end

    @Test func theArticleShowsThisCode() throws {
        let tests = URL(fileURLWithPath: #filePath)
        let root = tests.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/GoalLedger/GoalLedger.docc/SyncingThroughARelay.md"), encoding: .utf8)
        let source = try String(contentsOf: tests, encoding: .utf8)
        func between(_ text: String, _ open: String, _ close: String) -> [String] {
            text.components(separatedBy: open).dropFirst().map { $0.components(separatedBy: close)[0] }
        }
        let quoted = between(article, "```swift\n", "```")
        let code = ["Relay", "Example"].map { between(source, "// \($0) begin\n", "// \($0) end")[0] }
        #expect(quoted.count == 2)
        #expect(
            quoted.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                == code.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
    }

    /// Three devices append at random and upload in blobs of random size, some uploads fail; the
    /// relay delivers each device a random selection of blobs, shuffled, some twice, some late.
    /// Once everything is uploaded and delivered, the stores hold the same events, each once,
    /// verify, keep nothing aside, and have nothing left to hand out.
    @Test(arguments: [1, 2, 3, 5, 8, 13, 21, 34] as [UInt64])
    func randomHistoriesConvergeThroughARelay(_ seed: UInt64) throws {
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        let tablet = try phone.clone(to: dir.path + "/tablet", device: "tablet", now: now)
        let watch = try phone.clone(to: dir.path + "/watch", device: "watch", now: now)
        let devices = [phone, tablet, watch]
        var rng = SeededRandom(seed: seed &* 7919 &+ 17)
        var relay = TestRelay()
        var tokens: [RelayToken?] = [nil, nil, nil]
        var delivered = [Set<Int>](repeating: [], count: 3)
        for step in 0..<30 {
            let d = Int(rng.next() % 3)
            switch rng.next() % 4 {
            case 0, 1:
                let batch = try RandomHistory.validBatch(for: devices[d], rng: &rng, size: 1 + Int(rng.next() % 5), step: step)
                // A batch the random history gets wrong is refused whole: it is simply not written.
                if let refused = ledgerError({ _ = try devices[d].append(batch, now: now) }), refused.code != .invalidInput {
                    Issue.record("\(refused)")
                }
            case 2:
                let limit = 1 + Int(rng.next() % 6)
                tokens[d] = try relay.upload(devices[d], token: tokens[d], limit: limit, failing: rng.next() % 4 == 0)
            default:
                // Some blobs, in a random order, a few twice; the rest stay late.
                var picked = relay.blobs.indices.filter { _ in rng.next() % 3 != 0 }
                picked.shuffle(using: &rng)
                if let again = picked.first, rng.next() % 2 == 0 { picked.append(again) }
                tokens[d] = try relay.deliver(picked, to: devices[d], token: tokens[d])
                delivered[d].formUnion(picked)
            }
        }
        for d in devices.indices { tokens[d] = try relay.upload(devices[d], token: tokens[d], limit: 4, failing: false) }
        for d in devices.indices {
            var rest = relay.blobs.indices.filter { !delivered[d].contains($0) } + relay.blobs.indices.filter { _ in rng.next() % 5 == 0 }
            rest.shuffle(using: &rng)
            tokens[d] = try relay.deliver(rest, to: devices[d], token: tokens[d])
        }
        let heads = try phone.originHeads()
        for (d, store) in devices.enumerated() {
            #expect(try store.originHeads() == heads, "\(store.device)")
            #expect(try store.lastPosition() == heads.values.reduce(0, +), "\(store.device) holds an event twice or lacks one")
            #expect(try store.digest() == phone.digest())
            #expect(try store.verify().isClean)
            #expect(try store.reading { try $0.outgoing(since: tokens[d]).changes.count } == 0, "\(store.device)")
            #expect(try store.reading { try $0.waitingEvents() }.isEmpty)
            #expect(try relay.parked(in: store) == 0)
        }
    }

    @Test func oneNewEventAfterAConfirmedTokenIsABlobOfOneRecord() throws {
        let ledger = try TemporaryLedger(device: "phone")
        let phone = ledger.store
        let goal = try phone.writing { try $0.createGoal(title: "Read", now: now) }
        _ = try ledger.device("tablet", now: now)
        var relay = TestRelay()
        let token = try relay.upload(phone, token: nil, limit: 100, failing: false)
        try phone.writing { try $0.recordCompletion(goal, now: now) }
        let (blob, next) = try phone.reading { try $0.outgoing(since: token) }
        #expect(blob.count == 1 && blob.records.count == 1)
        #expect(blob.events[0].origin == "phone" && blob.events[0].sequence == (token?.mark(of: "phone") ?? 0) + 1)
        #expect(next.mark(of: "phone") == blob.events[0].sequence)
        #expect(try phone.reading { try $0.outgoing(since: next).changes.count } == 0)
    }

    @Test func aFailedUploadRetriedWithTheOldTokenLosesNothing() throws {
        let ledger = try TemporaryLedger(device: "phone")
        let phone = ledger.store
        let goal = try phone.writing { try $0.createGoal(title: "Read", now: now) }
        let tablet = try ledger.device("tablet", now: now)
        var relay = TestRelay()
        var token = try relay.upload(phone, token: nil, limit: 100, failing: false)
        try phone.writing { try $0.recordCompletion(goal, now: now) }
        // The upload fails: the token stays; the next run hands out the same event, and more.
        let kept = token
        token = try relay.upload(phone, token: token, limit: 100, failing: true)
        #expect(token == kept && relay.blobs.count == 1)
        try phone.writing { try $0.addTag("x", to: goal, now: now) }
        token = try relay.upload(phone, token: token, limit: 100, failing: false)
        #expect(relay.blobs.count == 2)
        _ = try relay.deliver(Array(relay.blobs.indices), to: tablet, token: nil)
        #expect(try tablet.digest() == phone.digest())
        #expect(try tablet.originHeads() == phone.originHeads())
    }

    @Test func aMissingBlobLeavesItsSuccessorsWaitingNamedAndArrivingReleasesThem() throws {
        let ledger = try TemporaryLedger(device: "phone")
        let phone = ledger.store
        let goal = try phone.writing { try $0.createGoal(title: "Read", now: now) }
        let tablet = try ledger.device("tablet", now: now)
        var relay = TestRelay()
        var token: RelayToken? = try relay.upload(phone, token: nil, limit: 100, failing: false)
        // Three blobs of the phone, one signed batch each.
        for tag in ["a", "b", "c"] {
            try phone.writing { try $0.addTag(tag, to: goal, now: now) }
            token = try relay.upload(phone, token: token, limit: 100, failing: false)
        }
        #expect(relay.blobs.count == 4)
        let head = try tablet.originHeads()["phone"]!
        // The first blob holds what the tablet was cloned with: taken as already present.
        let first = try tablet.writing { try $0.applyRelayed(try relay.blob(0), token: nil) }
        #expect(first.result.imported == 0 && first.token.mark(of: "phone") == head)
        // The blob of "a" is late: those of "b" and "c" wait behind it, named, and are kept.
        let late = try relay.blob(1)
        let b = try tablet.writing { try $0.applyRelayed(try relay.blob(2), token: first.token) }
        #expect(b.result.imported == 0 && b.parked == 1)
        #expect(b.result.waiting.map(\.origin) == ["phone"] && b.result.waiting[0].cause == .gap)
        #expect(b.result.waiting[0].sequence == late.events[0].sequence)
        let c = try tablet.writing { try $0.applyRelayed(try relay.blob(3), token: b.token) }
        #expect(c.result.imported == 0 && c.parked == 2 && c.result.waiting[0].sequence == late.events[0].sequence)
        #expect(try tablet.reading { try $0.waitingEvents() }.map(\.origin) == ["phone"])
        #expect(try tablet.originHeads()["phone"] == head)
        // The same blob again keeps one copy.
        #expect(try tablet.writing { try $0.applyRelayed(try relay.blob(3), token: c.token) }.parked == 2)
        // The late blob arrives: it and both waiting blobs are taken, nothing waits.
        let a = try tablet.writing { try $0.applyRelayed(late, token: c.token) }
        #expect(a.result.imported == 3 && a.parked == 0 && a.result.waiting.isEmpty)
        #expect(try tablet.reading { try $0.waitingEvents() }.isEmpty)
        #expect(try tablet.originHeads() == phone.originHeads())
        #expect(try tablet.digest() == phone.digest())
        // The token moved past all three: none goes back to the relay.
        #expect(try a.token.mark(of: "phone") == phone.originHeads()["phone"])
        #expect(try tablet.reading { try $0.outgoing(since: a.token) }.changes.count == 0)
    }

    @Test func aForgedEventKeptAsideIsLetGoOnceItsPredecessorShowsItForged() throws {
        let ledger = try TemporaryLedger(device: "phone")
        let phone = ledger.store
        let goal = try phone.writing { try $0.createGoal(title: "Read", now: now) }
        let tablet = try ledger.device("tablet", now: now)
        var relay = TestRelay()
        var token = try relay.upload(phone, token: nil, limit: 100, failing: false)
        for tag in ["a", "b"] {
            try phone.writing { try $0.addTag(tag, to: goal, now: now) }
            token = try relay.upload(phone, token: token, limit: 100, failing: false)
        }
        let start = try tablet.writing { try $0.applyRelayed(try relay.blob(0), token: nil) }.token
        // The event of "b", altered on the relay, comes before the event of "a".
        var forged = try relay.blob(2).events[0]
        forged.at = Instant(milliseconds: forged.at.milliseconds + 1)
        let altered = ChangeSet(ledger: phone.ledgerID, events: [forged], records: [EventCodec.encode(forged)])
        let early = try tablet.writing { try $0.applyRelayed(altered, token: start) }
        #expect(early.parked == 1 && early.result.waiting.first?.cause == .gap)
        // "a" arrives: the altered event now fails its signature, waits named, and is let go.
        let a = try tablet.writing { try $0.applyRelayed(try relay.blob(1), token: early.token) }
        #expect(a.result.imported == 1 && a.parked == 0)
        #expect(a.result.waiting.map(\.cause) == [.badSignature])
        #expect(a.token.mark(of: "phone") == forged.sequence - 1)
        // The real "b" is taken; nothing unverified was ever counted.
        let b = try tablet.writing { try $0.applyRelayed(try relay.blob(2), token: a.token) }
        #expect(b.result.imported == 1 && b.result.waiting.isEmpty)
        #expect(try tablet.digest() == phone.digest())
        #expect(try tablet.verify().isClean)
    }

    @Test func whatDoesNotFitAsideIsCountedAndDownloadingItAgainCompletesIt() throws {
        let ledger = try TemporaryLedger(device: "phone")
        let phone = ledger.store
        let goal = try phone.writing { try $0.createGoal(title: "Read", now: now) }
        let tablet = try ledger.device("tablet", now: now)
        var relay = TestRelay()
        var token = try relay.upload(phone, token: nil, limit: 100, failing: false)
        try phone.writing { try $0.addTag("a", to: goal, now: now) }
        token = try relay.upload(phone, token: token, limit: 100, failing: false)
        // One signed run of three events.
        _ = try phone.append(try drafts(["b", "c", "d"].map { #"{"type":"tagAdded","goal":"\#(goal)","tag":"\#($0)"}"# }), now: now)
        token = try relay.upload(phone, token: token, limit: 100, failing: false)
        #expect(try relay.blob(2).count == 3)
        let start = try tablet.writing { try $0.applyRelayed(try relay.blob(0), token: nil) }.token
        // Room for two: the third is counted, not kept.
        let early = try tablet.writing { try $0.applyRelayed(try relay.blob(2), token: start, parkLimit: (events: 2, bytes: 1 << 20)) }
        #expect(early.parked == 2 && early.notKept == 1)
        // The predecessor comes: the two kept wait still, their run's signature was not kept.
        let a = try tablet.writing { try $0.applyRelayed(try relay.blob(1), token: early.token) }
        #expect(a.result.imported == 1 && a.parked == 2 && a.result.waiting.map(\.cause) == [.unsigned])
        // Downloading the blob again completes it.
        let again = try tablet.writing { try $0.applyRelayed(try relay.blob(2), token: a.token) }
        #expect(again.result.imported == 3 && again.parked == 0 && again.result.waiting.isEmpty)
        #expect(try tablet.digest() == phone.digest())
    }

    @Test func whatIsKeptAsideIsForgottenAfterThirtyDaysOfTheStoresClock() throws {
        let ledger = try TemporaryLedger(device: "phone")
        let phone = ledger.store
        let goal = try phone.writing { try $0.createGoal(title: "Read", now: now) }
        let tablet = try ledger.device("tablet", now: now)
        var relay = TestRelay()
        var token = try relay.upload(phone, token: nil, limit: 100, failing: false)
        for tag in ["a", "b"] {
            try phone.writing { try $0.addTag(tag, to: goal, now: now) }
            token = try relay.upload(phone, token: token, limit: 100, failing: false)
        }
        #expect(try tablet.writing { try $0.applyRelayed(try relay.blob(2), token: nil) }.parked == 1)
        let empty = try ChangeSet(ledger: tablet.ledgerID, records: [])
        // 29 days on, it is kept; 31 days on, forgotten.
        try tablet.writing { try $0.addTag("t", to: goal, now: Instant(milliseconds: now.milliseconds + 29 * 86_400_000)) }
        #expect(try tablet.writing { try $0.applyRelayed(empty, token: nil) }.parked == 1)
        try tablet.writing { try $0.addTag("u", to: goal, now: Instant(milliseconds: now.milliseconds + 31 * 86_400_000)) }
        #expect(try tablet.writing { try $0.applyRelayed(empty, token: nil) }.parked == 0)
        #expect(try relay.parked(in: tablet) == 0)
    }

    @Test func whatWaitsIsReleasedWhenItsPredecessorCameAnotherWay() throws {
        let ledger = try TemporaryLedger(device: "phone")
        let phone = ledger.store
        let goal = try phone.writing { try $0.createGoal(title: "Read", now: now) }
        let tablet = try ledger.device("tablet", now: now)
        var relay = TestRelay()
        var token = try relay.upload(phone, token: nil, limit: 100, failing: false)
        for tag in ["a", "b"] {
            try phone.writing { try $0.addTag(tag, to: goal, now: now) }
            token = try relay.upload(phone, token: token, limit: 100, failing: false)
        }
        #expect(try tablet.writing { try $0.applyRelayed(try relay.blob(2), token: nil) }.parked == 1)
        // The event of "a" comes by a plain apply (another transport), not from the relay.
        try tablet.writing { try $0.apply(try relay.blob(1), from: "a peer") }
        // The next blob, whatever it holds, releases the event kept aside.
        let next = try tablet.writing { try $0.applyRelayed(try ChangeSet(ledger: tablet.ledgerID, records: []), token: nil) }
        #expect(next.result.imported == 1 && next.parked == 0)
        #expect(try tablet.originHeads() == phone.originHeads())
    }

    @Test func anOriginNotYetEnrolledWaitsForItsEnrolment() throws {
        let ledger = try TemporaryLedger(device: "phone")
        let phone = ledger.store
        let goal = try phone.writing { try $0.createGoal(title: "Read", now: now) }
        let tablet = try ledger.device("tablet", now: now)
        // The watch is enrolled by the phone after the tablet was cloned.
        let watch = try ledger.device("watch", now: now)
        try watch.writing { try $0.addTag("w", to: goal, now: now) }
        var relay = TestRelay()
        // The watch hands out its own event only (the relay holds the phone's).
        let held = RelayToken(ledger: watch.ledgerID, marks: try watch.originHeads().filter { $0.key != "watch" })
        relay.blobs.append(try watch.reading { try $0.outgoing(since: held) }.changes.encoded())
        _ = try relay.upload(phone, token: nil, limit: 100, failing: false)
        // The watch's events come first: the tablet knows no key of the watch yet.
        let first = try tablet.writing { try $0.applyRelayed(try relay.blob(0), token: nil) }
        #expect(first.result.imported == 0 && first.result.unknownOrigins == 1 && first.parked > 0)
        let second = try tablet.writing { try $0.applyRelayed(try relay.blob(1), token: first.token) }
        #expect(second.parked == 0)
        #expect(try tablet.originHeads()["watch"] == watch.originHeads()["watch"])
        #expect(try tablet.verify().isClean)
    }

    @Test func aTokenOfAnotherLedgerOrDamagedOrOfAFutureVersionIsRefused() throws {
        let ledger = try TemporaryLedger(device: "phone")
        let phone = ledger.store
        _ = try phone.writing { try $0.createGoal(title: "Read", now: now) }
        let other = try TemporaryLedger(device: "phone")
        let foreign = try other.store.reading { try $0.outgoing(since: nil) }
        // Another ledger's token, for reading or applying, and another ledger's blob.
        let before = try phone.snapshot()
        let read = ledgerError { _ = try phone.reading { try $0.outgoing(since: foreign.next) } }
        #expect(read?.message.contains("the relay token belongs to ledger \(other.store.ledgerID.uuidString)") == true)
        let ownBlob = try phone.reading { try $0.outgoing(since: nil) }.changes
        #expect(ledgerError { _ = try phone.writing { try $0.applyRelayed(ownBlob, token: foreign.next) } } != nil)
        let blob = ledgerError { _ = try phone.writing { try $0.applyRelayed(foreign.changes, token: nil) } }
        #expect(blob?.message.contains("the relay's blob belongs to ledger") == true)
        #expect(ledgerError { _ = try RelayToken(ledger: phone.ledgerID).merging(foreign.next) }?.message.contains("do not merge") == true)
        #expect(try phone.snapshot() == before)
        // Limits below one.
        #expect(ledgerError { _ = try phone.reading { try $0.outgoing(since: nil, limit: 0) } }?.code == .invalidArgument)
        // The Codable form: a round trip, then a future version, a damaged mark, a bad name.
        let token = try phone.reading { try $0.outgoing(since: nil) }.next
        let json = try JSONEncoder().encode(token)
        #expect(try JSONDecoder().decode(RelayToken.self, from: json) == token)
        func refusal(_ text: String) -> String? {
            do {
                _ = try JSONDecoder().decode(RelayToken.self, from: Data(text.utf8))
                return nil
            } catch let DecodingError.dataCorrupted(context) {
                return context.debugDescription
            } catch {
                return "\(error)"
            }
        }
        let id = phone.ledgerID.uuidString
        #expect(refusal(#"{"version":2,"ledger":"\#(id)","marks":{}}"#)?.contains("version 2, newer than") == true)
        #expect(refusal(#"{"version":1,"ledger":"\#(id)","marks":{"Phone!":1}}"#)?.contains("is not a device name") == true)
        #expect(refusal(#"{"version":1,"ledger":"\#(id)","marks":{"phone":9223372036854775808}}"#)?.contains("past the largest") == true)
        #expect(refusal(#"{"version":1,"ledger":"\#(id)","marks":{"phone":-1}}"#) != nil)
        #expect(refusal(#"{"ledger":"\#(id)","marks":{}}"#) != nil)
    }

    @Test func theLimitSplitsALargeFirstUploadAtSignedRunEnds() throws {
        let ledger = try TemporaryLedger(device: "phone")
        let phone = ledger.store
        let goal = try phone.writing { try $0.createGoal(title: "Read", progress: .measurable(target: Amount(100), unit: nil), now: now) }
        let tablet = try ledger.device("tablet", now: now)
        // Batches of 1 to 7 events: each is one signed run.
        let one = Amount(1)
        let batch = { (n: Int) in (0..<n).map { _ in EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: one))) } }
        for n in 1...7 { _ = try phone.append(batch(n), now: now) }
        for _ in 0..<8 { _ = try tablet.append(batch(5), now: now) }
        var relay = TestRelay()
        _ = try relay.upload(phone, token: nil, limit: 5, failing: false)
        _ = try relay.upload(tablet, token: nil, limit: 5, failing: false, byteLimit: 600)
        #expect(relay.blobs.count > 6)
        for i in relay.blobs.indices {
            let blob = try relay.blob(i)
            // Cut only where a run ends: the last event of each origin in the blob is signed.
            for origin in Set(blob.events.map(\.origin)) {
                #expect(blob.events.last { $0.origin == origin }?.signature != nil)
            }
            // At most the limit, or one signed run.
            #expect(blob.count <= 7)
        }
        let fresh = try ledger.device("laptop", now: now)
        var order = Array(relay.blobs.indices)
        var rng = SeededRandom(seed: 99)
        order.shuffle(using: &rng)
        _ = try relay.deliver(order, to: fresh, token: nil)
        _ = try relay.deliver(Array(relay.blobs.indices), to: phone, token: nil)
        #expect(try fresh.originHeads()["tablet"] == 40)
        #expect(try fresh.digest() == phone.digest())
        #expect(try fresh.verify().isClean)
    }
}

/// A relay for the property tests: blobs in upload order, delivered synchronously.
struct TestRelay {
    var blobs: [[UInt8]] = []

    /// Uploads `store`'s outgoing blobs until none is left; a failing upload loses its blob and
    /// keeps the old token.
    mutating func upload(
        _ store: LedgerStore, token: RelayToken?, limit: Int, failing: Bool, byteLimit: Int = RelayToken.defaultByteLimit
    ) throws -> RelayToken? {
        var token = token
        while true {
            let since = token
            let (blob, next) = try store.reading { try $0.outgoing(since: since, limit: limit, byteLimit: byteLimit) }
            if blob.count == 0 || failing { return token }
            blobs.append(blob.encoded())
            token = next
        }
    }

    /// Applies the blobs at `indices`, in that order, to `store`.
    func deliver(_ indices: [Int], to store: LedgerStore, token: RelayToken?) throws -> RelayToken? {
        var token = token
        for i in indices {
            let blob = try self.blob(i)
            let since = token
            token = try store.writing { try $0.applyRelayed(blob, token: since) }.token
        }
        return token
    }

    func blob(_ i: Int) throws -> ChangeSet { try ChangeSet(decoding: blobs[i], source: "blob \(i)") }

    /// How many events `store` keeps aside from the relay.
    func parked(in store: LedgerStore) throws -> Int {
        try store.readTransaction { txn in
            var n = 0
            try txn.scan(store.layout.meta, from: MetaKey.relayParked) { key, _ in
                guard key.starts(with: MetaKey.relayParked) else { return false }
                n += 1
                return true
            }
            return n
        }
    }
}
