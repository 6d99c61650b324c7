import Foundation
import HTTPServer
import LedgerService
import RequestSigning
import Sodium
import Testing

@testable import GoalLedger

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A bounded load on 127.0.0.1: 200 simulated devices, each the founder of 10 of 2,000 ledgers,
/// append signed events and push them through the service, and pull, concurrently for a fixed
/// time; afterwards every device's events equal the hub's rows of its ledgers, nothing lost or
/// duplicated. `LEDGER_LOAD_SECONDS` sets the time (default 60); the figures go to stdout.
struct SyncServiceLoadTests {
    /// One ledger as its founder's device holds it: its key and its events, chained and signed.
    final class Ledger: @unchecked Sendable {
        let key = SigningKey.generate()
        let id: UUID
        var events: [Event] = []
        var records: [[UInt8]] = []
        var lastHash = EventChain.genesis
        let goal = UUID()
        var clock: UInt64 = 1_793_000_000_000

        init() { id = EventChain.ledgerID(founder: "phone", publicKey: key.publicKey) }

        /// `count` new events, chained, the last signed: one appended batch.
        func append(_ count: Int) -> [[UInt8]] {
            var batch: [[UInt8]] = []
            for i in 0..<count {
                clock += 1
                let sequence = UInt64(events.count + 1)
                let payload: Payload =
                    sequence == 1
                    ? .goalCreated(GoalCreated(goal: goal, title: "Load", cadence: .daily, progressKind: .measurable, target: 8))
                    : .progressRecorded(
                        ProgressRecorded(
                            goal: goal, amount: Double(sequence % 7 + 1), occurredAt: Instant(milliseconds: Int64(clock)),
                            day: Day(daysSinceEpoch: 20_752)))
                var e = Event(
                    id: UUID(), origin: "phone", sequence: sequence, hlc: HLC(milliseconds: Int64(clock), counter: 0),
                    at: Instant(milliseconds: Int64(clock)), schema: 2, payload: payload)
                e.previousHash = lastHash
                if i == count - 1 {
                    e.signer = key.publicKey
                    e.signature = key.sign(EventChain.message(ledger: id, origin: "phone", sequence: sequence, hash: EventChain.hash(e)))
                }
                lastHash = EventChain.hash(e)
                let record = EventCodec.encode(e)
                events.append(e)
                records.append(record)
                batch.append(record)
            }
            return batch
        }
    }

    /// A blocking signed POST; the status and body.
    static func post(_ session: URLSession, _ base: String, _ ledger: Ledger, _ op: String, _ body: [UInt8]) -> (Int, [UInt8]) {
        let path = "/v1/ledgers/\(ledger.id.uuidString)/\(op)"
        var headers: [(String, String)] = [("ledger", ledger.id.uuidString), ("device-key", Hex.string(ledger.key.publicKey))]
        guard
            let signature = try? RequestSignature.sign(
                SignedRequestParts(method: "POST", target: path, headers: headers, body: body), components: SyncService.coveredComponents,
                key: ledger.key, keyID: "phone", created: Int64(Date().timeIntervalSince1970), nonce: UUID().uuidString)
        else { return (0, []) }
        headers += signature
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.timeoutInterval = 60
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var status = 0
        nonisolated(unsafe) var bytes: [UInt8] = []
        session.dataTask(with: request) { data, response, _ in
            status = (response as? HTTPURLResponse)?.statusCode ?? 0
            bytes = Array(data ?? Data())
            done.signal()
        }.resume()
        done.wait()
        return (status, bytes)
    }

