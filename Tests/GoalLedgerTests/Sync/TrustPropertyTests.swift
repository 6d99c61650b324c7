import Foundation
import LedgerTestSupport
import Sodium
import Testing

@testable import GoalLedger

/// Five devices, one of them a thief, doing random enrolments, rotations, revocations, appends
/// and forgeries, delivered in random orders by store-to-store sync and export files: every
/// store ends with the same trust, the same events and digest, and a clean `verify`; the thief
/// never gets an event counted under another device's name, nor one after its revocation.
struct TrustPropertyTests {
    let now = instant("2026-11-05T12:00:00Z")

    @Test(arguments: 0..<8)
    func trustConvergesAndTheThiefNeverWritesAsAnother(_ seed: Int) throws {
        let dir = TemporaryDirectory()
        var rng = SeededRandom(seed: UInt64(seed) &* 0x9E37 &+ 5)
        var s = try TrustAttackTests.ledger(dir, [("laptop", "phone"), ("watch", "phone")], at: now)
        s["tablet"] = try s["laptop"]!.clone(to: dir.path + "/tablet", device: "tablet", now: now)
        s["thief"] = try s["laptop"]!.clone(to: dir.path + "/thief", device: "thief", now: now)
        let names = ["phone", "laptop", "watch", "tablet", "thief"]
        let stores = names.map { s[$0]! }
        let thief = s["thief"]!
        var thiefKeys: [[UInt8]] = [try thief.publicKey()!]
        var file = 0
        func pick<T>(_ items: [T]) -> T { items[Int(rng.next() % UInt64(items.count))] }
        /// Runs a step a device may be refused (it was revoked, say): refusals are expected.
        func attempt(_ body: () throws -> Void) throws {
            do { try body() } catch let e as LedgerError where e.code != .internal {}
        }

        for _ in 0..<40 {
            switch rng.next() % 10 {
            case 0, 1:
                let store = pick(stores)
                try attempt { try store.append(TrustAttackTests.progress(try! Amount(whole: Int64(rng.next() % 9))), now: now) }
            case 2:
                // Delivery by sync, in a random direction.
                let a = pick(stores)
                let b = pick(stores.filter { $0 !== a })
                _ = try a.sync(with: b)
            case 3:
                // Delivery by an export file.
                let a = pick(stores)
                let b = pick(stores.filter { $0 !== a })
                file += 1
                let path = dir.path + "/\(file).export"
                _ = try a.export(to: path)
                _ = try b.importFile(path)
            case 4:
                // An honest device revokes a device below it (the thief, most often).
                let author = pick(["phone", "laptop"])
                let target = rng.next() % 3 == 0 ? pick(["watch", "tablet"]) : "thief"
                try attempt { try s[author]!.revoke(device: target, now: now) }
            case 5:
                let store = pick(stores)
                try attempt { try store.rotateKey(now: now) }
                if store === thief, let k = try thief.publicKey() { thiefKeys.append(k) }
            case 6:
                // The thief claims another device's name for its own key.
                let victim = pick(["phone", "laptop", "watch", "tablet", "newcomer"])
                try attempt { _ = try thief.writing { try $0.enrol(device: victim, key: thiefKeys.last!, from: 1, now: now) } }
            case 7:
                // The thief revokes devices above it or beside it, with a modified build.
                let victim = pick(["phone", "laptop", "watch", "tablet"])
                if let key = try thief.keys.key(ledger: thief.ledgerID, device: "thief") {
                    let forged = try Forger.next(
                        .deviceRevoked(DeviceRevoked(device: victim, after: 0)), origin: "thief", after: thief, key: key)
                    try attempt { _ = try thief.importEvents([forged], from: "the thief's build") }
                }
            default:
                // The thief writes as another device, chained onto what it holds of it, and
                // hands the event to a random store.
                let victim = pick(["phone", "laptop", "watch", "tablet"])
                if let key = try thief.keys.key(ledger: thief.ledgerID, device: "thief") {
                    let forged = try Forger.next(
                        .progressRecorded(
                            ProgressRecorded(goal: TrustAttackTests.goal, amount: try! Amount("666"), occurredAt: now, day: day("2026-11-05"))),
                        origin: victim, after: thief, key: key)
                    _ = try pick(stores).importEvents([forged], from: "the thief")
                }
            }
        }
        try TrustAttackTests.meshSync(stores)
        try TrustAttackTests.expectConverged(stores)
        let thiefCut = try stores[0].enrolledDevices().first { $0.device == "thief" }?.revokedAfter
        if ProcessInfo.processInfo.environment["TRUST_STATS"] != nil {
            print(
                "seed \(seed): trust \(try stores[0].enrolledDevices().map { "\($0.device)<\($0.enrolledBy ?? "-")>\($0.revokedAfter.map { "x\($0)" } ?? "")" }), waiting \(try stores.map { try $0.waitingEvents().count }), events \(try stores[0].lastPosition()), heads \(try stores[0].originHeads())"
            )
        }
        for store in stores {
            for e in try store.events(missingFrom: [:]) {
                if let signer = e.signer, thiefKeys.contains(signer) {
                    #expect(e.origin == "thief", "\(store.device) counts \(e.origin)/\(e.sequence) signed by the thief")
                }
                if e.origin == "thief", let cut = thiefCut { #expect(e.sequence <= cut) }
                if case .progressRecorded(let p) = e.payload { #expect(p.amount != 666 || e.origin == "thief") }
            }
            #expect(try store.goalState(TrustAttackTests.goal).entries.allSatisfy { $0.amount != 666 })
        }
    }
}
