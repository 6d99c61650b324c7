import Foundation
import LedgerBenchmarks
import LedgerSync
import Testing

@testable import GoalLedger

/// An honest device syncs while 300 connections trickle headers in and a flood of forged pushes
/// runs (`ServiceAttackLoad`, bounded here to a few seconds; the benchmark runs it longer and
/// reports the latencies): every honest sync succeeds, every forged push is refused, nothing of
/// the honest device is lost.
struct SyncServiceUnderAttackTests {
    @Test func anHonestDeviceSyncsThroughSlowClientsAndAForgedFlood() throws {
        let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!
        let f = try ServiceFixture()
        let server = try ServiceAttackLoad.startService(hubURL: f.serviceURL)
        defer { server.stop() }
        let phone = try LedgerStore.create(at: f.hub.path("phone"), device: "phone")
        let client = SyncServiceClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        _ = try client.syncBlocking(phone)
        let attack = ServiceAttackLoad(slowClients: 300, floodThreads: 2, seconds: 6)
        let outcome = attack.run(port: server.port, store: phone, client: client, now: now)
        print(
            "under attack: \(outcome.latencies.count) honest syncs, p50 \(outcome.percentile(0.5)) ms, p99 \(outcome.percentile(0.99)) ms; "
                + "slow connections held \(outcome.slowConnected); forged pushes \(outcome.floodStatuses)")
        #expect(outcome.errors.isEmpty, "\(outcome.errors.prefix(3))")
        #expect(outcome.latencies.count >= 3)
        #expect(outcome.slowConnected >= 200, "\(outcome.slowConnected) slow connections held")
        #expect(!outcome.floodStatuses.isEmpty && Set(outcome.floodStatuses.keys) == [401], "\(outcome.floodStatuses)")
        _ = try client.syncBlocking(phone)
        #expect(try f.rows() == Int(try phone.lastPosition()))
    }
}
