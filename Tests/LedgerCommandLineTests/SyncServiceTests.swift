import Foundation
import HTTPServer
import LedgerHub
import LedgerService
import PostgreSQL
import RequestSigning
import Sodium
import Testing

@testable import GoalLedger

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The sync service for real: a hub on the test run's PostgreSQL, the service on 127.0.0.1, HTTP
/// requests signed by the devices' keys.
final class ServiceFixture: @unchecked Sendable {
    let hub: HubFixture
    let server: HTTPServer
    var base: String
    let serviceURL: String

    /// The service's log lines, in order.
    let logged = LogLines()
    let service: SyncService

    init(
        queryLedgerOverride: UUID? = nil, hubURL: String? = nil, configure: (inout SyncService.Options) -> Void = { _ in },
        http configureHTTP: (inout HTTPServer.Options) -> Void = { _ in }
    ) throws {
        hub = try HubFixture()
        try Hub(url: hub.url).grantService(role: "ledger_service_test")
        serviceURL = hubURL ?? hub.url(as: "ledger_service_test")
        let lines = logged
        var options = SyncService.Options(hubURL: serviceURL, log: { lines.append($0) })
        options.queryLedgerOverride = queryLedgerOverride
        configure(&options)
        service = SyncService(options)
        var http = HTTPServer.Options()
        http.threads = 0
        http.maxBodyBytes = 64 << 10
        configureHTTP(&http)
        let service = service
        server = try HTTPServer(options: http) { service.handle($0) }
        base = "http://127.0.0.1:\(server.port)"
    }

    deinit { server.stop() }

    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends raw bytes with the given headers.
    func send(_ method: String, _ path: String, headers: [(String, String)], body: [UInt8]) throws -> Answer {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        request.httpBody = Data(body)
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        request.timeoutInterval = 30
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Answer?
        nonisolated(unsafe) var failure: Error?
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let error { failure = error }
            if let http = response as? HTTPURLResponse {
                var h: [String: String] = [:]
                for (k, v) in http.allHeaderFields { h[String(describing: k).lowercased()] = String(describing: v) }
                result = Answer(status: http.statusCode, headers: h, body: Array(data ?? Data()))
            }
            done.signal()
        }.resume()
        done.wait()
        if let failure { throw failure }
        return result!
    }

    /// A request of `store`'s device, signed with its key (or `key`), at `created`.
    func signed(
        _ store: LedgerStore, _ op: String, body: [UInt8], key: SigningKey? = nil, created: Int64? = nil, nonce: String? = nil,
        ledger: UUID? = nil, tamper: (inout [(String, String)], inout [UInt8]) -> Void = { _, _ in }
    ) throws -> Answer {
        let ledger = ledger ?? store.ledgerID
        let path = "/v1/ledgers/\(ledger.uuidString)/\(op)"
        let signingKey = try key ?? store.keys.key(ledger: store.ledgerID, device: store.device)!
        var headers: [(String, String)] = [("ledger", ledger.uuidString), ("device-key", Hex.string(signingKey.publicKey))]
        let parts = SignedRequestParts(method: "POST", target: path, headers: headers, body: body)
        headers += try RequestSignature.sign(
            parts, components: SyncService.coveredComponents, key: signingKey, keyID: store.device,
            created: created ?? Int64(Date().timeIntervalSince1970), nonce: nonce ?? UUID().uuidString)
        var b = body
        tamper(&headers, &b)
        return try send("POST", path, headers: headers, body: b)
    }

    /// One round of sync through the service: pull, apply, push what the hub lacks.
    @discardableResult
    func sync(_ store: LedgerStore) throws -> (pulled: Int, pushed: Int) {
        let pull = try signed(store, "pull", body: try store.syncState().encoded())
        guard pull.status == 200 else { throw LedgerError(.store, "pull: \(pull.status) \(pull.text)") }
        let applied = try store.apply(try ChangeSet(decoding: pull.body), from: "the service")
        let hubState = try SyncState(decoding: Array(Data(base64Encoded: pull.headers["ledger-state"] ?? "")!))
        let changes = try store.changeSet(since: hubState)
        var pushed = 0
        if changes.events.contains(where: { ($0.sequence) > (hubState.heads[$0.origin]?.sequence ?? 0) }) {
            let push = try signed(store, "push", body: changes.encoded())
            guard push.status == 200 else { throw LedgerError(.store, "push: \(push.status) \(push.text)") }
            pushed = changes.count
        }
        return (applied.imported, pushed)
    }

    func rows() throws -> Int { try hub.count() }
}

