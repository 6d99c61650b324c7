import Foundation
import GoalLedger
import HTTPServer
import LedgerService
import LedgerSync
import Sodium

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An honest device syncing while the service is attacked, on loopback: `slowClients`
/// connections that send a request's headers one byte a second, from addresses 127.0.0.2 and up
/// (as many per address as the service's per-address limit lets in), and `floodThreads`
/// threads pushing forged events (a change set signed by a key the ledger does not hold) as
/// fast as the service answers. The honest device (127.0.0.1) syncs one event at a time
/// throughout; the outcome is its latencies and what the attackers got.
public struct ServiceAttackLoad: Sendable {
    public var slowClients: Int
    public var floodThreads: Int
    public var seconds: Double
    /// Slow connections per source address (the service's per-address limit).
    public var perAddress: Int

    public init(slowClients: Int = 300, floodThreads: Int = 4, seconds: Double, perAddress: Int = 16) {
        self.slowClients = slowClients
        self.floodThreads = floodThreads
        self.seconds = seconds
        self.perAddress = perAddress
    }

    public struct Outcome: Sendable {
        /// The honest device's sync latencies in seconds, sorted.
        public var latencies: [Double]
        /// The honest device's failed syncs.
        public var errors: [String]
        /// Forged pushes answered, by status.
        public var floodStatuses: [Int: Int]
        /// Slow connections the service accepted (opened and held at least once).
        public var slowConnected: Int

        /// The latency at fraction `p`, in milliseconds.
        public func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            return latencies[min(latencies.count - 1, Int(Double(latencies.count - 1) * p))] * 1000
        }
    }

    /// The service with `ledger serve`'s defaults (16 connections per address, 10 s idle, a 30 s
    /// request deadline) but `maxConnections` (512: above 16 per address for the 19 addresses of
    /// the slow clients, see the deployment limits), 24 database sessions and no request rate (the
    /// honest device syncs as fast as it can); stop it when done.
    public static func startService(hubURL: String, maxConnections: Int = 512) throws -> HTTPServer {
        var options = SyncService.Options(hubURL: hubURL)
        options.databaseSessions = 24
        options.requestsPerMinute = 1_000_000
        let service = SyncService(options)
        var http = HTTPServer.Options()
        http.threads = 0
        http.maxConnections = maxConnections
        http.maxConnectionsPerAddress = 16
        http.connectionTimeout = 10
        http.requestDeadline = 30
        return try HTTPServer(options: http) { service.handle($0) }
    }

    /// A connection from `source` to 127.0.0.1:`port` that sends a request's first bytes one a
    /// second until `deadline`; whether the service kept it open at least once.
    static func slowClient(source: String, port: UInt16, deadline: Date) -> Bool {
        var held = false
        let head = Array("POST /v1/ledgers/00000000-0000-8000-8000-000000000000/pull HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8)
        while Date() < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return held }
            defer { close(fd) }
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            var remote = sockaddr_in()
            remote.sin_family = sa_family_t(AF_INET)
            remote.sin_port = port.bigEndian
            inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
            let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard bound == 0, connected == 0 else {
                usleep(200_000)
                continue
            }
            var i = 0
            while Date() < deadline {
                let byte = i < head.count ? head[i] : UInt8(ascii: "a")
                let sent = withUnsafePointer(to: byte) { send(fd, $0, 1, Int32(MSG_NOSIGNAL)) }
                if sent != 1 { break }
                if i == 8 { held = true }
                i += 1
                usleep(i < 8 ? 1_000 : 1_000_000)
            }
        }
        return held
    }

    /// Runs the attack against the service on 127.0.0.1:`port` while `store` syncs through
    /// `client`, one event per sync.
    public func run(port: UInt16, store: LedgerStore, client: SyncServiceClient, now: Instant) -> Outcome {
        let deadline = Date().addingTimeInterval(seconds)
        let lock = NSLock()
        nonisolated(unsafe) var slowConnected = 0
        nonisolated(unsafe) var statuses: [Int: Int] = [:]
        let group = DispatchGroup()
        for i in 0..<slowClients {
            group.enter()
            let source = "127.0.0.\(2 + i / max(1, perAddress))"
            Thread {
                let held = Self.slowClient(source: source, port: port, deadline: deadline)
                lock.lock()
                if held { slowConnected += 1 }
                lock.unlock()
                group.leave()
            }.start()
        }
        // The flood: pushes of one forged event each, under the honest device's name, signed by
        // a key of the attacker's.
        let ledger = store.ledgerID
        let device = store.device
        for _ in 0..<floodThreads {
            group.enter()
            Thread {
                let configuration = URLSessionConfiguration.ephemeral
                let session = URLSession(configuration: configuration)
                let thief = SigningKey.generate()
                var mine: [Int: Int] = [:]
                while Date() < deadline {
                    var e = Event(
                        id: UUID(), origin: device, sequence: 1_000_000, hlc: HLC(rawValue: 1), at: now, schema: 2,
                        payload: .tagAdded(TagAdded(goal: UUID(), tag: "forged")))
                    e.previousHash = EventChain.genesis
                    e.signer = thief.publicKey
                    e.signature = thief.sign(EventChain.message(ledger: ledger, origin: device, sequence: e.sequence, hash: EventChain.hash(e)))
                    let body = (try? ChangeSet(ledger: ledger, records: [EventCodec.encode(e)]).encoded()) ?? []
                    let (status, _) = ServiceLoad.post(
                        session, "http://127.0.0.1:\(port)", ledger: ledger, keyID: device, key: thief, "push", body)
                    mine[status, default: 0] += 1
                }
                session.finishTasksAndInvalidate()
                lock.lock()
                for (k, v) in mine { statuses[k, default: 0] += v }
                lock.unlock()
                group.leave()
            }.start()
        }
        // The honest device, meanwhile.
        var latencies: [Double] = []
        var errors: [String] = []
        Thread.sleep(forTimeInterval: min(2, seconds / 4))
        while Date() < deadline {
            let t0 = Date()
            do {
                _ = try store.writing {
                    try $0.append([EventDraft(payload: .notificationAuthorization(NotificationAuthorization(status: .authorized)))], now: now)
                }
                _ = try client.syncBlocking(store)
                latencies.append(Date().timeIntervalSince(t0))
            } catch {
                errors.append("\(error)")
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        group.wait()
        return Outcome(latencies: latencies.sorted(), errors: errors, floodStatuses: statuses, slowConnected: slowConnected)
    }
}
