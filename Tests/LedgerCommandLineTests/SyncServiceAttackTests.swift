import Foundation
import HTTPServer
import LedgerHub
import LedgerService
import LedgerSync
import PostgreSQL
import Sodium
import Testing

@testable import GoalLedger
@testable import RequestSigning

/// Starts `ledger serve` as a child process on a free port of 127.0.0.1, with `extra` options;
/// returns it and its base URL once it printed that it listens.
func startLedgerServe(_ url: String, _ extra: [String] = []) throws -> (Process, String) {
    for attempt in 0..<20 {
        let port = 20_000 + Int.random(in: 0..<20_000) + attempt
        let p = Process()
        p.executableURL = ledgerExecutable()
        p.arguments = ["serve", "--hub", url, "--listen", "127.0.0.1:\(port)"] + extra
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Ready once it printed its address (or gone: the port was taken).
        let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        if p.isRunning, line.contains("serving") { return (p, "http://127.0.0.1:\(port)") }
        p.terminate()
        p.waitUntilExit()
    }
    throw LedgerError(.internal, "no free port for ledger serve")
}

/// Runs `body(i)` for each `i` below `count`, each on a thread of its own, all released at once;
/// returns when all are done.
func inParallel(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for i in 0..<count {
        done.enter()
        Thread {
            start.wait()
            body(i)
            done.leave()
        }.start()
    }
    for _ in 0..<count { start.signal() }
    done.wait()
}