/// Lines written by several threads.
final class LogLines: @unchecked Sendable {
    private var lines: [String] = []
    private let lock = NSLock()

    func append(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}

/// A clock a test sets.
final class TestClock: @unchecked Sendable {
    private var now: Date
    private let lock = NSLock()

    init(_ now: Date) { self.now = now }

    func read() -> Date {
        lock.lock()
        defer { lock.unlock() }
        return now
    }

    func set(_ date: Date) {
        lock.lock()
        now = date
        lock.unlock()
    }
}

struct SyncServiceTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!
    static let goal = UUID(uuidString: "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1")!

    func devices(_ f: ServiceFixture) throws -> (LedgerStore, LedgerStore, LedgerStore) {
        let phone = try LedgerStore.create(at: f.hub.path("phone"), device: "phone")
        try phone.append(
            [EventDraft(payload: .goalCreated(GoalCreated(goal: Self.goal, title: "Water", cadence: .daily, progressKind: .measurable, target: try! Amount("8"))))],
            now: now)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        let watch = try phone.clone(to: f.hub.path("watch"), device: "watch", now: now)
        return (phone, tablet, watch)
    }

    static func progress(_ n: Int) -> [EventDraft] {
        (0..<n).map { i in EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount(whole: Int64(i % 5 + 1))))) }
    }

    @Test func threeDevicesConvergeThroughTheServiceWithoutADatabaseRoleEach() throws {
        let f = try ServiceFixture()
        let (phone, tablet, watch) = try devices(f)
        #expect(try f.send("GET", "/v1/ready", headers: [], body: []).status == 200)
        for round in 0..<4 {
            for (i, store) in [phone, tablet, watch].enumerated() {
                try store.append(Self.progress(1 + (round + i) % 3), now: now)
                try f.sync(store)
            }
        }
        for store in [phone, tablet, watch] { try f.sync(store) }
        let digests = Set(try [phone, tablet, watch].map { try $0.digest() })
        #expect(digests.count == 1)
        for s in [phone, tablet, watch] { #expect(try s.verify().isClean) }
        #expect(try f.rows() == Int(try phone.lastPosition()))
    }

    @Test func refusedRequestsWriteNothing() throws {
        let f = try ServiceFixture()
        let (phone, tablet, _) = try devices(f)
        try f.sync(phone)
        try f.sync(tablet)
        try tablet.append(Self.progress(2), now: now)
        let changes = try tablet.changeSet(since: try phone.syncState()).encoded()
        let rowsBefore = try f.rows()
        // A device the ledger never enrolled (a store of the ledger with its own fresh key).
        let stranger = try LedgerStore.create(at: f.hub.path("stranger"), device: "stranger", ledger: phone.ledgerID)
        var a = try f.signed(stranger, "push", body: changes)
        #expect(a.status == 401 && a.text.contains(SyncService.unauthenticated), "\(a.text)")
        #expect(f.logged.all.last?.contains("not enrolled") == true)
        // Another ledger's key under an enrolled name.
        let other = try LedgerStore.create(at: f.hub.path("other"), device: "tablet")
        a = try f.signed(tablet, "push", body: changes, key: try other.keys.key(ledger: other.ledgerID, device: "tablet"))
        #expect(a.status == 401, "\(a.text)")
        // A body altered after signing.
        a = try f.signed(tablet, "push", body: changes) { _, body in body[body.count / 2] ^= 1 }
        #expect(a.status == 401 && f.logged.all.last?.contains("digest") == true, "\(a.text)")
        // Too old.
        a = try f.signed(tablet, "push", body: changes, created: Int64(Date().timeIntervalSince1970) - 3600)
        #expect(a.status == 401 && f.logged.all.last?.contains("before the service's clock") == true, "\(a.text)")
        // Not a change set.
        a = try f.signed(tablet, "push", body: Array("garbage".utf8))
        #expect(a.status == 400, "\(a.text)")
        // Over the size limit.
        a = try f.signed(tablet, "push", body: [UInt8](repeating: 7, count: 70 << 10))
        #expect(a.status == 413, "\(a.status)")
        // Unsigned.
        a = try f.send("POST", "/v1/ledgers/\(phone.ledgerID.uuidString)/pull", headers: [("ledger", phone.ledgerID.uuidString)], body: [])
        #expect(a.status == 401)
        #expect(try f.rows() == rowsBefore)
        // A replayed request: the first goes through, the same one again is refused.
        let nonce = UUID().uuidString
        a = try f.signed(tablet, "push", body: changes, nonce: nonce)
        #expect(a.status == 200, "\(a.text)")
        let rowsAfter = try f.rows()
        #expect(rowsAfter == rowsBefore + 2)
        a = try f.signed(tablet, "push", body: changes, nonce: nonce)
        #expect(a.status == 401 && f.logged.all.last?.contains("replayed") == true, "\(a.text)")
        // A revoked device can no longer reach the ledger.
        try phone.revoke(device: "tablet", now: now)
        try f.sync(phone)
        a = try f.signed(tablet, "pull", body: try tablet.syncState().encoded())
        #expect(a.status == 401 && f.logged.all.last?.contains("revoked") == true, "\(a.text)")
    }

    @Test func aPushOfForgedEventsIsSetAsideByTheService() throws {
        let f = try ServiceFixture()
        let (phone, tablet, _) = try devices(f)
        try f.sync(phone)
        try f.sync(tablet)
        // The tablet pushes an event it forged under the phone's name, with its own key.
        let key = try tablet.keys.key(ledger: tablet.ledgerID, device: "tablet")!
        var forged = try phone.events(missingFrom: [:]).last { $0.origin == "phone" }!
        let previous = forged
        forged.id = UUID()
        forged.sequence += 1
        forged.hlc = HLC(rawValue: forged.hlc.rawValue + 1000)
        forged.previousHash = EventChain.hash(previous)
        forged.signer = key.publicKey
        forged.signature = key.sign(
            EventChain.message(ledger: phone.ledgerID, origin: "phone", sequence: forged.sequence, hash: EventChain.hash(forged)))
        let before = try f.rows()
        let a = try f.signed(tablet, "push", body: try ChangeSet(ledger: phone.ledgerID, records: [EventCodec.encode(forged)]).encoded())
        #expect(a.status == 200 && a.text.contains(#""inserted":0"#) && a.text.contains("phone"), "\(a.text)")
        #expect(try f.rows() == before)
    }

    @Test func aBugThatQueriesAnotherLedgerStillReadsNothingOfIt() throws {
        // Ledger A's rows exist; the service is built with a bug that queries ledger A whatever
        // the request's ledger is. A request for ledger B must get nothing of A.
        let probe = try ServiceFixture()
        let (phone, _, _) = try devices(probe)
        try probe.sync(phone)
        #expect(try probe.rows() > 0)
        let buggy = try ServiceFixture(queryLedgerOverride: phone.ledgerID, hubURL: probe.serviceURL)
        let other = try LedgerStore.create(at: buggy.hub.path("other"), device: "solo")
        let a = try buggy.signed(other, "pull", body: try other.syncState().encoded())
        #expect(a.status == 200, "\(a.text)")
        #expect(try ChangeSet(decoding: a.body).count == 0)
    }

    @Test func anUnreachableDatabaseIs503AndTheStoreIsUnchanged() throws {
        let dead = "postgresql:///hub?host=/nonexistent-ledger-socket&user=nobody"
        let f = try ServiceFixture(hubURL: dead)
        let (phone, _, _) = try devices(f)
        let before = try phone.digest()
        #expect(try f.send("GET", "/v1/ready", headers: [], body: []).status == 503)
        let a = try f.signed(phone, "pull", body: try phone.syncState().encoded())
        #expect(a.status == 503, "\(a.text)")
        #expect(try phone.digest() == before)
    }
}

