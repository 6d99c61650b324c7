import Foundation
import GoalLedger
import HTTPServer
import HubTestSupport
import LedgerHub
import LedgerService
import RequestSigning
import Sodium
import Synchronization

/// One request to the sync service (`SyncService.handle`, as the HTTP server calls it) in front
/// of a test hub: a throwaway database on the test run's PostgreSQL server (`LEDGER_TEST_PG`, or
/// one started for the process), the hub schema initialized, the service's own role.
///
/// The first byte of the input chooses the request's form:
/// - bit 0 clear: a request signed by the founder of a fixed ledger, as a device sends it
///   (`POST /v1/ledgers/ID/pull` or `push` by bit 1, a fresh nonce, `created` the service's
///   clock), whose body is the rest of the input: the fuzzer's bytes reach the service's reading
///   of sync states and change sets and the checks of a push (bit 2 set: the body as it is,
///   else with a zero ledger id made the fixed ledger's and a change set's checksums made right;
///   bit 3 set: a change set's events chained and signed again by the founder);
/// - bit 0 set: a request made of the rest of the input: a first line `METHOD PATH`, header
///   lines `name: value`, a blank line, the body; `{ledger}` in any of them is the fixed
///   ledger's id.
///
/// The answer must be one the protocol allows: a status the service documents (never a 500,
/// which says the service failed), with a JSON body for every refusal.
enum ServiceRequestTarget {
    struct Setup: @unchecked Sendable {
        let service: SyncService
        let ledger: UUID
        let key: SigningKey
        let failures: LogLines
    }

    /// The log lines of refusals the service could not explain (500s), kept to report them.
    final class LogLines: @unchecked Sendable {
        let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var last: String? { lines.withLock { $0.last } }
    }

    static let setup = Mutex<Setup?>(nil)
    static let nonce = Atomic<UInt64>(0)
    /// The service's clock: fixed, so that an input means the same whenever it runs.
    static let now = Date(timeIntervalSince1970: 1_780_000_000)

    static func prepare() throws {
        try setup.withLock { current in
            if current != nil { return }
            let directory = try TestServer.socketDirectory()
            let url = try TestServer.database(on: directory)
            let hub = try Hub(url: url)
            try hub.initialize()
            let role = "ledger_fuzz_service"
            try hub.grantService(role: role)
            let database = String(url.dropFirst("postgresql:///".count).prefix { $0 != "?" })
            let failures = LogLines()
            var options = SyncService.Options(hubURL: TestServer.url(database, directory: directory, role: role)) { failures.append($0) }
            options.clock = { now }
            options.databaseSessions = 1
            // The clock stands still, so a request rate would soon refuse everything (429).
            options.requestsPerMinute = 1_000_000_000
            let key = SigningKey(seed: [UInt8](repeating: 9, count: 32))!
            current = Setup(
                service: SyncService(options), ledger: EventChain.ledgerID(founder: "phone", publicKey: key.publicKey), key: key,
                failures: failures)
        }
    }

    static func run(_ bytes: UnsafeRawBufferPointer) {
        if setup.withLock({ $0 }) == nil {
            do {
                try prepare()
            } catch {
                fatalError("the service-request target needs a test hub (PostgreSQL; LEDGER_TEST_PG): \(error)")
            }
        }
        let s = setup.withLock { $0 }!
        guard let first = bytes.first else { return }
        let rest = Array(bytes.dropFirst())
        let request: HTTPRequest
        if first & 1 == 0 {
            let fixed = first & 4 == 0 ? body(rest, s) : rest
            request = signed(first & 8 != 0 ? resigned(fixed, s) : fixed, push: first & 2 != 0, s)
        } else {
            guard let r = raw(rest, ledger: s.ledger) else { return }
            request = r
        }
        let response = s.service.handle(request)
        check(response, s)
    }

