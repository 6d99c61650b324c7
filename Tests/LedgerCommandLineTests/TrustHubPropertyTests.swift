import Foundation
import LedgerHub
import LedgerTestSupport
import PostgreSQL
import Sodium
import Testing

@testable import GoalLedger

/// Trust through the hub: four devices, one a thief that also writes rows into the hub as a
/// granted role could, random appends, rotations, revocations and deliveries through the hub
/// and store to store. Every store converges, verifies clean, and counts no event of another
/// device signed by the thief's key.
struct TrustHubPropertyTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!
    static let goal = UUID(uuidString: "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1")!

    static func progress(_ amount: Amount) -> [EventDraft] {
        [EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: amount)))]
    }

    @Test(arguments: 0..<3)
    func throughTheHubTrustConvergesAndTheThiefNeverWritesAsAnother(_ seed: Int) throws {
        let hub = try HubFixture()
        let h = try Hub(url: hub.url)
        var rng = FuzzTests.Mutator(state: UInt64(seed) &* 104_729 &+ 3)
        func pick<T>(_ items: [T]) -> T { items[rng.below(items.count)] }
        func attempt(_ body: () throws -> Void) throws {
            do { try body() } catch let e as LedgerError where e.code != .internal {}
        }
        let phone = try LedgerStore.create(at: hub.path("phone"), device: "phone")
        try phone.append(
            [
                EventDraft(
                    payload: .goalCreated(
                        GoalCreated(goal: Self.goal, title: "Save", cadence: .daily, progressKind: .measurable, target: try! Amount("5"))))
            ],
            now: now)
        let laptop = try phone.clone(to: hub.path("laptop"), device: "laptop", now: now)
        let watch = try phone.clone(to: hub.path("watch"), device: "watch", now: now)
        let thief = try laptop.clone(to: hub.path("thief"), device: "thief", now: now)
        let stores = [phone, laptop, watch, thief]
        for s in stores { _ = try h.sync(s) }
        var thiefKeys = [try thief.publicKey()!]
        let ledger = phone.ledgerID

        for _ in 0..<30 {
            switch rng.below(9) {
            case 0, 1:
                let s = pick(stores)
                try attempt { try s.append(Self.progress(try! Amount(whole: Int64(rng.below(9)))), now: now) }
            case 2, 3:
                _ = try h.sync(pick(stores))
            case 4:
                let a = pick(stores)
                _ = try a.sync(with: pick(stores.filter { $0 !== a }))
            case 5:
                try attempt { try pick([phone, laptop]).revoke(device: "thief", now: now) }
            case 6:
                let s = pick(stores)
                try attempt { try s.rotateKey(now: now) }
                if s === thief, let k = try thief.publicKey() { thiefKeys.append(k) }
            case 7:
                let name = pick(["phone", "watch", "laptop", "friend"])
                try attempt { _ = try thief.writing { try $0.enrol(device: name, key: thiefKeys.last!, from: 1, now: now) } }
            default:
                // A row forged under another device's name, written straight into the hub.
                let victim = pick(["phone", "laptop", "watch"])
                guard let key = try thief.keys.key(ledger: ledger, device: "thief") else { continue }
                let forged = try Forger.next(.tagAdded(TagAdded(goal: Self.goal, tag: "forged")), origin: victim, after: thief, key: key)
                _ = try? hub.admin().query(
                    "INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record) VALUES ($1, $2, $3, $4, $5, $6)",
                    [
                        .uuid(ledger), .text(victim), .int64(Int64(forged.sequence)), .uuid(forged.id),
                        .int64(Int64(bitPattern: forged.hlc.rawValue)), .bytea(EventCodec.encode(forged)),
                    ])
            }
        }
        for _ in 0..<3 { for s in stores { _ = try h.sync(s) } }
        for _ in 0..<2 { for a in stores { for b in stores where a !== b { _ = try a.sync(with: b) } } }
        let digests = Set(try stores.map { try $0.digest() })
        #expect(digests.count == 1)
        let trust = Set(try stores.map { try $0.enrolledDevices().map { "\($0.device) \($0.fingerprint) \($0.revokedAfter ?? 0)" } })
        #expect(trust.count == 1, "\(trust)")
        for s in stores {
            let report = try s.verify()
            #expect(report.isClean, "\(s.device): \(report.problems)")
            for e in try s.events(missingFrom: [:]) {
                if let signer = e.signer, thiefKeys.contains(signer) { #expect(e.origin == "thief") }
            }
            #expect(try s.goalState(Self.goal).tags.isEmpty)
        }
    }
}
