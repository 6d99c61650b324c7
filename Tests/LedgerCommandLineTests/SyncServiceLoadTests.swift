import Foundation
import HTTPServer
import LedgerBenchmarks
import LedgerService
import Testing

@testable import GoalLedger

/// A bounded load on 127.0.0.1: 200 simulated devices, each the founder of 10 of 2,000 ledgers,
/// append signed events and push them through the service, and pull, concurrently for a fixed
/// time (`ServiceLoad`, which the benchmark runs too); afterwards every device's events equal the
/// hub's rows of its ledgers, nothing lost or duplicated. `LEDGER_LOAD_SECONDS` sets the time
/// (default 60); the figures go to stdout.
struct SyncServiceLoadTests {
    @Test func twoHundredDevicesOverTwoThousandLedgersLoseAndDuplicateNothing() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["LEDGER_LOAD_SECONDS"] ?? "") ?? 60
        let f = try ServiceFixture()
        let server = try ServiceLoad.startService(hubURL: f.serviceURL)
        defer { server.stop() }

        let load = ServiceLoad(devices: 200, ledgersPerDevice: 10, seconds: seconds)
        let outcome = load.run(base: "http://127.0.0.1:\(server.port)")
        print("load: \(load.devices) devices, \(load.devices * load.ledgersPerDevice) ledgers: \(outcome.summary)")
        #expect(outcome.errors.isEmpty, "\(outcome.errors.prefix(5))")
        #expect(outcome.latencies.count >= load.devices * load.ledgersPerDevice)
        // Every device's events are the hub's rows of its ledgers: nothing lost, nothing twice.
        let admin = try f.hub.admin()
        let rows = try admin.query("SELECT ledger, count(*), count(DISTINCT event_id) FROM hub.events GROUP BY ledger")
        var counts: [UUID: (Int64, Int64)] = [:]
        for r in 0..<rows.rowCount { counts[rows.uuid(r, 0)!] = (rows.int64(r, 1), rows.int64(r, 2)) }
        #expect(counts.count == load.devices * load.ledgersPerDevice)
        for ledger in outcome.ledgers {
            let held = counts[ledger.id] ?? (0, 0)
            #expect(held.0 == Int64(ledger.events) && held.1 == held.0, "\(ledger.id): \(held) rows for \(ledger.events) events")
        }
        #expect(try f.hub.count() == outcome.eventsPushed)
    }
}