    @Test func twoHundredDevicesOverTwoThousandLedgersLoseAndDuplicateNothing() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["LEDGER_LOAD_SECONDS"] ?? "") ?? 60
        let f = try ServiceFixture()
        var options = SyncService.Options(hubURL: f.serviceURL)
        options.databaseSessions = 24
        let service = SyncService(options)
        var http = HTTPServer.Options()
        http.threads = 0
        http.maxConnections = 512
        let server = try HTTPServer(options: http) { service.handle($0) }
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 256
        let session = URLSession(configuration: configuration)

        let devices = 200
        let perDevice = 10
        let ledgers = (0..<devices).map { _ in (0..<perDevice).map { _ in Ledger() } }
        let lock = NSLock()
        nonisolated(unsafe) var latencies: [Double] = []
        nonisolated(unsafe) var errors: [String] = []
        nonisolated(unsafe) var pushedEvents = 0
        let deadline = Date().addingTimeInterval(seconds)
        let group = DispatchGroup()
        let started = Date()
        for d in 0..<devices {
            group.enter()
            Thread {
                var rng = SystemRandomNumberGenerator()
                var mine: [Double] = []
                var failures: [String] = []
                var sent = 0
                var round = 0
                // Every ledger is founded first, then the device works until the deadline.
                while round < perDevice || Date() < deadline {
                    let ledger = ledgers[d][round < perDevice ? round : Int.random(in: 0..<perDevice, using: &rng)]
                    round += 1
                    let head = ledger.events.count
                    let batch = ledger.append(Int.random(in: 1...4, using: &rng))
                    let t0 = Date()
                    let body = try! ChangeSet(ledger: ledger.id, records: batch).encoded()
                    let (status, answer) = Self.post(session, base, ledger, "push", body)
                    mine.append(Date().timeIntervalSince(t0))
                    if status != 200 || !String(decoding: answer, as: UTF8.self).contains(#""inserted":\#(batch.count)"#) {
                        failures.append("push \(status) \(String(decoding: answer.prefix(200), as: UTF8.self))")
                        // What was not stored is not the device's either: it tries again later.
                        ledger.events.removeLast(batch.count)
                        ledger.records.removeLast(batch.count)
                        ledger.lastHash = ledger.events.last.map(EventChain.hash) ?? EventChain.genesis
                        continue
                    }
                    sent += batch.count
                    if round % 5 == 0, head > 0 {
                        // A pull with the device's own state answers its last event alone.
                        let state = SyncState(
                            ledger: ledger.id,
                            heads: ["phone": .init(sequence: UInt64(ledger.events.count), hash: ledger.lastHash)])
                        let t1 = Date()
                        let (s, bytes) = Self.post(session, base, ledger, "pull", state.encoded())
                        mine.append(Date().timeIntervalSince(t1))
                        if s != 200 || (try? ChangeSet(decoding: bytes))?.count != 1 { failures.append("pull \(s)") }
                    }
                }
                lock.lock()
                latencies += mine
                errors += failures
                pushedEvents += sent
                lock.unlock()
                group.leave()
            }.start()
        }
        group.wait()
        let elapsed = Date().timeIntervalSince(started)
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1000 }
        print(
            "load: \(devices) devices, \(devices * perDevice) ledgers, \(String(format: "%.1f", elapsed)) s: \(sorted.count) requests (\(String(format: "%.0f", Double(sorted.count) / elapsed))/s), \(pushedEvents) events pushed (\(String(format: "%.0f", Double(pushedEvents) / elapsed))/s), p50 \(String(format: "%.1f", percentile(0.5))) ms, p99 \(String(format: "%.1f", percentile(0.99))) ms, \(errors.count) errors"
        )
        #expect(errors.isEmpty, "\(errors.prefix(5))")
        // Every device's events are the hub's rows of its ledgers: nothing lost, nothing twice.
        let admin = try f.hub.admin()
        let rows = try admin.query("SELECT ledger, count(*), count(DISTINCT event_id) FROM hub.events GROUP BY ledger")
        var counts: [UUID: (Int64, Int64)] = [:]
        for r in 0..<rows.rowCount { counts[rows.uuid(r, 0)!] = (rows.int64(r, 1), rows.int64(r, 2)) }
        #expect(counts.count == devices * perDevice)
        for ledger in ledgers.joined() {
            let held = counts[ledger.id] ?? (0, 0)
            #expect(held.0 == Int64(ledger.events.count) && held.1 == held.0, "\(ledger.id): \(held) rows for \(ledger.events.count) events")
        }
        #expect(try f.hub.count() == pushedEvents)
    }
}
