import Dispatch
import Foundation
import GoalLedger
import HTTPServer
import LedgerHub
import PostgreSQL
import RequestSigning
import Sodium
import Synchronization

/// The sync service (`ledger serve`): devices pull and push change sets over HTTP, each request
/// signed with the device's own key, which the ledger's signed history (as the hub holds it)
/// enrols or revokes. One database role serves every ledger: each request's transaction is
/// scoped to its ledger by row-level security. The protocol is `docs/sync-service.md`.
///
/// The service is stateless between requests: every request opens its own connection, reads
/// what it needs of its ledger, and commits or rolls back before it answers.
public final class SyncService: Sendable {
    /// How the service runs.
    public struct Options: Sendable {
        /// The hub's URL, as the service's database role (a member of
        /// ``HubSchema/serviceRole``).
        public var hubURL: String
        /// How long ago, in seconds by the service's clock, a request's `created` may be.
        public var window: Int64 = 300
        /// How far ahead of the service's clock, in seconds, a request's `created` may be (a
        /// device whose clock is fast); further ahead is refused.
        public var lead: Int64 = 60
        /// How long, in seconds, a nonce is kept once seen: as long as a request carrying it
        /// could be accepted, `created` as far ahead as `lead` then as old as `window`, and a
        /// second more; then it is deleted, whatever its ledger.
        public var nonceLifetime: Int64 { window + lead + 1 }
        /// The clock the window is read against.
        public var clock: @Sendable () -> Date = { Date() }
        /// Where the one line per request goes (ledger, device, status, duration); nil: nowhere.
        public var log: (@Sendable (String) -> Void)?
        /// The most events one push may carry (its bytes are bounded by the HTTP server's body
        /// limit); a larger push is refused (413) before anything of it is read. Clients push
        /// in parts (`SyncServiceClient.pushPartEvents` events at most).
        public var maxPushEvents = 10_000
        /// The most events one pull answers with, and the most record bytes: a pull of more is
        /// answered in pages (`ledger-more: true`), each ending where one of its origins' signed
        /// runs ends, so that the service holds one page of a ledger in memory, whatever its
        /// size. A page holds at least one whole run (appends sign at least every
        /// 4,096 events).
        public var maxPullEvents = 10_000
        public var maxPullBytes = 8 << 20
        /// Who may found a ledger on this service: nil, anyone (the founder's key proves itself);
        /// otherwise only a founder whose public key is in the set. A request for a ledger the
        /// hub holds nothing of, by any other founder, is refused (403) before anything is read
        /// or written of it.
        public var founderKeys: Set<[UInt8]>?
        /// The most events and record bytes one ledger may hold: a push past either is refused
        /// (413), nothing of it written.
        public var maxLedgerEvents = 1_000_000
        public var maxLedgerBytes = 1 << 30
        /// Requests one device key may make per minute (a burst of as many, refilled evenly);
        /// past it, 429 with `Retry-After`.
        public var requestsPerMinute = 1_200
        /// How many requests hold a database session at once; others wait their turn (the
        /// database's own connection limit stays out of reach).
        public var databaseSessions = 32
        /// For a test of isolation only: the ledger the queries name, instead of the request's
        /// (row-level security must still return nothing of another ledger).
        package var queryLedgerOverride: UUID?

        /// A service in front of the hub at `hubURL`.
        public init(hubURL: String, log: (@Sendable (String) -> Void)? = nil) {
            self.hubURL = hubURL
            self.log = log
        }
    }

    let options: Options
    /// Turns for database sessions (`Options.databaseSessions`).
    let sessions: DispatchSemaphore
    /// Idle connections, kept between requests (never a request's state: each request begins
    /// and ends its own transaction).
    let pool = ConnectionPool()
    /// Each ledger's trust events as last read, so that a request reads only the rows since.
    let trustCache = TrustCache()
    /// Rows of `hub.events` read to fold trust, since the service started (for tests: a cold
    /// cache reads the indexed trust rows and the rows since, not the whole ledger).
    package let trustRowsRead = Atomic<Int>(0)

    /// When old nonces were last deleted.
    let nonceSweep = Sweep(every: 60_000)
    /// Each device key's requests of the last minute (`Options.requestsPerMinute`).
    let limiter: RateLimiter

    /// A service with `options`; nothing connects until a request comes.
    public init(_ options: Options) {
        self.options = options
        sessions = DispatchSemaphore(value: max(1, options.databaseSessions))
        limiter = RateLimiter(perMinute: options.requestsPerMinute)
    }

    /// The components every request signature covers.
    public static let coveredComponents = ["@method", "@path", "content-digest", "ledger"]

