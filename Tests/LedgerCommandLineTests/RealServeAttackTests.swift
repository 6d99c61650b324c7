import Foundation
import LedgerBenchmarks
import LedgerService
import LedgerSync
import Sodium
import Testing

@testable import GoalLedger

/// The attacks of the sync service's threat table against the real `ledger serve` on loopback
/// (the executable, its options and its defaults), each failing while honest devices sync
/// before and after: one answer for every authentication failure, a request signed too far
/// ahead or expired, unsigned requests for made-up ledgers, a push of a made-up origin's
/// events, identical pushes at once, a push past the ledger's quota, a forged rotation row, a
/// hub full of made-up origins, slow clients and a forged flood.
struct RealServeAttackTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

    @Test func theThreatTableAgainstTheRealExecutable() throws {
        let f = try ServiceFixture()
        let (service, base) = try startLedgerServe(f.serviceURL, ["--max-ledger-events", "400", "--max-connections", "512"])
        defer {
            service.terminate()
            service.waitUntilExit()
        }
        f.base = base
        let c = SyncServiceClient(baseURL: URL(string: base)!)
        let phone = try SyncServiceAttackTests.founder(at: f.hub.path("phone"), now: now)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        let watch = try phone.clone(to: f.hub.path("watch"), device: "watch", now: now)
        try phone.revoke(device: "watch", now: now)
        for s in [phone, tablet] { _ = try c.syncBlocking(s) }
        let state = try tablet.syncState().encoded()

        // One answer for an unknown key, a revoked device and another device's name.
        let answers = [
            try f.signed(tablet, "pull", body: state, key: SigningKey.generate()),
            try f.signed(watch, "pull", body: state),
            try f.signed(tablet, "pull", body: state, key: try #require(try phone.keys.key(ledger: phone.ledgerID, device: "phone"))),
        ]
        #expect(answers.allSatisfy { $0.status == 401 } && Set(answers.map(\.text)).count == 1, "\(answers.map(\.text))")
        // Signed too far ahead, or expired.
        let clock = Int64(Date().timeIntervalSince1970)
        #expect(try f.signed(tablet, "pull", body: state, created: clock + 300).status == 401)
        // Unsigned requests for made-up ledgers.
        for _ in 0..<5 {
            let id = UUID().uuidString
            #expect(try f.send("POST", "/v1/ledgers/\(id)/pull", headers: [("ledger", id)], body: []).status == 401)
        }
        // A push of 2,000 events of a made-up origin: set aside unread, nothing stored.
        let rows = try f.rows()
        let key = SigningKey.generate()
        var forged: [[UInt8]] = []
        var previous = EventChain.genesis
        for i in 1...2_000 {
            var e = Event(
                id: UUID(), origin: "mallory", sequence: UInt64(i), hlc: HLC(rawValue: UInt64(i) << 16), at: now, schema: 2,
                payload: .tagAdded(TagAdded(goal: SyncServiceAttackTests.goal, tag: "m")))
            e.previousHash = previous
            previous = EventChain.hash(e)
            if i == 2_000 {
                e.signer = key.publicKey
                e.signature = key.sign(EventChain.message(ledger: phone.ledgerID, origin: "mallory", sequence: e.sequence, hash: previous))
            }
            forged.append(EventCodec.encode(e))
        }
        let push = try f.signed(tablet, "push", body: ExportFile.encode(ledger: phone.ledgerID, records: forged))
        #expect(push.status == 200 && push.text.contains("untrustedSigner") && push.text.contains("\"inserted\":0"), "\(push.text)")
        #expect(try f.rows() == rows)
        // Identical pushes at once: each 200, every event stored once.
        try tablet.append(SyncServiceAttackTests.progress(30), now: now)
        let hubState = try SyncState(decoding: Array(Data(base64Encoded: try f.signed(tablet, "pull", body: state).headers["ledger-state"] ?? "")!))
        let changes = try tablet.changeSet(since: hubState).encoded()
        let statuses = LogLines()
        inParallel(8) { _ in statuses.append("\((try? f.signed(tablet, "push", body: changes))?.status ?? 0)") }
        #expect(statuses.all.allSatisfy { $0 == "200" }, "\(statuses.all)")
        #expect(try f.rows() == rows + 30)
        // Past the ledger's quota (400 events): 413, nothing written.
        try phone.append(SyncServiceAttackTests.progress(400), now: now)
        #expect(throws: LedgerError.self) { try c.syncBlocking(phone) }
        #expect(try f.rows() == rows + 30)
        // A forged rotation row of the tablet, written by a hub role: its key opens nothing.
        let attacker = SigningKey.generate()
        try SyncServiceHubRowTests.write(
            try SyncServiceHubRowTests.forgedRotation(of: tablet, to: attacker.publicKey), into: f, ledger: tablet.ledgerID)
        #expect(try f.signed(tablet, "pull", body: state, key: attacker).status == 401)
        #expect(try f.signed(tablet, "pull", body: state).status == 200)
        // A hub full of made-up origins (rows a hub role wrote): nothing of them reaches a
        // device, nothing waits.
        for i in 0..<200 {
            let id = UUID()
            _ = try f.hub.admin().query(
                "INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record) VALUES ($1, $2, 1, $3, 1, $4)",
                [.uuid(phone.ledgerID), .text("ghost-\(i)"), .uuid(id), .bytea([2, 0, 0, 0, 0] + id.bytes + UInt64(1).bigEndianBytes + [0xFF])])
        }
        // (the forged rotation row above waits at the tablet, named: it claims the tablet's name)
        let ghosts = try c.syncBlocking(tablet)
        #expect(ghosts.pulled.waiting.allSatisfy { !$0.origin.hasPrefix("ghost") } && ghosts.pulled.unknownOrigins == 0, "\(ghosts.pulled)")
        #expect(try tablet.waitingEvents().map(\.origin) == ["tablet"])
        // Slow clients and a forged flood while the phone syncs.
        let quietClient = SyncServiceClient(baseURL: URL(string: base)!)
        let quiet = try LedgerStore.create(at: f.hub.path("quiet"), device: "quiet")
        _ = try quietClient.syncBlocking(quiet)
        let port = try #require(UInt16(base.split(separator: ":").last.map(String.init) ?? ""))
        let outcome = ServiceAttackLoad(slowClients: 300, floodThreads: 2, seconds: 5).run(
            port: port, store: quiet, client: quietClient, now: now)
        #expect(outcome.errors.isEmpty && outcome.latencies.count >= 3, "\(outcome.errors.prefix(3))")
        #expect(Set(outcome.floodStatuses.keys) == [401], "\(outcome.floodStatuses)")
        #expect(service.isRunning)
        // The honest devices still sync, and agree.
        _ = try c.syncBlocking(tablet)
        #expect(try tablet.verify().isClean)
    }

    @Test func theRealExecutableLogsControlCharactersEscapedAndOutlivesADatabaseRestart() throws {
        let f = try ServiceFixture()
        let log = f.hub.root + "/serve.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        var started: (Process, String)?
        for attempt in 0..<20 where started == nil {
            let port = 20_000 + Int.random(in: 0..<20_000) + attempt
            let p = Process()
            p.executableURL = ledgerExecutable()
            p.arguments = ["serve", "--hub", f.serviceURL, "--listen", "127.0.0.1:\(port)"]
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle(forWritingAtPath: log)
            try p.run()
            let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
            if p.isRunning, line.contains("serving") { started = (p, "http://127.0.0.1:\(port)") } else { p.terminate(); p.waitUntilExit() }
        }
        let (service, base) = try #require(started)
        defer {
            service.terminate()
            service.waitUntilExit()
        }
        f.base = base
        let c = SyncServiceClient(baseURL: URL(string: base)!)
        let phone = try SyncServiceAttackTests.founder(at: f.hub.path("phone"), now: now)
        _ = try c.syncBlocking(phone)
        // Control characters in the path, sent raw on the wire, reach the log escaped.
        let port = try #require(UInt16(base.split(separator: ":").last.map(String.init) ?? ""))
        let answer = Self.raw(port: port, Array("POST /v1/ledgers/\u{1B}[2J\u{7}GET/pull HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
        #expect(answer.hasPrefix("HTTP/1.1 4"), "\(answer.prefix(80))")
        // The pool holds idle sessions; a restart ends every session of the service's role.
        let state = try phone.syncState().encoded()
        let warm = LogLines()
        inParallel(8) { _ in warm.append("\((try? f.signed(phone, "pull", body: state))?.status ?? 0)") }
        #expect(warm.all.allSatisfy { $0 == "200" }, "\(warm.all)")
        let admin = try f.hub.admin()
        let ended = try admin.query(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'ledger_service_test' AND datname = $1",
            [.text(f.hub.database)]
        ).int64(0, 0)
        #expect(ended >= 1, "\(ended) sessions ended")
        Thread.sleep(forTimeInterval: 0.3)
        var statuses: [Int] = []
        for _ in 0..<12 { statuses.append(try f.signed(phone, "pull", body: state).status) }
        #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        try phone.append(SyncServiceAttackTests.progress(1), now: now)
        #expect(try c.syncBlocking(phone).pushed.imported == 1)
        service.terminate()
        service.waitUntilExit()
        let text = String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.contains("GET/pull") }.map(String.init) ?? ""
        #expect(line.contains(#"/v1/ledgers/\u{1B}[2J\u{7}GET/pull"#), "\(text.suffix(600))")
        #expect(!line.unicodeScalars.contains { $0.properties.generalCategory == .control })
    }

    @Test func theRealExecutableHoldsADeviceKeyToItsRate() throws {
        let f = try ServiceFixture()
        let (service, base) = try startLedgerServe(f.serviceURL, ["--requests-per-minute", "5"])
        defer {
            service.terminate()
            service.waitUntilExit()
        }
        f.base = base
        let phone = try SyncServiceAttackTests.founder(at: f.hub.path("phone"), now: now)
        let state = try phone.syncState().encoded()
        // A burst of 5, then 429 with Retry-After: 12 (a token every 12 s); the client names it.
        let statuses = try (0..<6).map { _ in try f.signed(phone, "pull", body: state) }
        #expect(statuses.prefix(5).allSatisfy { $0.status == 200 }, "\(statuses.map(\.status))")
        #expect(statuses[5].status == 429 && ["11", "12"].contains(statuses[5].headers["retry-after"] ?? ""), "\(statuses[5].headers)")
        #expect {
            try SyncServiceClient(baseURL: URL(string: base)!).syncBlocking(phone)
        } throws: { error in
            (error as? LedgerError)?.message.contains("is limiting the requests of device phone") == true
        }
        #expect(service.isRunning)
    }

    /// Sends `bytes` to 127.0.0.1:`port` and reads the answer until the server closes.
    static func raw(port: UInt16, _ bytes: [UInt8]) -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return "" }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            out += buffer[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
