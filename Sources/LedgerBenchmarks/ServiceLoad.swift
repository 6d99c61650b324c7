import Foundation
import GoalLedger
import HTTPServer
import LedgerService
import RequestSigning
import Sodium

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A bounded load on a sync service: `devices` simulated devices, each the founder of
/// `ledgersPerDevice` ledgers, append signed events and push them, and pull, concurrently until
/// `seconds` have passed (every ledger is founded first). The test command runs it at 200
/// devices over 2,000 ledgers for 60 s and checks the hub's rows afterwards; the benchmark
/// reports its throughput and latency.
public struct ServiceLoad: Sendable {
    public var devices = 200
    public var ledgersPerDevice = 10
    public var seconds = 60.0

    public init(devices: Int = 200, ledgersPerDevice: Int = 10, seconds: Double = 60) {
        self.devices = devices
        self.ledgersPerDevice = ledgersPerDevice
        self.seconds = seconds
    }

    /// What a run did.
    public struct Outcome: Sendable {
        public var elapsed: Double
        /// Request latencies in seconds, sorted.
        public var latencies: [Double]
        public var eventsPushed: Int
        public var errors: [String]
        /// Each ledger's id and the number of events its device holds (all of them pushed).
        public var ledgers: [(id: UUID, events: Int)]

        public var requestsPerSecond: Double { Double(latencies.count) / elapsed }
        public var eventsPerSecond: Double { Double(eventsPushed) / elapsed }
        /// The latency at fraction `p` (0.5, 0.99), in milliseconds.
        public func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] * 1000
        }
        public var summary: String {
            let f = { (v: Double) in String(format: "%.1f", v) }
            return
                "\(latencies.count) requests in \(f(elapsed)) s (\(String(format: "%.0f", requestsPerSecond))/s), \(eventsPushed) events pushed (\(String(format: "%.0f", eventsPerSecond))/s), p50 \(f(percentile(0.5))) ms, p99 \(f(percentile(0.99))) ms, \(errors.count) errors"
        }
    }

    /// One ledger as its founder's device holds it: its key and its events, chained and signed.
    final class Ledger: @unchecked Sendable {
        let key = SigningKey.generate()
        let id: UUID
        var events: [Event] = []
        var lastHash = EventChain.genesis
        let goal = UUID()
        var clock: UInt64 = 1_793_000_000_000

        init() { id = EventChain.ledgerID(founder: "phone", publicKey: key.publicKey) }

        /// `count` new events, chained, the last signed: one appended batch, as records.
        func append(_ count: Int) -> [[UInt8]] {
            var batch: [[UInt8]] = []
            for i in 0..<count {
                clock += 1
                let sequence = UInt64(events.count + 1)
                let payload: Payload =
                    sequence == 1
                    ? .goalCreated(GoalCreated(goal: goal, title: "Load", cadence: .daily, progressKind: .measurable, target: try! Amount("8")))
                    : .progressRecorded(
                        ProgressRecorded(
                            goal: goal, amount: try! Amount(whole: Int64(sequence % 7 + 1)), occurredAt: Instant(milliseconds: Int64(clock)),
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
                events.append(e)
                batch.append(EventCodec.encode(e))
            }
            return batch
        }

        /// Forgets the last `count` events (a push the service did not take).
        func drop(_ count: Int) {
            events.removeLast(count)
            lastHash = events.last.map(EventChain.hash) ?? EventChain.genesis
        }
    }

    /// A blocking signed POST; the status and body.
    static func post(_ session: URLSession, _ base: String, _ ledger: Ledger, _ op: String, _ body: [UInt8]) -> (Int, [UInt8]) {
        post(session, base, ledger: ledger.id, keyID: "phone", key: ledger.key, op, body)
    }

    /// A blocking POST of `op` to `ledger`, signed by `key` as device `keyID`; the status (0
    /// when nothing answered) and body.
    static func post(
        _ session: URLSession, _ base: String, ledger: UUID, keyID: String, key: SigningKey, _ op: String, _ body: [UInt8]
    ) -> (Int, [UInt8]) {
        let path = "/v1/ledgers/\(ledger.uuidString)/\(op)"
        var headers: [(String, String)] = [("ledger", ledger.uuidString), ("device-key", Hex.string(key.publicKey))]
        guard
            let signature = try? RequestSignature.sign(
                SignedRequestParts(method: "POST", target: path, headers: headers, body: body), components: SyncService.coveredComponents,
                key: key, keyID: keyID, created: Int64(Date().timeIntervalSince1970), nonce: UUID().uuidString)
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

    /// The sync service in front of the hub at `hubURL` as the load runs it, on 127.0.0.1: 24
    /// database sessions, up to 512 connections. Stop it when done.
    public static func startService(hubURL: String) throws -> HTTPServer {
        var options = SyncService.Options(hubURL: hubURL)
        options.databaseSessions = 24
        let service = SyncService(options)
        var http = HTTPServer.Options()
        http.threads = 0
        http.maxConnections = 512
        return try HTTPServer(options: http) { service.handle($0) }
    }

    /// Runs the load against the service at `base` (`http://127.0.0.1:PORT`), one thread per
    /// device.
    public func run(base: String) -> Outcome {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 256
        let session = URLSession(configuration: configuration)
        let perDevice = ledgersPerDevice
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
                    let body = (try? ChangeSet(ledger: ledger.id, records: batch).encoded()) ?? []
                    let (status, answer) = Self.post(session, base, ledger, "push", body)
                    mine.append(Date().timeIntervalSince(t0))
                    if status != 200 || !String(decoding: answer, as: UTF8.self).contains(#""inserted":\#(batch.count)"#) {
                        failures.append("push \(status) \(String(decoding: answer.prefix(200), as: UTF8.self))")
                        // What was not stored is not the device's either: it tries again later.
                        ledger.drop(batch.count)
                        continue
                    }
                    sent += batch.count
                    if round % 5 == 0, head > 0 {
                        // A pull with the device's own state answers its last event alone.
                        let state = SyncState(
                            ledger: ledger.id, heads: ["phone": .init(sequence: UInt64(ledger.events.count), hash: ledger.lastHash)])
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
        session.finishTasksAndInvalidate()
        return Outcome(
            elapsed: Date().timeIntervalSince(started), latencies: latencies.sorted(), eventsPushed: pushedEvents, errors: errors,
            ledgers: ledgers.joined().map { ($0.id, $0.events.count) })
    }
}