    /// Answers one request; never throws: every failure is a status with a JSON reason.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let started = Date()
        var context = Context()
        let response = answer(request, &context)
        let ms = Int(Date().timeIntervalSince(started) * 1000)
        if let log = options.log {
            var line = "\(Self.escaped(request.method)) \(Self.escaped(request.path)) ledger=\(context.ledger)"
            line += " device=\(Self.escaped(context.device)) status=\(response.status) \(ms)ms"
            if let detail = context.detail { line += " reason=\"\(Self.escaped(detail, spaces: true))\"" }
            log(line)
        }
        return response
    }

    /// What the log line of a request says beside its method, path and status.
    struct Context {
        var ledger = "-"
        /// The device the request names (its signature's `keyid`, not trusted until verified).
        var device = "-"
        /// Why it was refused, when the answer does not say it (an authentication failure,
        /// a database error).
        var detail: String?
    }

    /// A refusal: a status and what is wrong; `detail`, for the log only, what the answer
    /// does not tell.
    struct Refusal: Error {
        var status: Int
        var message: String
        var detail: String?
        /// Seconds to wait before asking again (`Retry-After`), for a 429.
        var retryAfter: Int?
    }

    /// The one answer to every authentication failure (unknown, revoked or wrong key, altered
    /// body, stale or replayed request, …): what was wrong goes to the log only, so the answer
    /// tells an anonymous client nothing of which devices a ledger holds.
    public static let unauthenticated =
        "the request is not signed by a device key this ledger accepts now, or is stale or replayed; nothing was done"

    static func unauthenticated(_ detail: String) -> Refusal { Refusal(status: 401, message: unauthenticated, detail: detail) }

    /// `text` as a log line shows it: control characters, backslashes and double quotes
    /// escaped (`\u{1B}`, `\\`, `\"`), and spaces (`\u{20}`) unless `spaces` (a quoted
    /// field), so that no request can write a line, a field or a terminal sequence of its own.
    public static func escaped(_ text: String, spaces: Bool = false) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case " " where !spaces: out += "\\u{20}"
            default:
                if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format
                    || scalar.properties.generalCategory == .lineSeparator || scalar.properties.generalCategory == .paragraphSeparator
                {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    static func refusal(_ status: Int, _ message: String) -> HTTPResponse {
        json(.object([("error", .string(message))]), status: status)
    }

    /// A JSON answer, written by the ledger's own JSON writer.
    static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        let text = (try? JSONWriter.string(value)) ?? #"{"error":"the service could not write its answer"}"#
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
    }

    func answer(_ request: HTTPRequest, _ context: inout Context) -> HTTPResponse {
        if request.path == "/v1/ready" {
            guard request.method == "GET" else { return Self.refusal(405, "use GET") }
            do {
                let hub = try Hub(url: options.hubURL)
                _ = try hub.currentRole()
                return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Array("ready\n".utf8))
            } catch {
                return Self.refusal(503, "the service cannot reach its database")
            }
        }
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "v1", parts[2] == "ledgers", let ledger = UUID(uuidString: String(parts[3])),
            parts[4] == "pull" || parts[4] == "push"
        else { return Self.refusal(404, "no such endpoint") }
        context.ledger = ledger.uuidString
        guard request.method == "POST" else { return Self.refusal(405, "use POST") }
        guard let header = request.header("ledger"), UUID(uuidString: header) == ledger else {
            return Self.refusal(400, "the ledger header must name the ledger of the path, \(ledger.uuidString)")
        }
        if parts[4] == "push", let count = Self.eventCount(request.body), count > UInt64(max(0, options.maxPushEvents)) {
            return Self.refusal(413, "the push carries \(count) events; this service takes at most \(options.maxPushEvents) in one push")
        }
        // The signature against what is known without reading the ledger (the founder's key,
        // proved by the ledger id, and the trust last read of it): a request that is not signed,
        // whose signature is malformed, or that the founder's key refuses, is refused before
        // the database is asked anything. What the cached trust does not settle (a key enrolled
        // or rotated since) is checked again against the ledger as read.
        if let refusal = precheck(request, ledger: ledger) {
            if let name = Self.keyID(request) { context.device = name }
            context.detail = refusal.detail
            return Self.refusal(refusal.status, refusal.message)
        }
        sessions.wait()
        defer { sessions.signal() }
        // One transaction per request, with bounded lock waits and statements.
        guard let hub = beginSession(&context) else {
            return Self.refusal(503, "the service cannot reach its database; nothing was written")
        }
        var reusable = true
        defer { if reusable { pool.give(hub) } }
        var device = "-"
        defer { context.device = device }
        do {
            let response = try serve(request, ledger: ledger, push: parts[4] == "push", hub: hub, device: &device)
            _ = try hub.connection.execute("COMMIT")
            return response
        } catch let r as Refusal {
            _ = try? hub.connection.execute("ROLLBACK")
            context.detail = r.detail
            var response = Self.refusal(r.status, r.message)
            if let wait = r.retryAfter { response.headers.append(("Retry-After", String(wait))) }
            return response
        } catch let e as PostgreSQLError {
            _ = try? hub.connection.execute("ROLLBACK")
            if e.isConnectionFailure {
                reusable = false
                return Self.refusal(503, "the service lost its database; nothing was written")
            }
            context.detail = "the database refused the request: \(e.message)"
            return Self.refusal(500, "the service could not complete the request; nothing was written")
        } catch let e as LedgerError {
            _ = try? hub.connection.execute("ROLLBACK")
            if e.code == .store { reusable = false }
            context.detail = e.message
            if e.code == .store { return Self.refusal(503, "the service lost its database; nothing was written") }
            return Self.refusal(500, "the service could not complete the request; nothing was written")
        } catch {
            _ = try? hub.connection.execute("ROLLBACK")
            context.detail = "the service failed: \(error)"
            return Self.refusal(500, "the service could not complete the request; nothing was written")
        }
    }

    /// A connection with its transaction begun, pooled if one is: a pooled one that fails to
    /// begin is taken for a sign that the database restarted, so the idle ones go and the
    /// transaction begins on a new connection. Nil when the database cannot be reached.
    func beginSession(_ context: inout Context) -> Hub? {
        while true {
            let taken: (hub: Hub, pooled: Bool)
            do {
                taken = try pool.take(options.hubURL)
            } catch {
                context.detail = error.message
                return nil
            }
            do {
                try taken.hub.begin()
                return taken.hub
            } catch {
                if taken.pooled {
                    pool.drain()
                    continue
                }
                context.detail = error.message
                return nil
            }
        }
    }

    /// One authenticated request, inside its ledger's transaction.
    func serve(_ request: HTTPRequest, ledger: UUID, push: Bool, hub: Hub, device: inout String) throws -> HTTPResponse {
        let connection = hub.connection
        // Every row this transaction reads or writes is the request's ledger's.
        _ = try connection.query("SELECT set_config('hub.request_ledger', $1, true)", [.text(ledger.uuidString)])
        let queried = options.queryLedgerOverride ?? ledger
        func decode(_ rows: QueryResult, _ column: Int) throws -> [(Event, [UInt8])] {
            var out: [(Event, [UInt8])] = []
            out.reserveCapacity(rows.rowCount)
            for r in 0..<rows.rowCount {
                let record = rows.bytes(r, column)
                guard let e = try? record.withUnsafeBytes({ b in try EventCodec.decode(b) }) else {
                    throw Refusal(status: 500, message: "the hub holds a damaged record of this ledger")
                }
                out.append((e, record))
            }
            return out
        }
        // Each origin's last event, as the hub holds it (looked up as `Hub.headQuery` says), and
        // the ledger's trust.
        var pendingIndex = TrustIndex.Update()
        // `index`: whether what is read (now and by an earlier read) goes to the service's trust index (not on a push's
        // first read, before it holds the ledger's lock: index rows it locked there could
        // deadlock with the push that holds the lock).
        func readLedger(index: Bool = true) throws -> (
            heads: [String: (sequence: UInt64, event: Event)], fold: TrustFold, inputs: [TrustFold.Input], trust: TrustState
        ) {
            var heads: [String: (sequence: UInt64, event: Event)] = [:]
            let origins = try connection.query("SELECT origin, head FROM hub.heads WHERE ledger = $1", [.uuid(queried)])
            for o in 0..<origins.rowCount {
                let head = origins.int64(o, 1)
                let origin = origins.string(o, 0)
                let row = try connection.query(Hub.headQuery, [.uuid(queried), .text(origin), .int64(head)])
                guard row.rowCount == 1, row.int64(0, 0) == head else { continue }
                // A head the service cannot read, or that is not what its columns say, sets its
                // origin aside (its pushes wait) and never fails the ledger's other origins.
                let record = row.bytes(0, 3)
                guard let e = try? record.withUnsafeBytes({ b in try EventCodec.decode(b) }), e.origin == origin,
                    head >= 0, e.sequence == UInt64(head)
                else {
                    unreadable.insert(origin)
                    continue
                }
                heads[e.origin] = (e.sequence, e)
            }
            // Trust, folded from the ledger's trust events: those read before are kept (keyed by
            // the heads they were read up to), in memory and, for a signed ledger, in the hub's
            // service tables (`TrustIndex`), so that a cold cache reads the trust rows the
            // service vouched for before and only the rows since.
            let signedLedger = ledger.uuid.6 >> 4 == 8
            var known: TrustCache.Entry
            if let cached = trustCache.get(queried, heads: heads.mapValues(\.sequence)) {
                known = cached
            } else if signedLedger {
                known = try TrustIndex.load(queried, ledger: ledger, connection)
            } else {
                known = TrustCache.Entry()
            }
            for (origin, head) in heads where head.sequence > (known.heads[origin] ?? 0) {
                let rows = try connection.query(
                    "SELECT record FROM hub.events WHERE ledger = $1 AND origin = $2 AND sequence > $3 ORDER BY sequence",
                    [.uuid(queried), .text(origin), .int64(try Self.bigint(known.heads[origin] ?? 0, "the hub's head of \(origin)"))])
                trustRowsRead.add(rows.rowCount, ordering: .relaxed)
                // Up to the first row that cannot be read: the rest of the origin is set aside.
                var events: [Event] = []
                var records: [[UInt8]] = []
                events.reserveCapacity(rows.rowCount)
                var unreadableRow = false
                for r in 0..<rows.rowCount {
                    let record = rows.bytes(r, 0)
                    guard let e = try? record.withUnsafeBytes({ b in try EventCodec.decode(b) }), e.origin == origin else {
                        unreadableRow = true
                        break
                    }
                    events.append(e)
                    records.append(record)
                }
                let hadFounder = known.founder != nil
                let kept = known.add(events, origin: origin, ledger: ledger)
                if unreadableRow { known.setAside.insert(origin) }
                known.heads[origin] = head.sequence
                if signedLedger {
                    pendingIndex.add(
                        origin: origin, head: head.sequence, events: events, records: records, kept: kept, entry: known,
                        provesFounder: !hadFounder && known.founder != nil)
                }
            }
            if signedLedger, index, !pendingIndex.isEmpty {
                TrustIndex.save(pendingIndex, ledger: queried, connection)
                pendingIndex = TrustIndex.Update()
            }
            trustCache.put(queried, known)
            let fold = known.fold()
            let inputs = known.inputs
            let trust = fold.founder == nil && ledger.uuid.6 >> 4 == 8 ? TrustState() : fold.fold(inputs)
            return (heads, fold, inputs, trust)
        }
        var unreadable = Set<String>()
        var (heads, fold, inputs, trust) = try readLedger(index: !push)

        // Who is asking: the signature, by a key the ledger's trust gives the device now.
        let signed = SignedRequestParts(
            method: request.method, target: request.path + (request.query.map { "?" + $0 } ?? ""), headers: request.headers,
            body: request.body)
        let founderKey = request.header("device-key").flatMap(Hex.bytes)
        var signature = Self.verify(signed, ledger: ledger, trust: trust, founderKey: founderKey)
        if case .failure(let error) = signature, error.reason == .unknownKey || error.reason == .badSignature,
            let rotated = Self.rotatedKey(request, ledger: ledger, trust: trust, heads: heads.mapValues(\.sequence))
        {
            // A device that rotated its key since the hub last heard of it proves the rotation.
            signature = Self.verify(signed, ledger: ledger, device: rotated.device, key: rotated.key)
        }
        let verified: RequestSignature.Verified
        switch signature {
        case .success(let v):
            verified = v
        case .failure(let error):
            if let name = Self.keyID(request) { device = name }
            if error.reason == .unknownKey, let name = Self.keyID(request) {
                if trust.devices[name]?.revokedAfter != nil { throw Self.unauthenticated("device \(name) was revoked") }
                throw Self.unauthenticated(trust.devices[name] == nil ? "device \(name) is not enrolled" : "not the key of device \(name)")
            }
            throw Self.unauthenticated("the signature was refused: \(error.message)")
        }
        device = verified.keyID
        // A ledger the hub holds nothing of is being founded: only by a founder the operator allows.
        if heads.isEmpty, unreadable.isEmpty, let allowed = options.founderKeys,
            !allowed.contains(where: { EventChain.ledgerID(founder: verified.keyID, publicKey: $0) == ledger })
        {
            throw Refusal(
                status: 403, message: "this service keeps ledgers of the founders its operator allows only; nothing was done",
                detail: "founding refused: \(verified.keyID)'s key is not in the founders' list")
        }
        if let wait = limiter.take(ledger: ledger, device: verified.keyID, now: options.clock().timeIntervalSince1970) {
            throw Refusal(
                status: 429, message: "too many requests of device \(verified.keyID); try again in \(wait) s; nothing was done",
                detail: "over \(options.requestsPerMinute) requests a minute", retryAfter: wait)
        }
        // Compared to the millisecond (no rounding lets a request a second more), then the nonce:
        // kept as long as a request could be accepted again (`nonceLifetime`).
        let clock = options.clock().timeIntervalSince1970
        let now = (clock * 1000).rounded(.down)
        let created = Double(verified.created) * 1000
        guard created >= now - Double(options.window) * 1000 else {
            throw Self.unauthenticated("signed at \(verified.created), more than \(options.window) s before the service's clock (\(clock))")
        }
        guard created <= now + Double(options.lead) * 1000 else {
            throw Self.unauthenticated("signed at \(verified.created), more than \(options.lead) s after the service's clock (\(clock))")
        }
        if let expires = verified.expires {
            guard Double(expires) * 1000 > now else {
                throw Self.unauthenticated("expired at \(expires), by the service's clock \(clock)")
            }
        }
        guard (16...64).contains(verified.nonce.count) else { throw Self.unauthenticated("the nonce is not 16 to 64 characters") }
        let forgetBefore = Int64(now) - options.nonceLifetime * 1000
        if nonceSweep.due(at: now) {
            // Every ledger's old nonces, at most once a minute (the schema's function: the
            // request's transaction sees its own ledger's rows only).
            _ = try connection.query("SELECT hub.forget_nonces(to_timestamp($1::int8 / 1000.0))", [.int64(forgetBefore)])
        }
        _ = try connection.query(
            "DELETE FROM hub.nonces WHERE ledger = $1 AND seen < to_timestamp($2::int8 / 1000.0)", [.uuid(ledger), .int64(forgetBefore)])
        let fresh = try connection.query(
            "INSERT INTO hub.nonces (ledger, nonce, seen) VALUES ($1, $2, to_timestamp($3::int8 / 1000.0)) ON CONFLICT DO NOTHING",
            [.uuid(ledger), .text(verified.nonce), .int64(Int64(now))]
        ).affectedRows
        guard fresh == 1 else { throw Self.unauthenticated("replayed (its nonce was seen before)") }
        if push {
            // One push of a ledger at a time (with the hub's own syncs of it): a push that waited
            // reads what the one before it wrote, and finds its events already there.
            try hub.lock(ledger: ledger)
            (heads, fold, inputs, trust) = try readLedger()
        }

        let state = SyncState(
            ledger: ledger, heads: heads.mapValues { SyncState.Head(sequence: $0.sequence, hash: EventChain.hash($0.event)) })

        if !push {
            let theirs: SyncState
            do {
                theirs = try SyncState(decoding: request.body)
            } catch {
                throw Refusal(status: 400, message: error.message)
            }
            guard theirs.ledger == ledger else { throw Refusal(status: 400, message: "the sync state is of another ledger") }
            // In a signed ledger, only origins that hold a key: rows of made-up origins (a hub
            // role can write any) are nobody's events, and are not sent again and again.
            var sent = heads.mapValues(\.sequence)
            if ledger.uuid.6 >> 4 == 8, let founder = fold.founder?.name {
                sent = sent.filter { trust.devices[$0.key] != nil || $0.key == founder }
            }
            let (out, more) = try page(theirs, heads: sent, ledger: queried, connection)
            // The records go out as stored: the device decodes and checks each (the service
            // checked them when they were pushed).
            var headers = [
                ("Content-Type", "application/x-goal-ledger-changes"),
                ("ledger-state", Data(state.encoded()).base64EncodedString()),
            ]
            if more { headers.append(("ledger-more", "true")) }
            return HTTPResponse(status: 200, headers: headers, body: ExportFile.encode(ledger: ledger, records: out))
        }

        let pushed: ChangeSet
        do {
            pushed = try ChangeSet(decoding: request.body, source: "the pushed change set")
        } catch {
            throw Refusal(status: 400, message: error.message)
        }
        guard pushed.ledger == ledger else { throw Refusal(status: 400, message: "the change set is of another ledger") }
        // Before any signature is checked: in a signed ledger, the events of an origin that holds
        // no key here, is not the founder and is not enrolled in this push (by an origin that may
        // write) are set aside unread, so that made-up origins cost no signature check.
        var strangers: [String: WaitingEvents] = [:]
        let changes: ChangeSet
        if ledger.uuid.6 >> 4 == 8 {
            var allowed = Set(trust.devices.keys)
            if let founder = fold.founder?.name { allowed.insert(founder) } else { allowed.insert(verified.keyID) }
            var grew = true
            while grew {
                grew = false
                for e in pushed.events where allowed.contains(e.origin) {
                    if case .deviceEnrolled(let p) = e.payload, allowed.insert(p.device).inserted { grew = true }
                }
            }
            var kept: [Int] = []
            kept.reserveCapacity(pushed.count)
            for (i, e) in pushed.events.enumerated() {
                if unreadable.contains(e.origin) {
                    if let w = strangers[e.origin] {
                        strangers[e.origin]?.count = w.count + 1
                        strangers[e.origin]?.sequence = min(w.sequence, e.sequence)
                    } else {
                        strangers[e.origin] = WaitingEvents(
                            origin: e.origin, sequence: e.sequence, count: 1, cause: .other,
                            reason: "the hub's last record of origin \(e.origin) cannot be read: its events wait until the hub's operator repairs it")
                    }
                } else if allowed.contains(e.origin) {
                    kept.append(i)
                } else if let w = strangers[e.origin] {
                    strangers[e.origin]?.count = w.count + 1
                    strangers[e.origin]?.sequence = min(w.sequence, e.sequence)
                } else {
                    strangers[e.origin] = WaitingEvents(
                        origin: e.origin, sequence: e.sequence, count: 1, cause: .untrustedSigner,
                        reason: "origin \(e.origin) holds no key in this ledger and is not enrolled in this push: its events were not read")
                }
            }
            changes =
                kept.count == pushed.count
                ? pushed : ChangeSet(ledger: ledger, events: kept.map { pushed.events[$0] }, records: kept.map { pushed.records[$0] })
        } else {
            changes = pushed
        }
        // The checks of a store's import, against what the hub holds.
        let offer = Offer(changes.events, records: changes.records)
        var history = HeldHistory(heads: heads.mapValues(\.sequence))
        history.trustInputs = inputs
        history.firstChained = fold.firstChained
        history.founder = fold.founder
        // What the checks read of the hub: the ids offered that it holds, and its events at the
        // sequences offered up to its heads (the overlap a fork shows in).
        let offeredIDs = changes.events.map(\.id)
        let taken = try connection.query(
            "SELECT event_id FROM hub.events WHERE ledger = $1 AND event_id = ANY($2::uuid[])", [.uuid(queried), .uuidArray(offeredIDs)])
        var ids = Set<UUID>()
        for r in 0..<taken.rowCount { if let id = taken.uuid(r, 0) { ids.insert(id) } }
        var held: [String: [UInt64: Event]] = [:]
        for (origin, head) in heads {
            held[origin, default: [:]][head.sequence] = head.event
            let lowest = offer.byOrigin[origin]?.map { changes.events[$0].sequence }.min() ?? head.sequence
            if lowest < head.sequence {
                for (e, _) in try decode(
                    try connection.query(
                        "SELECT record FROM hub.events WHERE ledger = $1 AND origin = $2 AND sequence >= $3 AND sequence < $4 ORDER BY sequence",
                        [
                            .uuid(queried), .text(origin), .int64(try Self.bigint(lowest, "sequence of \(origin) offered")),
                            .int64(try Self.bigint(head.sequence, "the hub's head of \(origin)")),
                        ]), 0)
                {
                    held[origin, default: [:]][e.sequence] = e
                }
            }
        }
        let outcome = try OfferedEvents.check(
            offer, history: history, ledger: ledger, signed: ledger.uuid.6 >> 4 == 8, waiting: [:],
            event: { origin, sequence in held[origin]?[sequence] }, idExists: { ids.contains($0) })
        let accepted = outcome.accepted(changes.events).map { (event: changes.events[$0], record: changes.records[$0]) }
        if !accepted.isEmpty {
            // The ledger's quota: what it holds (the heads count its events, each origin's
            // sequences having no gap) and what this push adds.
            let held = try connection.query(
                "SELECT coalesce(sum(head), 0)::int8, coalesce(sum(bytes), 0)::int8 FROM hub.heads WHERE ledger = $1", [.uuid(queried)])
            let (events, bytes) = held.rowCount == 1 ? (held.int64(0, 0), held.int64(0, 1)) : (0, 0)
            let adding = accepted.reduce(0) { $0 + $1.record.count }
            if events > Int64(options.maxLedgerEvents) - Int64(accepted.count) {
                throw Refusal(
                    status: 413,
                    message:
                        "the ledger holds \(events) events and this push adds \(accepted.count); this service keeps at most \(options.maxLedgerEvents) per ledger; nothing was written")
            }
            if bytes > Int64(options.maxLedgerBytes) - Int64(adding) {
                throw Refusal(
                    status: 413,
                    message:
                        "the ledger holds \(bytes) bytes of records and this push adds \(adding); this service keeps at most \(options.maxLedgerBytes) per ledger; nothing was written")
            }
            _ = try connection.query(
                """
                INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record)
                SELECT $1, * FROM unnest($2::text[], $3::int8[], $4::uuid[], $5::int8[], $6::bytea[])
                """,
                [
                    .uuid(ledger), .textArray(accepted.map(\.event.origin)),
                    .int64Array(try accepted.map { try Self.bigint($0.event.sequence, "sequence of \($0.event.origin)") }),
                    .uuidArray(accepted.map(\.event.id)), .int64Array(accepted.map { Int64(bitPattern: $0.event.hlc.rawValue) }),
                    .byteaArray(accepted.map(\.record)),
                ])
        }
        let waiting: [JSONValue] = (Array(outcome.waiting.values) + strangers.values).sorted { String.bytesPrecede($0.origin, $1.origin) }
            .map { w in
                .object([
                    ("origin", .string(w.origin)), ("sequence", .number(Double(w.sequence))), ("count", .number(Double(w.count))),
                    ("cause", .string(w.cause.rawValue)), ("reason", .string(w.reason)),
                ])
            }
        return Self.json(.object([("inserted", .number(Double(accepted.count))), ("waiting", .array(waiting))]))
    }

    /// One page of what a device in state `theirs` lacks: each origin's rows from the device's
    /// last one (the overlap a fork shows in) in origin order, up to `maxPullEvents` rows and
    /// `maxPullBytes` bytes, cut only after a row that ends a signed run (or the origin's
    /// last), so the device can verify every row it gets; whether more follows.
    func page(_ theirs: SyncState, heads: [String: UInt64], ledger: UUID, _ connection: Connection) throws -> ([[UInt8]], Bool) {
        var out: [[UInt8]] = []
        var bytes = 0
        var full: Bool { out.count >= options.maxPullEvents || bytes >= options.maxPullBytes }
        let chunk = 512
        for origin in heads.keys.sorted(by: String.bytesPrecede) {
            let head = heads[origin] ?? 0
            var next = max(theirs.heads[origin]?.sequence ?? 0, 1)
            guard next <= head else { continue }
            if full { return (out, true) }
            // Rows in chunks; once the page is full, only as far as the current run's end.
            while next <= head {
                let rows = try connection.query(
                    "SELECT record FROM hub.events WHERE ledger = $1 AND origin = $2 AND sequence >= $3 ORDER BY sequence LIMIT $4",
                    [
                        .uuid(ledger), .text(origin), .int64(try Self.bigint(next, "the sequence of \(origin) in the sync state")),
                        .int64(Int64(chunk)),
                    ])
                guard rows.rowCount > 0 else { break }
                for r in 0..<rows.rowCount {
                    let record = rows.bytes(r, 0)
                    out.append(record)
                    bytes += record.count
                    next += 1
                    guard full, next <= head else { continue }
                    // A record that does not decode goes out as it is (the device sets it aside).
                    let e = try? record.withUnsafeBytes { b in try EventCodec.decode(b) }
                    if e.map({ $0.signature != nil || $0.previousHash == nil }) ?? true { return (out, true) }
                }
                if rows.rowCount < chunk { break }
            }
        }
        return (out, false)
    }

    /// The event count a change set's header states (the body is not read further), or nil when
    /// the body does not start like a change set (its decoding says what is wrong).
    static func eventCount(_ body: [UInt8]) -> UInt64? {
        let magic = Array("GOALLEDG".utf8)
        guard body.count >= magic.count + 1 + 16 + 8, body.starts(with: magic) else { return nil }
        return body[(magic.count + 17)..<(magic.count + 25)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// `value`, a sequence read from a request or the hub, as a database `bigint`; past what a
    /// ledger holds (which the codecs already refuse), a 400 naming `what` instead of a trap.
    static func bigint(_ value: UInt64, _ what: @autoclosure () -> String) throws -> Int64 {
        guard let v = Int64(exactly: value) else {
            throw Refusal(status: 400, message: "\(what()), \(value), is past the largest sequence a ledger holds (\(Int64.max))")
        }
        return v
    }

    /// The refusal of a request whose signature fails whatever the ledger holds now; nil when
    /// only the ledger, as read, can tell.
    func precheck(_ request: HTTPRequest, ledger: UUID) -> Refusal? {
        let signed = SignedRequestParts(
            method: request.method, target: request.path + (request.query.map { "?" + $0 } ?? ""), headers: request.headers,
            body: request.body)
        let founderKey = request.header("device-key").flatMap(Hex.bytes)
        let trust = trustCache.latest(ledger).map { entry -> TrustState in
            let fold = entry.fold()
            return fold.founder == nil && ledger.uuid.6 >> 4 == 8 ? TrustState() : fold.fold(entry.inputs)
        }
        switch Self.verify(signed, ledger: ledger, trust: trust ?? TrustState(), founderKey: founderKey) {
        case .success:
            return nil
        case .failure(let error):
            switch error.reason {
            case .unknownKey:
                return nil
            case .badSignature:
                // Only the founder's key is certain without reading: a device's may have rotated.
                let founder = Self.keyID(request).flatMap { name in
                    founderKey.map { $0.count == 32 && EventChain.ledgerID(founder: name, publicKey: $0) == ledger }
                }
                return founder == true ? Self.unauthenticated("the signature was refused: \(error.message)") : nil
            default:
                return Self.unauthenticated("the signature was refused: \(error.message)")
            }
        }
    }

    /// The signature's check, by a key the ledger's trust gives the device now, or the
    /// founder's first key (proved by the ledger id) while the trust gives the founder no other.
    static func verify(
        _ signed: SignedRequestParts, ledger: UUID, trust: TrustState, founderKey: [UInt8]?
    ) -> Result<RequestSignature.Verified, RequestSignatureError> {
        let lookup: (String) throws -> [UInt8]? = { keyID in
            let known = trust.devices[keyID]
            if let k = founderKey, k.count == 32, EventChain.ledgerID(founder: keyID, publicKey: k) == ledger,
                known == nil || (known?.revokedAfter == nil && known?.keys.last?.key == k)
            {
                return k
            }
            guard let d = known, d.revokedAfter == nil else { return nil }
            return d.keys.last?.key
        }
        do {
            return .success(try RequestSignature.verify(signed, required: coveredComponents, publicKey: lookup))
        } catch {
            return .failure(error)
        }
    }

    /// The signature's check by `key`, for `device` only.
    static func verify(_ signed: SignedRequestParts, ledger: UUID, device: String, key: [UInt8]) -> Result<
        RequestSignature.Verified, RequestSignatureError
    > {
        do {
            return .success(
                try RequestSignature.verify(signed, required: coveredComponents, publicKey: { $0 == device ? key : nil }))
        } catch {
            return .failure(error)
        }
    }

    /// The request's header that carries the device's latest key rotations: the standard base64
    /// of each rotation's record, separated by commas, oldest first (``KeyRotationProof``).
    public static let rotationHeader = "ledger-rotation"

    /// The key the rotations a request carries enrol for the device its signature names, when
    /// they continue the key the ledger's trust gives it now (or the founder's, proved by the
    /// ledger id, while the hub holds no key of it); nil otherwise. Nothing is stored.
    static func rotatedKey(_ request: HTTPRequest, ledger: UUID, trust: TrustState, heads: [String: UInt64]) -> (
        device: String, key: [UInt8]
    )? {
        guard let text = request.header(rotationHeader), text.utf8.count <= 16 << 10, let device = keyID(request) else { return nil }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count <= KeyRotationProof.limit else { return nil }
        var records: [[UInt8]] = []
        for part in parts {
            guard let data = Data(base64Encoded: part.trimmingCharacters(in: .whitespaces)) else { return nil }
            records.append(Array(data))
        }
        let known = trust.devices[device]
        if let known, known.revokedAfter != nil { return nil }
        let current = known?.keys.last?.key
        guard
            let key = KeyRotationProof.key(
                of: device, ledger: ledger, records: records, current: current, held: heads[device] ?? 0)
        else { return nil }
        return (device, key)
    }

    /// The keyid a request's signature names, for messages (not trusted).
    static func keyID(_ request: HTTPRequest) -> String? {
        guard let input = request.header("signature-input"), let r = input.range(of: "keyid=\"") else { return nil }
        let rest = input[r.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        let name = String(rest[..<end])
        return name.count <= 64 ? name : nil
    }
}

/// The service's own index of a signed ledger's trust, in the hub (`hub.service_trust`,
/// `hub.service_scanned`, which only the service's role reads and writes): the trust rows it
/// vouched for (with, once, the row that proved the founder's key), and per origin how far it
/// read, whether it set the origin aside, and the last row read (for the chain of the rows
/// after it). A service that starts, or whose cache lost the ledger, reads these and the rows
/// since, not the whole ledger. Derived data only: deleting both tables costs one full read.
enum TrustIndex {
    /// What one request adds to the index.
    struct Update {
        var trust: [(origin: String, sequence: UInt64, record: [UInt8])] = []
        var scanned: [(origin: String, head: UInt64, setAside: Bool, last: [UInt8]?)] = []
        var isEmpty: Bool { trust.isEmpty && scanned.isEmpty }

        /// `events` (with their `records`) were read of `origin` up to `head`, of which the
        /// first `kept` were folded.
        /// `events` (with their `records`) were read of `origin` up to `head`, of which the
        /// first `kept` were folded; `provesFounder`: they showed the founder's key first.
        mutating func add(
            origin: String, head: UInt64, events: [Event], records: [[UInt8]], kept: Int, entry: TrustCache.Entry, provesFounder: Bool
        ) {
            var founderProved = !provesFounder
            for i in 0..<min(kept, events.count) {
                let e = events[i]
                var keep = false
                switch e.payload {
                case .deviceEnrolled, .deviceRevoked: keep = true
                default: break
                }
                // The row that proves the founder: its first signed event.
                if !founderProved, let f = entry.founder, f.name == origin, e.signer == f.key, e.signature != nil {
                    keep = true
                    founderProved = true
                }
                if keep { trust.append((origin, e.sequence, records[i])) }
            }
            scanned.append((origin, head, entry.setAside.contains(origin), records.last))
        }
    }

    static func load(_ queried: UUID, ledger: UUID, _ connection: Connection) throws -> TrustCache.Entry {
        var entry = TrustCache.Entry()
        let scanned = try connection.query(
            "SELECT origin, head, set_aside, last_record FROM hub.service_scanned WHERE ledger = $1", [.uuid(queried)])
        for r in 0..<scanned.rowCount {
            let origin = scanned.string(r, 0)
            let head = scanned.int64(r, 1)
            guard head >= 0, let last = try? scanned.bytes(r, 3).withUnsafeBytes({ b in try EventCodec.decode(b) }), last.origin == origin
            else { continue }
            entry.heads[origin] = UInt64(head)
            entry.last[origin] = last
            if scanned.bool(r, 2) { entry.setAside.insert(origin) }
        }
        let rows = try connection.query(
            "SELECT origin, record FROM hub.service_trust WHERE ledger = $1 ORDER BY origin, sequence", [.uuid(queried)])
        var byOrigin: [String: [Event]] = [:]
        for r in 0..<rows.rowCount {
            let origin = rows.string(r, 0)
            guard entry.heads[origin] != nil, let e = try? rows.bytes(r, 1).withUnsafeBytes({ b in try EventCodec.decode(b) }), e.origin == origin
            else { continue }
            byOrigin[origin, default: []].append(e)
        }
        // The founder first: its proof row is what the rest of the fold starts from.
        for (origin, events) in byOrigin { entry.addVouched(events, origin: origin, ledger: ledger) }
        return entry
    }

    /// Writes `update`, rows in key order (so that two requests lock them in the same order);
    /// the index is derived data, so a write that fails (a deadlock, a lock timeout) is rolled
    /// back to before it, and the request goes on without it.
    static func save(_ update: Update, ledger: UUID, _ connection: Connection) {
        do {
            _ = try connection.execute("SAVEPOINT trust_index")
            try write(update, ledger: ledger, connection)
            _ = try connection.execute("RELEASE SAVEPOINT trust_index")
        } catch {
            _ = try? connection.execute("ROLLBACK TO SAVEPOINT trust_index")
        }
    }

    static func write(_ unsorted: Update, ledger: UUID, _ connection: Connection) throws {
        var update = unsorted
        update.trust.sort { ($0.origin, $0.sequence) < ($1.origin, $1.sequence) }
        update.scanned.sort { $0.origin < $1.origin }
        if !update.trust.isEmpty {
            _ = try connection.query(
                """
                INSERT INTO hub.service_trust (ledger, origin, sequence, record)
                SELECT $1, * FROM unnest($2::text[], $3::int8[], $4::bytea[]) ON CONFLICT DO NOTHING
                """,
                [
                    .uuid(ledger), .textArray(update.trust.map(\.origin)),
                    .int64Array(update.trust.map { Int64(clamping: $0.sequence) }), .byteaArray(update.trust.map(\.record)),
                ])
        }
        for s in update.scanned {
            guard let last = s.last else { continue }
            _ = try connection.query(
                """
                INSERT INTO hub.service_scanned (ledger, origin, head, set_aside, last_record) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (ledger, origin) DO UPDATE SET head = excluded.head, set_aside = excluded.set_aside,
                    last_record = excluded.last_record
                WHERE hub.service_scanned.head < excluded.head
                """,
                [.uuid(ledger), .text(s.origin), .int64(Int64(clamping: s.head)), .bool(s.setAside), .bytea(last)])
        }
    }
}

/// Requests per device key: a bucket of `perMinute` tokens per (ledger, device), refilled
/// evenly over a minute; a request takes one. At most 100,000 buckets are kept (then the full
/// ones, which hold no state worth keeping, are dropped).
final class RateLimiter: @unchecked Sendable {
    private let perMinute: Double
    private var buckets: [String: (tokens: Double, at: Double)] = [:]
    private let lock = NSLock()

    init(perMinute: Int) { self.perMinute = Double(max(1, perMinute)) }

    /// Nil when the request may go; else the whole seconds until a token is back.
    func take(ledger: UUID, device: String, now: Double) -> Int? {
        let key = ledger.uuidString + "/" + device
        lock.lock()
        defer { lock.unlock() }
        let rate = perMinute / 60
        var b = buckets[key] ?? (perMinute, now)
        b.tokens = min(perMinute, b.tokens + max(0, now - b.at) * rate)
        b.at = now
        guard b.tokens >= 1 else {
            buckets[key] = b
            return max(1, Int(((1 - b.tokens) / rate).rounded(.up)))
        }
        b.tokens -= 1
        if buckets.count >= 100_000 {
            buckets = buckets.filter { $0.value.tokens + max(0, now - $0.value.at) * rate < perMinute }
        }
        buckets[key] = b
        return nil
    }
}

/// Something done at most once per period of the service's clock (in milliseconds).
final class Sweep: @unchecked Sendable {
    private let period: Double
    private var last: Double?
    private let lock = NSLock()

    init(every period: Double) { self.period = period }

    /// Whether it is due at `now`; if so, it counts as done then.
    func due(at now: Double) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if let last, now >= last, now - last < period { return false }
        last = now
        return true
    }
}

/// Connections to the hub kept idle between requests.
final class ConnectionPool: @unchecked Sendable {
    private var idle: [Hub] = []
    private let lock = NSLock()

    /// An idle connection that still looks open (``Connection/isOpenAndIdle``: those the
    /// server closed, after a restart say, are dropped without a round trip), or a new one.
    func take(_ url: String) throws(LedgerError) -> (hub: Hub, pooled: Bool) {
        while true {
            lock.lock()
            let hub = idle.popLast()
            lock.unlock()
            guard let hub else { break }
            if hub.connection.isOpenAndIdle { return (hub, true) }
        }
        return (try Hub(url: url), false)
    }

    /// Drops every idle connection (the server was found gone: they are all from before).
    func drain() {
        lock.lock()
        idle.removeAll()
        lock.unlock()
    }

    /// Keeps `hub` for the next request (up to 64 idle).
    func give(_ hub: Hub) {
        lock.lock()
        if idle.count < 64 { idle.append(hub) }
        lock.unlock()
    }
}

/// The trust events of ledgers as the service last read them, with the heads they were read up
/// to: derived data only (a request whose heads are behind the entry's, or that finds none,
/// reads from the start), so the service stays stateless between requests.
final class TrustCache: @unchecked Sendable {
    struct Entry {
        var heads: [String: UInt64] = [:]
        var inputs: [TrustFold.Input] = []
        var founder: (name: String, key: [UInt8])?
        var firstChained: [String: UInt64] = [:]
        /// Origins that chain: a self-enrolment later in them is not their first chained event.
        var chained = Set<String>()

        /// Origins whose rows stopped being read at one that cannot be read or vouched for: no
        /// later trust event of theirs is folded (as a store leaves an origin waiting there).
        var setAside = Set<String>()
        /// Each origin's last row read, for the chain of the rows read after it.
        var last: [String: Event] = [:]

        /// Adds `events`, the rows of `origin` after what the entry holds of it, in order: every
        /// trust event is folded only when its run's closing signature verifies and the chain
        /// from it to that signature holds (a hub role can insert any row; the service folds
        /// only what the origin signed). The first trust event that is not vouched for sets
        /// the origin aside.
        /// How many of `events` it folded (the vouched prefix; 0 for an origin set aside).
        @discardableResult
        mutating func add(_ events: [Event], origin: String, ledger: UUID) -> Int {
            guard !setAside.contains(origin) else { return 0 }
            let vouched = Self.vouchedPrefix(events, after: last[origin], ledger: ledger)
            if vouched < events.count { setAside.insert(origin) }
            let kept = Array(events.prefix(vouched))
            if let e = events.last { last[origin] = e }
            addVouched(kept, origin: origin, ledger: ledger)
            return vouched
        }

        /// Folds `events` of `origin` as they are: already vouched for (read back from the
        /// service's own index), or a vouched prefix.
        mutating func addVouched(_ events: [Event], origin: String, ledger: UUID) {
            let (fold, inputs) = TrustFold.from(events, ledger: ledger)
            if founder == nil { founder = fold.founder }
            self.inputs += inputs
            if !chained.contains(origin), let first = fold.firstChained[origin] { firstChained[origin] = first }
            if events.contains(where: { $0.previousHash != nil }) { chained.insert(origin) }
        }

        /// How many of `events` (one origin's, in order, after `previous`) can be folded: up to
        /// the first trust event whose sequence does not follow, whose run's chain breaks before
        /// its closing signature, or whose closing signature does not verify. Only the runs of
        /// trust events are hashed and checked: the cost follows the trust events, not the rows.
        static func vouchedPrefix(_ events: [Event], after previous: Event?, ledger: UUID) -> Int {
            var verified: [Int: Bool] = [:]
            for (i, e) in events.enumerated() {
                switch e.payload {
                case .deviceEnrolled, .deviceRevoked: break
                default: continue
                }
                let before = i > 0 ? events[i - 1] : previous
                if let before, e.sequence != before.sequence &+ 1 { return i }
                if before == nil, e.sequence != 1 { return i }
                // Unsigned events count only where the fold allows them (before their origin
                // holds a key, in a ledger founded before signing): it decides.
                guard e.previousHash != nil else { continue }
                if let before {
                    guard before.previousHash == nil || e.previousHash == EventChain.hash(before) else { return i }
                } else {
                    guard e.previousHash == EventChain.genesis else { return i }
                }
                // Forward to the signature closing the run, each link checked.
                var j = i
                while events[j].signature == nil {
                    guard j + 1 < events.count, events[j + 1].sequence == events[j].sequence &+ 1,
                        events[j + 1].previousHash == EventChain.hash(events[j])
                    else { return i }
                    j += 1
                }
                if verified[j] == nil {
                    let c = events[j]
                    verified[j] =
                        c.signer.map { signer in
                            Ed25519.verify(
                                signature: c.signature ?? [],
                                message: EventChain.message(ledger: ledger, origin: c.origin, sequence: c.sequence, hash: EventChain.hash(c)),
                                publicKey: signer)
                        } ?? false
                }
                guard verified[j] == true else { return i }
            }
            return events.count
        }

        func fold() -> TrustFold {
            var fold = TrustFold()
            fold.founder = founder
            fold.firstChained = firstChained
            return fold
        }
    }

    private var entries: [UUID: Entry] = [:]
    private let lock = NSLock()

    /// The entry of `ledger` as last read, whatever the heads now.
    func latest(_ ledger: UUID) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        return entries[ledger]
    }

    /// The entry of `ledger` if every one of its heads is at or before `heads`.
    func get(_ ledger: UUID, heads: [String: UInt64]) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        guard let e = entries[ledger], e.heads.allSatisfy({ (heads[$0.key] ?? 0) >= $0.value }) else { return nil }
        return e
    }

    func put(_ ledger: UUID, _ entry: Entry) {
        lock.lock()
        defer { lock.unlock() }
        if entries.count >= 10_000 { entries.removeAll(keepingCapacity: true) }
        entries[ledger] = entry
    }
}