struct SyncServiceFaultTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

    /// Starts `ledger serve` as a child process on a free port of 127.0.0.1.
    func serve(_ url: String) throws -> (Process, String) { try startLedgerServe(url) }

    @Test(arguments: 0..<3)
    func aServiceKilledDuringAPushLeavesNothingHalfWritten(_ seed: Int) throws {
        let f = try ServiceFixture()
        let phone = try LedgerStore.create(at: f.hub.path("phone"), device: "phone")
        let goal = UUID()
        try phone.append(
            [EventDraft(payload: .goalCreated(GoalCreated(goal: goal, title: "Water", cadence: .daily, progressKind: .measurable, target: try! Amount("8"))))],
            now: now)
        try f.sync(phone)
        let before = try f.rows()
        try phone.append(
            (0..<3_000).map { i in EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount(whole: Int64(i % 7 + 1))))) }, now: now)
        let (service, base) = try serve(f.serviceURL)
        f.base = base
        // The push runs while the service is killed at a seeded moment.
        let killer = Thread {
            Thread.sleep(forTimeInterval: [0.005, 0.03, 0.08][seed])
            kill(service.processIdentifier, SIGKILL)
        }
        killer.start()
        _ = try? f.sync(phone)
        service.waitUntilExit()
        let rows = try f.rows()
        #expect(rows == before || rows == before + 3_000, "\(rows - before) of 3000 rows written")
        // Started again, the next sync completes.
        let (again, base2) = try serve(f.serviceURL)
        defer {
            again.terminate()
            again.waitUntilExit()
        }
        f.base = base2
        try f.sync(phone)
        #expect(try f.rows() == before + 3_000)
        #expect(try phone.verify().isClean)
        // SIGTERM stops it gracefully.
        again.terminate()
        again.waitUntilExit()
        #expect(again.terminationStatus == 0)
    }
}