    /// The body a device would send: a sync state or change set whose ledger id is all zeros
    /// names the fixed ledger, and a change set's record checksums and trailer are made right
    /// (so that the fuzzer reaches the service's checks of a push).
    static func body(_ bytes: [UInt8], _ s: Setup) -> [UInt8] {
        var body = bytes
        if body.count >= 8 + 1 + 16, body[9..<25].allSatisfy({ $0 == 0 }) {
            withUnsafeBytes(of: s.ledger.uuid) { body.replaceSubrange(9..<25, with: $0) }
        }
        if body.starts(with: Array("GOALLEDG".utf8)), body.count >= 8 + 1 + 16 + 8 + 4 + 32 {
            ChangeSetTarget.fixTrailer(&body)
        }
        return body
    }

    /// A change set whose events the founder's key chains and signs again, each origin from its
    /// first event on (so that a push can pass the checks of its chain and signatures and be
    /// written); any other body as it is.
    static func resigned(_ body: [UInt8], _ s: Setup) -> [UInt8] {
        guard let set = try? ChangeSet(decoding: body) else { return body }
        var previous: [String: [UInt8]] = [:]
        var events: [Event] = []
        for var e in set.events {
            e.previousHash = previous[e.origin] ?? EventChain.genesis
            e.signature = nil
            e.signer = nil
            let hash = EventChain.hash(e)
            e.signer = s.key.publicKey
            e.signature = s.key.sign(EventChain.message(ledger: s.ledger, origin: e.origin, sequence: e.sequence, hash: hash))
            previous[e.origin] = hash
            events.append(e)
        }
        return ExportFile.encode(ledger: set.ledger, events: events)
    }

    /// A request the founder signs, as `SyncServiceClient` sends one.
    static func signed(_ body: [UInt8], push: Bool, _ s: Setup) -> HTTPRequest {
        let path = "/v1/ledgers/\(s.ledger.uuidString)/\(push ? "push" : "pull")"
        var headers: [(name: String, value: String)] = [
            ("ledger", s.ledger.uuidString), ("device-key", Hex.string(s.key.publicKey)),
        ]
        let n = nonce.add(1, ordering: .relaxed).newValue
        let added = try! RequestSignature.sign(
            SignedRequestParts(method: "POST", target: path, headers: headers, body: body), components: SyncService.coveredComponents,
            key: s.key, keyID: "phone", created: Int64(now.timeIntervalSince1970), nonce: "fuzz-nonce-\(n)-" + String(repeating: "n", count: 8))
        headers += added
        return HTTPRequest(method: "POST", path: path, headers: headers, body: body)
    }

    /// A request as the input writes it; nil when it has no request line.
    static func raw(_ bytes: [UInt8], ledger: UUID) -> HTTPRequest? {
        var lines: [String] = []
        var index = 0
        var body: [UInt8] = []
        while index <= bytes.count {
            let end = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            let line = String(decoding: bytes[index..<end], as: UTF8.self).replacingOccurrences(of: "{ledger}", with: ledger.uuidString)
            index = end + 1
            if line.isEmpty && !lines.isEmpty {
                if index < bytes.count { body = Array(bytes[index...]) }
                break
            }
            lines.append(line)
        }
        guard let requestLine = lines.first else { return nil }
        let parts = requestLine.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let target = String(parts[1])
        let question = target.firstIndex(of: "?")
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        return HTTPRequest(
            method: String(parts[0]), path: question.map { String(target[..<$0]) } ?? target,
            query: question.map { String(target[target.index(after: $0)...]) }, headers: headers, body: body)
    }

    static let documented: Set<Int> = [200, 400, 401, 403, 404, 405, 413, 429]

    static func check(_ response: HTTPResponse, _ s: Setup) {
        guard documented.contains(response.status) else {
            violated("the service answered \(response.status): \(String(decoding: response.body, as: UTF8.self)); log: \(s.failures.last ?? "-")")
        }
        if response.status != 200 {
            guard case .object(let members)? = try? JSONParser.parse(bytes: response.body), members.contains(where: { $0.0 == "error" })
            else { violated("a refusal without a JSON error: \(String(decoding: response.body, as: UTF8.self))") }
        }
    }
}