/// The sync service as an attacker tries it: each test is one way in, which must fail while an
/// honest device syncs before and after.
struct SyncServiceAttackTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!
    static let goal = UUID(uuidString: "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1")!

    func founder(_ f: ServiceFixture, _ name: String = "phone") throws -> LedgerStore {
        let store = try LedgerStore.create(at: f.hub.path(name), device: name)
        try store.append(
            [
                EventDraft(
                    payload: .goalCreated(
                        GoalCreated(goal: Self.goal, title: "Water", cadence: .daily, progressKind: .measurable, target: 8)))
            ],
            now: now)
        return store
    }

    /// A new ledger's founder `name` at `path`, holding one goal (`goal`).
    static func founder(at path: String, _ name: String = "phone", now: Instant) throws -> LedgerStore {
        let store = try LedgerStore.create(at: path, device: name)
        try store.append(
            [EventDraft(payload: .goalCreated(GoalCreated(goal: goal, title: "Water", cadence: .daily, progressKind: .measurable, target: 8)))],
            now: now)
        return store
    }

    static func progress(_ n: Int) -> [EventDraft] {
        (0..<n).map { i in EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount(whole: Int64(i % 5 + 1))))) }
    }

    /// The founder's pull naming its own origin at `sequence`.
    func pull(_ f: ServiceFixture, _ store: LedgerStore, at sequence: UInt64) throws -> ServiceFixture.Answer {
        var state = try store.syncState()
        state.heads[store.device] = SyncState.Head(sequence: sequence, hash: [UInt8](repeating: 1, count: 32))
        return try f.signed(store, "pull", body: state.encoded())
    }

    @Test func aSequencePastWhatALedgerHoldsIs400AndTheServiceStaysUp() throws {
        let f = try ServiceFixture()
        // The real command, so that a trap ends a child process and not the tests.
        let (service, base) = try startLedgerServe(f.serviceURL)
        defer {
            service.terminate()
            service.waitUntilExit()
        }
        f.base = base
        // A throwaway ledger of a fresh key (the founder's path), one event pushed.
        let phone = try founder(f)
        try f.sync(phone)
        for sequence in [UInt64(1) << 63, UInt64.max] {
            let a = try pull(f, phone, at: sequence)
            #expect(a.status == 400, "\(a.status) \(a.text)")
            #expect(
                a.text.contains("the sequence of phone, \(sequence), is past the largest a store holds (9223372036854775807)"), "\(a.text)")
        }
        // The largest sequence a ledger holds is a state like any other.
        #expect(try pull(f, phone, at: UInt64(Int64.max)).status == 200)
        // A pushed event past it is refused as the change set is read.
        var far = try phone.events(missingFrom: [:]).last!
        far.sequence = 1 << 63
        let push = try f.signed(phone, "push", body: ExportFile.encode(ledger: phone.ledgerID, records: [EventCodec.encode(far)]))
        #expect(push.status == 400 && push.text.contains("origin sequence 9223372036854775808 is past the largest"), "\(push.text)")
        #expect(service.isRunning)
        // The honest device goes on.
        try phone.append(Self.progress(2), now: now)
        try f.sync(phone)
        #expect(try f.rows() == 3)
    }

    @Test func everyAuthenticationFailureIsOneAnswerAndItsDetailIsLoggedEscaped() throws {
        let f = try ServiceFixture()
        let phone = try founder(f)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        let watch = try phone.clone(to: f.hub.path("watch"), device: "watch", now: now)
        try phone.revoke(device: "watch", now: now)
        try f.sync(phone)
        try f.sync(tablet)
        let state = try tablet.syncState().encoded()
        let stranger = try LedgerStore.create(at: f.hub.path("stranger"), device: "stranger", ledger: phone.ledgerID)
        let other = try LedgerStore.create(at: f.hub.path("other"), device: "tablet")
        let otherKey = try other.keys.key(ledger: other.ledgerID, device: "tablet")
        let nonce = UUID().uuidString
        #expect(try f.signed(tablet, "pull", body: state, nonce: nonce).status == 200)
        let attempts: [(String, () throws -> ServiceFixture.Answer, String)] = [
            ("a device never enrolled", { try f.signed(stranger, "pull", body: state) }, "device stranger is not enrolled"),
            ("a revoked device", { try f.signed(watch, "pull", body: state) }, "device watch was revoked"),
            ("another ledger's key", { try f.signed(tablet, "pull", body: state, key: otherKey) }, "the signature was refused"),
            ("an altered body", { try f.signed(tablet, "pull", body: state) { _, body in body[body.count - 1] ^= 1 } }, "digest"),
            (
                "a stale request", { try f.signed(tablet, "pull", body: state, created: Int64(Date().timeIntervalSince1970) - 3600) },
                "before the service's clock"
            ),
            ("a replay", { try f.signed(tablet, "pull", body: state, nonce: nonce) }, "replayed"),
            (
                "no signature",
                {
                    try f.send(
                        "POST", "/v1/ledgers/\(phone.ledgerID.uuidString)/pull", headers: [("ledger", phone.ledgerID.uuidString)],
                        body: state)
                },
                "the signature was refused"
            ),
        ]
        let expected = #"{"error":"\#(SyncService.unauthenticated)"}"#
        for (what, attempt, detail) in attempts {
            let a = try attempt()
            #expect(a.status == 401, "\(what): \(a.status)")
            #expect(a.text == expected, "\(what): \(a.text)")
            #expect(f.logged.all.last?.contains(detail) == true, "\(what): \(f.logged.all)")
        }
        // Control characters in the path or the keyid reach the log escaped.
        let path = "/v1/ledgers/\u{1B}[2J\u{7}\r\nGET\u{0}/pull"
        var answer = f.service.handle(HTTPRequest(method: "POST", path: path))
        #expect(answer.status == 404)
        let pathLine = f.logged.all.last ?? ""
        #expect(pathLine.contains(#"/v1/ledgers/\u{1B}[2J\u{7}\u{D}\u{A}GET\u{0}/pull"#), "\(pathLine)")
        var headers: [(name: String, value: String)] = [("ledger", phone.ledgerID.uuidString)]
        let key = try tablet.keys.key(ledger: tablet.ledgerID, device: "tablet")!
        let target = "/v1/ledgers/\(phone.ledgerID.uuidString)/pull"
        headers += try RequestSignature.sign(
            SignedRequestParts(method: "POST", target: target, headers: headers, body: state), components: SyncService.coveredComponents,
            key: key, keyID: "tablet", created: Int64(Date().timeIntervalSince1970), nonce: UUID().uuidString)
        headers = headers.map {
            $0.name == "signature-input"
                ? ($0.name, $0.value.replacingOccurrences(of: "keyid=\"tablet\"", with: "keyid=\"tab\u{1B}[31m\nlet\"")) : $0
        }
        answer = f.service.handle(HTTPRequest(method: "POST", path: target, headers: headers, body: state))
        #expect(answer.status == 401 && answer.body == Array(expected.utf8))
        let keyLine = f.logged.all.last ?? ""
        #expect(keyLine.contains(#"device=tab\u{1B}[31m\u{A}let"#), "\(keyLine)")
        for line in [pathLine, keyLine] {
            #expect(!line.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(line.debugDescription)")
        }
        // The honest devices sync on.
        try tablet.append(Self.progress(1), now: now)
        try f.sync(tablet)
        try f.sync(phone)
        #expect(try phone.digest() == tablet.digest())
    }

    @Test func identicalPushesAtOnceEachAnswer200AndStoreEveryEventOnce() throws {
        let f = try ServiceFixture()
        let phone = try founder(f)
        try f.sync(phone)
        try phone.append(Self.progress(40), now: now)
        let pull = try f.signed(phone, "pull", body: try phone.syncState().encoded())
        let hubState = try SyncState(decoding: Array(Data(base64Encoded: pull.headers["ledger-state"] ?? "")!))
        let changes = try phone.changeSet(since: hubState).encoded()
        // Handed to the service at once, each on its own thread (the HTTP client would queue
        // them on a few connections).
        let pushes = 24
        let requests = try (0..<pushes).map { _ in try Self.request(phone, "push", body: changes) }
        let answers = LogLines()
        inParallel(pushes) { i in
            let a = f.service.handle(requests[i])
            answers.append("\(a.status) \(String(decoding: a.body, as: UTF8.self))")
        }
        let all = answers.all
        #expect(all.count == pushes)
        #expect(all.allSatisfy { $0.hasPrefix("200 ") }, "\(all.filter { !$0.hasPrefix("200 ") })")
        #expect(!all.contains { $0.contains("duplicate") || $0.contains("violates") || $0.contains("hub.") }, "\(all)")
        // What was new was new once: the answers' counts add up to the events pushed.
        let inserted = all.compactMap { line -> Int? in
            guard let r = line.range(of: #""inserted":"#) else { return nil }
            return Int(line[r.upperBound...].prefix { $0.isNumber })
        }
        #expect(inserted.reduce(0, +) == 40, "\(inserted)")
        #expect(try f.rows() == 41)
        try f.sync(phone)
        #expect(try phone.verify().isClean)
    }

    /// A request of `store`'s device, signed now, as the service receives it.
    static func request(_ store: LedgerStore, _ op: String, body: [UInt8]) throws -> HTTPRequest {
        let path = "/v1/ledgers/\(store.ledgerID.uuidString)/\(op)"
        let key = try store.keys.key(ledger: store.ledgerID, device: store.device)!
        var headers: [(name: String, value: String)] = [("ledger", store.ledgerID.uuidString), ("device-key", Hex.string(key.publicKey))]
        headers += try RequestSignature.sign(
            SignedRequestParts(method: "POST", target: path, headers: headers, body: body), components: SyncService.coveredComponents,
            key: key, keyID: store.device, created: Int64(Date().timeIntervalSince1970), nonce: UUID().uuidString)
        return HTTPRequest(method: "POST", path: path, headers: headers, body: body)
    }

    /// Signs a pull of `store` at `created` with `expires` when given.
    func pullSigned(
        _ f: ServiceFixture, _ store: LedgerStore, created: Int64, expires: Int64? = nil, nonce: String = UUID().uuidString
    ) throws -> ServiceFixture.Answer {
        let path = "/v1/ledgers/\(store.ledgerID.uuidString)/pull"
        let body = try store.syncState().encoded()
        let key = try store.keys.key(ledger: store.ledgerID, device: store.device)!
        var headers: [(name: String, value: String)] = [("ledger", store.ledgerID.uuidString), ("device-key", Hex.string(key.publicKey))]
        var parameters: SFParameters = [("created", .integer(created)), ("keyid", .string(store.device)), ("alg", .string("ed25519"))]
        if let expires { parameters.append(("expires", .integer(expires))) }
        parameters.append(("nonce", .string(nonce)))
        headers += try RequestSignature.sign(
            SignedRequestParts(method: "POST", target: path, headers: headers, body: body), components: SyncService.coveredComponents,
            parameters: parameters, key: key, label: "sig1")
        return try f.send("POST", path, headers: headers.map { ($0.name, $0.value) }, body: body)
    }

    @Test func nonceLifetimeCoversTheWindowOnBothSidesAndExpiresIsHonoured() throws {
        let start: Int64 = 1_800_000_000
        let clock = TestClock(Date(timeIntervalSince1970: Double(start)))
        let f = try ServiceFixture(configure: { $0.clock = { clock.read() } })
        let phone = try founder(f)
        let other = try founder(f, "laptop")
        let admin = try f.hub.admin()
        func nonces(_ ledger: UUID) throws -> Int {
            Int(try admin.query("SELECT count(*) FROM hub.nonces WHERE ledger = $1", [.uuid(ledger)]).int64(0, 0))
        }
        // The attack: `created` 300 s ahead, replayed 600.5 s later. Ahead by more than the lead
        // (60 s) is refused now.
        var nonce = UUID().uuidString
        var a = try pullSigned(f, phone, created: start + 300, nonce: nonce)
        #expect(a.status == 401 && a.text == #"{"error":"\#(SyncService.unauthenticated)"}"#, "\(a.text)")
        #expect(f.logged.all.last?.contains("more than 60 s after the service's clock") == true)
        clock.set(Date(timeIntervalSince1970: Double(start) + 600.5))
        #expect(try pullSigned(f, phone, created: start + 300, nonce: nonce).status == 401)
        // At the edges: as far ahead as allowed, its replay refused until `created` is as old as
        // the window allows, to the millisecond.
        clock.set(Date(timeIntervalSince1970: Double(start) + 1000))
        nonce = UUID().uuidString
        let created = start + 1000 + 60
        #expect(try pullSigned(f, phone, created: created, nonce: nonce).status == 200)
        #expect(try pullSigned(f, phone, created: created + 1, nonce: UUID().uuidString).status == 401)
        for late in [0.0, 200, 300.9, 359.999, 360] {
            clock.set(Date(timeIntervalSince1970: Double(start) + 1000 + late))
            a = try pullSigned(f, phone, created: created, nonce: nonce)
            #expect(a.status == 401, "replayed \(late) s later: \(a.status)")
            #expect(f.logged.all.last?.contains("replayed") == true, "\(late): \(f.logged.all.last ?? "")")
        }
        clock.set(Date(timeIntervalSince1970: Double(created) + 300.001))
        #expect(try pullSigned(f, phone, created: created, nonce: nonce).status == 401)
        #expect(f.logged.all.last?.contains("more than 300 s before the service's clock") == true)
        // `expires` is honoured.
        let t = Int64(Double(created) + 300.001)
        #expect(try pullSigned(f, phone, created: t, expires: t + 10).status == 200)
        clock.set(Date(timeIntervalSince1970: Double(t + 10)))
        #expect(try pullSigned(f, phone, created: t, expires: t + 10).status == 401)
        #expect(f.logged.all.last?.contains("expired at \(t + 10)") == true)
        // Nonces go once older than their lifetime (300 + 60 + 1 s), whatever their ledger.
        #expect(try pullSigned(f, other, created: t + 10).status == 200)
        #expect(try nonces(other.ledgerID) == 1)
        clock.set(Date(timeIntervalSince1970: Double(t + 10) + 361.5 + 60))
        #expect(try pullSigned(f, phone, created: t + 10 + 421).status == 200)
        #expect(try nonces(other.ledgerID) == 0)
        #expect(try nonces(phone.ledgerID) == 1)
    }

    @Test func aDatabaseThatEndedEverySessionCostsNoFailedRequest() throws {
        let f = try ServiceFixture()
        let phone = try founder(f)
        try f.sync(phone)
        let state = try phone.syncState().encoded()
        // Several idle connections in the pool.
        let warm = LogLines()
        inParallel(8) { _ in warm.append("\((try? f.signed(phone, "pull", body: state))?.status ?? 0)") }
        #expect(warm.all.allSatisfy { $0 == "200" }, "\(warm.all)")
        // What a restart does to them: every session of the service's role ends.
        let admin = try f.hub.admin()
        let database = f.hub.database
        let ended = try admin.query(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'ledger_service_test' AND datname = $1",
            [.text(database)]
        ).int64(0, 0)
        #expect(ended >= 2, "\(ended) sessions ended")
        for _ in 0..<100 {
            let left = try admin.query(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = 'ledger_service_test' AND datname = $1", [.text(database)]
            ).int64(0, 0)
            if left == 0 { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        var statuses: [Int] = []
        for _ in 0..<12 { statuses.append(try f.signed(phone, "pull", body: state).status) }
        #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        try phone.append(Self.progress(1), now: now)
        try f.sync(phone)
        #expect(try f.rows() == 2)
    }

    @Test func aPushOverTheEventCapIs413AndTheClientPushesInParts() throws {
        let f = try ServiceFixture(configure: { $0.maxPushEvents = 6_000 }, http: { $0.maxBodyBytes = 8 << 20 })
        let phone = try founder(f)
        try f.sync(phone)
        for _ in 0..<12 { try phone.append(Self.progress(1_000), now: now) }
        let pull = try f.signed(phone, "pull", body: try phone.syncState().encoded())
        let hubState = try SyncState(decoding: Array(Data(base64Encoded: pull.headers["ledger-state"] ?? "")!))
        // The whole backlog in one push: refused before it is read, nothing written.
        let whole = try f.signed(phone, "push", body: try phone.changeSet(since: hubState).encoded())
        #expect(whole.status == 413, "\(whole.status)")
        #expect(whole.text.contains("the push carries 12001 events; this service takes at most 6000 in one push"), "\(whole.text)")
        #expect(try f.rows() == 1)
        // The client pushes it in parts of at most 5,000 events, cut where a signed run ends.
        let pushesBefore = f.logged.all.filter { $0.contains("/push") && $0.contains("status=200") }.count
        let result = try SyncServiceClient(baseURL: URL(string: f.base)!).syncBlocking(phone)
        #expect(result.pushed.imported == 12_000)
        #expect(f.logged.all.filter { $0.contains("/push") && $0.contains("status=200") }.count == pushesBefore + 3)
        #expect(try f.rows() == 12_001)
        let clone = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        try f.sync(phone)
        try f.sync(clone)
        #expect(try clone.digest() == phone.digest())
    }

    @Test func eventsOfAnOriginWithNoKeyAreSetAsideUnreadAndOneEnrolledInThePushIsStored() throws {
        let f = try ServiceFixture(http: { $0.maxBodyBytes = 8 << 20 })
        let phone = try founder(f)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        try f.sync(phone)
        try f.sync(tablet)
        // A made-up origin with a key of its own, which nobody enrolled: 2,000 events, each
        // signed by that key. An enrolled device pushes them.
        let key = SigningKey(seed: [UInt8](repeating: 3, count: 32))!
        var records: [[UInt8]] = []
        var previous: Event?
        for i in 1...2_000 {
            var e = Event(
                id: UUID(), origin: "mallory", sequence: UInt64(i), hlc: HLC(rawValue: UInt64(i) << 20), at: now, schema: 2,
                payload: .progressRecorded(ProgressRecorded(goal: Self.goal, amount: 1)))
            e.previousHash = previous.map(EventChain.hash) ?? EventChain.genesis
            e.signer = key.publicKey
            e.signature = key.sign(
                EventChain.message(ledger: phone.ledgerID, origin: "mallory", sequence: e.sequence, hash: EventChain.hash(e)))
            records.append(EventCodec.encode(e))
            previous = e
        }
        let before = try f.rows()
        let forged = ExportFile.encode(ledger: phone.ledgerID, records: records)
        let a = try f.signed(tablet, "push", body: forged)
        #expect(a.status == 200, "\(a.text)")
        #expect(a.text.contains(#""inserted":0"#), "\(a.text)")
        #expect(
            a.text.contains(
                #"{"origin":"mallory","sequence":1,"count":2000,"cause":"untrustedSigner","reason":"origin mallory holds no key in this ledger and is not enrolled in this push: its events were not read"}"#
            ), "\(a.text)")
        #expect(try f.rows() == before)
        // A device the tablet enrols, whose events reach the service in the same push as the
        // enrolment: stored.
        let watch = try tablet.clone(to: f.hub.path("watch"), device: "watch", now: now)
        try watch.append(Self.progress(3), now: now)
        _ = try tablet.sync(with: watch)
        try f.sync(tablet)
        let heads = try f.hub.admin().query("SELECT origin, head FROM hub.heads ORDER BY origin")
        var held: [String: Int64] = [:]
        for r in 0..<heads.rowCount { held[heads.string(r, 0)] = heads.int64(r, 1) }
        #expect(held["watch"] == Int64(try watch.originHeads()["watch"]!), "\(held)")
        #expect(held["mallory"] == nil)
        try f.sync(phone)
        #expect(try phone.digest() == watch.digest())
    }

    @Test func unsignedAlteredOrForgedRequestsAreRefusedBeforeTheLedgerIsRead() throws {
        // A database the service cannot reach: whatever asks it answers 503.
        let f = try ServiceFixture(hubURL: "postgresql:///hub?host=/nonexistent-ledger-socket&user=nobody")
        let phone = try founder(f)
        let state = try phone.syncState().encoded()
        let expected = #"{"error":"\#(SyncService.unauthenticated)"}"#
        for _ in 0..<3 {
            let random = UUID().uuidString
            let a = try f.send("POST", "/v1/ledgers/\(random)/pull", headers: [("ledger", random)], body: state)
            #expect(a.status == 401 && a.text == expected, "\(a.status) \(a.text)")
        }
        // The founder's key (the ledger id proves it) with a signature made by another key.
        let other = try LedgerStore.create(at: f.hub.path("other"), device: "phone")
        let otherKey = try other.keys.key(ledger: other.ledgerID, device: "phone")
        let phoneKey = try phone.keys.key(ledger: phone.ledgerID, device: "phone")!
        var a = try f.signed(phone, "pull", body: state, key: otherKey) { headers, _ in
            headers = headers.map { $0.0 == "device-key" ? ($0.0, Hex.string(phoneKey.publicKey)) : $0 }
        }
        #expect(a.status == 401 && a.text == expected, "\(a.status) \(a.text)")
        #expect(f.logged.all.last?.contains("does not verify") == true, "\(f.logged.all.last ?? "")")
        // A body altered after signing.
        a = try f.signed(phone, "pull", body: state) { _, body in body[body.count - 1] ^= 1 }
        #expect(a.status == 401 && a.text == expected, "\(a.status) \(a.text)")
        // A signature missing a parameter.
        a = try f.signed(phone, "pull", body: state) { headers, _ in
            headers = headers.map { $0.0 == "signature-input" ? ($0.0, $0.1.replacingOccurrences(of: ";nonce=", with: ";n=")) : $0 }
        }
        #expect(a.status == 401 && a.text == expected, "\(a.status) \(a.text)")
        // The honest request reaches the database (and finds it unreachable).
        #expect(try f.signed(phone, "pull", body: state).status == 503)
    }
}