struct SyncServiceTLSTests {
    /// Runs a program, returning its exit status and standard output.
    @discardableResult
    func run(_ program: String, _ arguments: [String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [program] + arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func theServiceSpeaksTLSWithASelfSignedCertificate() throws {
        let f = try ServiceFixture()
        let dir = f.hub.root
        let (made, _) = try run(
            "openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                "-days", "1", "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem",
            ])
        #expect(made == 0)
        var options = HTTPServer.Options()
        options.threads = 0
        options.tls = HTTPServer.TLS(
            certificatePEM: try String(contentsOfFile: dir + "/cert.pem", encoding: .utf8),
            keyPEM: try String(contentsOfFile: dir + "/key.pem", encoding: .utf8))
        let service = SyncService(SyncService.Options(hubURL: f.serviceURL))
        let server = try HTTPServer(options: options) { service.handle($0) }
        defer { server.stop() }
        let base = "https://127.0.0.1:\(server.port)"
        let (ok, ready) = try run("curl", ["-s", "--cacert", dir + "/cert.pem", base + "/v1/ready"])
        #expect(ok == 0 && ready == "ready\n", "\(ready)")
        // A signed pull over TLS: the founder's first, with the ledger's (empty) state.
        let phone = try LedgerStore.create(at: f.hub.path("phone"), device: "phone")
        let key = try phone.keys.key(ledger: phone.ledgerID, device: "phone")!
        let path = "/v1/ledgers/\(phone.ledgerID.uuidString)/pull"
        let body = try phone.syncState().encoded()
        try Data(body).write(to: URL(fileURLWithPath: dir + "/state"))
        var headers: [(String, String)] = [("ledger", phone.ledgerID.uuidString), ("device-key", Hex.string(key.publicKey))]
        headers += try RequestSignature.sign(
            SignedRequestParts(method: "POST", target: path, headers: headers, body: body), components: SyncService.coveredComponents,
            key: key, keyID: "phone", created: Int64(Date().timeIntervalSince1970), nonce: UUID().uuidString)
        let (pulled, answer) = try run(
            "curl",
            ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", dir + "/cert.pem", "--data-binary", "@" + dir + "/state"]
                + headers.flatMap { ["-H", "\($0.0): \($0.1)"] } + [base + path])
        #expect(pulled == 0 && answer == "200", "\(answer)")
        // Plain HTTP to the TLS port gets nothing.
        let (_, plain) = try run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(server.port)/v1/ready"])
        #expect(plain != "200")
    }
}
