import Foundation
import LedgerService
import LedgerSync
import Sodium
import Testing

@testable import GoalLedger

/// What an operator bounds: who may found a ledger, how much one ledger holds, how often one
/// device key may ask.
struct SyncServicePolicyTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

    func founder(at path: String, _ name: String = "phone") throws -> LedgerStore {
        try SyncServiceAttackTests.founder(at: path, name, now: now)
    }

    @Test func withFoundingClosedOnlyTheAllowedFoundersLedgersAreKept() throws {
        let dir = CLIFixture()
        let allowed = try founder(at: dir.root + "/allowed")
        let allowedKey = try #require(try allowed.reading { try $0.publicKey() })
        let f = try ServiceFixture(configure: { $0.founderKeys = [allowedKey] })
        let c = SyncServiceClient(baseURL: URL(string: f.base)!)
        // A stranger's new ledger: refused before anything of it is written.
        let stranger = try founder(at: f.hub.path("stranger"))
        #expect {
            try c.syncBlocking(stranger)
        } throws: { error in
            (error as? LedgerError)?.message.contains("does not keep ledger \(stranger.ledgerID.uuidString)") == true
        }
        let refused = try f.signed(stranger, "push", body: stranger.changeSet(since: SyncState(ledger: stranger.ledgerID)).encoded())
        #expect(refused.status == 403, "\(refused.status) \(refused.text)")
        #expect(try f.rows() == 0)
        // The allowed founder's ledger is kept, and its enrolled devices sync.
        let r = try c.syncBlocking(allowed)
        #expect(r.pushed.imported == 1)
        let tablet = try allowed.clone(to: dir.root + "/tablet", device: "tablet", now: now)
        _ = try c.syncBlocking(allowed)
        try tablet.append(SyncServiceAttackTests.progress(2), now: now)
        #expect(try c.syncBlocking(tablet).pushed.imported == 2)
        _ = try c.syncBlocking(allowed)
        #expect(try allowed.digest() == tablet.digest())
    }

    @Test func aPushPastTheLedgersQuotaIs413AndWritesNothing() throws {
        let f = try ServiceFixture(configure: {
            $0.maxLedgerEvents = 10
            $0.maxLedgerBytes = 6_000
        })
        let c = SyncServiceClient(baseURL: URL(string: f.base)!)
        let phone = try founder(at: f.hub.path("phone"))
        try phone.append(SyncServiceAttackTests.progress(4), now: now)
        #expect(try c.syncBlocking(phone).pushed.imported == 5)
        // Past the events.
        try phone.append(SyncServiceAttackTests.progress(6), now: now)
        #expect {
            try c.syncBlocking(phone)
        } throws: { error in
            (error as? LedgerError)?.message.contains("keeps at most 10 per ledger") == true
        }
        #expect(try f.rows() == 5)
        // Past the bytes, within the events.
        let g = try ServiceFixture(configure: { $0.maxLedgerBytes = 1_500 })
        let d = SyncServiceClient(baseURL: URL(string: g.base)!)
        let desk = try founder(at: g.hub.path("desk"), "desk")
        #expect(try d.syncBlocking(desk).pushed.imported == 1)
        try desk.append(SyncServiceAttackTests.progress(20), now: now)
        let push = try g.signed(desk, "push", body: desk.changeSet(since: SyncState(ledger: desk.ledgerID)).encoded())
        #expect(push.status == 413 && push.text.contains("bytes of records"), "\(push.text)")
        #expect(try g.rows() == 1)
    }

    @Test func aDeviceKeyPastItsRateIs429WithRetryAfterAndOthersGoOn() throws {
        let clock = TestClock(Date())
        let f = try ServiceFixture(configure: {
            $0.requestsPerMinute = 5
            $0.clock = { clock.read() }
        })
        let phone = try founder(at: f.hub.path("phone"))
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        let c = SyncServiceClient(baseURL: URL(string: f.base)!)
        _ = try c.syncBlocking(phone)  // a pull and a push
        let state = try phone.syncState().encoded()
        for _ in 0..<3 { #expect(try f.signed(phone, "pull", body: state).status == 200) }
        let limited = try f.signed(phone, "pull", body: state)
        #expect(limited.status == 429 && limited.headers["retry-after"] == "12", "\(limited.status) \(limited.headers)")
        // Another device is not held back; the phone is again once a token is back.
        #expect(try f.signed(tablet, "pull", body: tablet.syncState().encoded()).status == 200)
        clock.set(clock.read().addingTimeInterval(12))
        #expect(try f.signed(phone, "pull", body: state).status == 200)
        #expect(try f.signed(phone, "pull", body: state).status == 429)
    }
}
