import Foundation
import HTTPServer
import LedgerService
import LedgerSync
import Sodium
import Testing

@testable import GoalLedger

/// A service that starts cold reads the trust rows it vouched for before (its index in the
/// hub) and the rows since, not the whole ledger, and decides as a warm one would.
struct SyncServiceColdCacheTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

    /// Another service on the same hub, cold: its own cache, its own HTTP server.
    func coldService(_ f: ServiceFixture) throws -> (SyncService, HTTPServer, SyncServiceClient) {
        let service = SyncService(SyncService.Options(hubURL: f.serviceURL))
        var http = HTTPServer.Options()
        http.threads = 0
        let server = try HTTPServer(options: http) { service.handle($0) }
        return (service, server, SyncServiceClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!))
    }

    @Test func aColdServiceReadsTheIndexedTrustAndOnlyTheRowsSince() throws {
        let f = try ServiceFixture()
        let c = SyncServiceClient(baseURL: URL(string: f.base)!)
        let phone = try SyncServiceAttackTests.founder(at: f.hub.path("phone"), now: now)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        let watch = try phone.clone(to: f.hub.path("watch"), device: "watch", now: now)
        for _ in 0..<20 { try phone.append(SyncServiceAttackTests.progress(10), now: now) }
        _ = try c.syncBlocking(phone)
        _ = try c.syncBlocking(tablet)
        try tablet.rotateKey(now: now)
        try tablet.append(SyncServiceAttackTests.progress(5), now: now)
        _ = try c.syncBlocking(tablet)
        try phone.revoke(device: "watch", now: now)
        _ = try c.syncBlocking(phone)
        // One more request reads the revocation the last push wrote: the first service has then
        // read every row once (it folds trust from the rows since its cache, never again).
        _ = try c.syncBlocking(tablet)
        let rows = try f.rows()
        #expect(rows > 200)
        #expect(f.service.trustRowsRead.load(ordering: .relaxed) == rows)

        // A second service, cold: it reads no row of hub.events to fold trust, and knows the
        // tablet's rotated key, the watch's revocation and the founder.
        let (b, bServer, bClient) = try coldService(f)
        defer { bServer.stop() }
        _ = try bClient.syncBlocking(tablet)
        #expect(b.trustRowsRead.load(ordering: .relaxed) == 0)
        #expect(try f.signed(tablet, "pull", body: tablet.syncState().encoded()).status == 200)
        #expect {
            try bClient.syncBlocking(watch)
        } throws: { error in
            (error as? LedgerError)?.message.contains("refused the pull") == true
        }
        _ = try bClient.syncBlocking(phone)

        // Rows written since are read, and vouched for: a forged rotation row of the tablet,
        // written by a hub role, gives its key nothing on a third cold service.
        let attacker = SigningKey.generate()
        try SyncServiceHubRowTests.write(
            try SyncServiceHubRowTests.forgedRotation(of: tablet, to: attacker.publicKey), into: f, ledger: tablet.ledgerID)
        let (third, thirdServer, thirdClient) = try coldService(f)
        defer { thirdServer.stop() }
        _ = try thirdClient.syncBlocking(phone)
        #expect(third.trustRowsRead.load(ordering: .relaxed) == 1)
        let state = try tablet.syncState().encoded()
        let base = f.base
        f.base = "http://127.0.0.1:\(thirdServer.port)"
        #expect(try f.signed(tablet, "pull", body: state, key: attacker).status == 401)
        #expect(try f.signed(tablet, "pull", body: state).status == 200)
        f.base = base
    }
}
