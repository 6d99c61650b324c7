import Foundation
import LedgerSync
import LedgerTestSupport
import Testing

@testable import GoalLedger

/// Trust delivered only through the sync service: three devices append, rotate their keys (the
/// founder too) and revoke one another at random, and meet only through the service. Every
/// device that is not revoked converges with the others, verifies clean, and holds every event
/// the others wrote.
struct SyncServiceTrustPropertyTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

    @Test(arguments: 0..<4)
    func rotationsAndRevocationsThroughTheServiceConverge(_ seed: Int) throws {
        let f = try ServiceFixture()
        let c = SyncServiceClient(baseURL: URL(string: f.base)!)
        var rng = FuzzTests.Mutator(state: UInt64(seed) &* 7_919 &+ 17)
        func pick<T>(_ items: [T]) -> T { items[rng.below(items.count)] }
        func attempt(_ body: () throws -> Void) throws {
            do { try body() } catch let e as LedgerError where e.code != .internal {}
        }
        let phone = try SyncServiceAttackTests.founder(at: f.hub.path("phone"), now: now)
        let laptop = try phone.clone(to: f.hub.path("laptop"), device: "laptop", now: now)
        let watch = try laptop.clone(to: f.hub.path("watch"), device: "watch", now: now)
        let stores = [phone, laptop, watch]
        for s in stores { try attempt { _ = try c.syncBlocking(s) } }
        var rotations = 0
        var revoked = Set<String>()
        for _ in 0..<24 {
            let s = pick(stores)
            switch rng.below(8) {
            case 0, 1, 2:
                try attempt { try s.append(SyncServiceAttackTests.progress(1 + rng.below(3)), now: now) }
            case 3, 4:
                try attempt { _ = try c.syncBlocking(s) }
            case 5, 6:
                try attempt {
                    try s.rotateKey(now: now)
                    rotations += 1
                }
            default:
                // A device revokes one below it: the phone the laptop or the watch, the laptop the watch.
                let target = s === phone ? pick(["laptop", "watch"]) : "watch"
                try attempt {
                    try s.revoke(device: target, now: now)
                    revoked.insert(target)
                }
            }
        }
        for _ in 0..<3 { for s in stores { try attempt { _ = try c.syncBlocking(s) } } }
        #expect(rotations > 0, "seed \(seed) rotated no key")
        // Who is revoked is what the phone, which never is, folded.
        let cut = Set(try phone.enrolledDevices().filter { $0.revokedAfter != nil }.map(\.device))
        let honest = stores.filter { !cut.contains($0.device) }
        #expect(Set(try honest.map { try $0.digest() }).count == 1, "seed \(seed): digests differ (\(rotations) rotations, revoked \(cut))")
        let trust = Set(try honest.map { try $0.enrolledDevices().map { "\($0.device) \($0.fingerprint) \($0.revokedAfter ?? 0)" } })
        #expect(trust.count == 1, "\(trust)")
        for s in honest {
            let report = try s.verify()
            #expect(report.isClean, "\(s.device): \(report.problems)")
            // Every honest device's events reached every other honest device.
            for o in honest { #expect(try s.originHeads()[o.device] == o.originHeads()[o.device], "\(s.device) lacks events of \(o.device)") }
            // Each device holds its current key, and it is the one the others enrolled.
            let mine = try s.publicKey()
            for o in honest { #expect(try o.enrolledDevices().first { $0.device == s.device }.map(\.publicKey) ?? mine == mine) }
        }
        // The service accepts each honest device's current key and no revoked device.
        for s in stores {
            let status = try f.signed(s, "pull", body: s.syncState().encoded()).status
            #expect(status == (cut.contains(s.device) ? 401 : 200), "\(s.device): \(status)")
        }
    }
}
