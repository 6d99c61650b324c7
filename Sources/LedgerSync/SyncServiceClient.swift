import Foundation
import GoalLedger
import RequestSigning
import Sodium

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A client of the ledger sync service (`docs/sync-service.md`): a store syncs with the hub
/// behind it, or a new device's store is cloned from it, over HTTP(S), every request signed with
/// the device's own key. An app uses it as it is:
///
///     let client = SyncServiceClient(baseURL: URL(string: "https://sync.example.org")!)
///     let result = try await client.sync(store)
///
/// A sync is two requests. The first, a **pull**, sends the store's `SyncState` and applies the
/// change set the service answers, with every check of an import. The pull's answer also carries
/// the hub's own state in the `ledger-state` response header: the standard base64 (with padding)
/// of the hub's `SyncState` bytes. The second, a **push**, sends the store's change set since
/// that state, and only when the store holds events the hub lacks.
///
/// Every request is signed (`RequestSignature`, label `sig1`, covering `"@method" "@path"
/// "content-digest" "ledger"`, `keyid` the store's device, a nonce of 16 random bytes in
/// hexadecimal) and carries `device-key` (the device's public key in hexadecimal), so that a hub
/// that holds nothing of a ledger yet can recognise its founder. A device that rotated its key
/// also sends its latest rotations (`ledger-rotation`: the base64 of each rotation's record,
/// comma-separated, oldest first), so that the service accepts the new key before the push that
/// delivers the rotation; once the hub holds the rotation, only the new key is accepted.
///
/// Requests go to `baseURL`'s scheme, host and port, its path (if any) followed by
/// `/v1/ledgers/{ledger}/pull` or `/push`; a user name or password in `baseURL` is neither sent
/// nor shown in messages. Plain `http` is accepted only to a loopback address (the requests carry
/// a person's history); anything else must be `https`.
public struct SyncServiceClient: Sendable {
    /// The service's address, as given.
    public let baseURL: URL
    /// The session every request goes through.
    public let session: URLSession
    /// The clock that dates each request's signature (`created`).
    let clock: @Sendable () -> Date

    /// A client of the service at `baseURL`, sending through `session` and dating its signatures
    /// by `clock`. Nothing is sent until ``sync(_:)`` or ``clone(ledger:to:device:)``.
    public init(baseURL: URL, session: URLSession = .shared, clock: @escaping @Sendable () -> Date = Date.init) {
        self.baseURL = baseURL
        self.session = session
        self.clock = clock
    }

    /// The service as messages name it: its host and port, without any user name or password.
    public var serviceName: String {
        let components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true)
        var host = components?.host ?? baseURL.host ?? "?"
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        return components?.port.map { "\(host):\($0)" } ?? host
    }

    /// The media type of a sync state body.
    public static let stateMediaType = "application/x-goal-ledger-state"
    /// The media type of a change set body.
    public static let changesMediaType = "application/x-goal-ledger-changes"
    /// The response header of a pull that carries the hub's sync state: the standard base64
    /// (with `=` padding) of `SyncState/encoded()`.
    public static let stateHeader = "ledger-state"

    /// Exchanges events with the service both ways: pulls what the store lacks (applied with the
    /// checks of an import; what cannot be verified waits), then pushes what the hub lacks
    /// according to the state the pull's answer named. `pushed` counts the events the service
    /// reports it stored, and names per origin what it set aside.
    ///
    /// A pull of more than one page asks for each next page while it applies the one before it
    /// (from the state that page leaves when it applies whole; the answer is used only when the
    /// store is then in that state), so the device holds up to two pages at once.
    ///
    /// A refusal is a `LedgerError`: `.store` when the service refuses the device's signature
    /// (with the service's reason), cannot reach its database, or cannot be reached;
    /// `.invalidInput` when it refuses a body (malformed, or too large); `.invalidArgument` for a
    /// base URL that is not `https` (or `http` to a loopback address). When the push fails, the
    /// pulled events stay applied.
    public func sync(_ store: LedgerStore) async throws(LedgerError) -> SyncResult {
        do throws(LedgerError) {
            return try await exchange(store)
        } catch {
            throw Self.namingEnrolment(error, of: store)
        }
    }

    /// A refusal of the device's key (401) said as `LedgerError/Reason/deviceNotEnrolled(device:publicKey:byService:)`
    /// when the store itself holds no enrolment of its device: a kept clone still waiting for one.
    /// The message stays the service's.
    static func namingEnrolment(_ error: LedgerError, of store: LedgerStore) -> LedgerError {
        guard case .serviceRefused(_, 401)? = error.reason,
            let (devices, ownKey) = try? store.reading({ (try $0.enrolledDevices(), try $0.publicKey()) }),
            !devices.contains(where: { $0.device == store.device }), let key = ownKey
        else { return error }
        return LedgerError(error.message, reason: .deviceNotEnrolled(device: store.device, publicKey: key, byService: true))
    }

    /// The pulls and pushes of ``sync(_:)``.
    func exchange(_ store: LedgerStore) async throws(LedgerError) -> SyncResult {
        var pages = PullPages()
        try await pullPages(&pages, into: store)
        var pushed = ImportResult()
        for push in try pushRequests(for: store, hubState: pages.hubState) { pushed.add(try finishPush(try await send(push))) }
        return SyncResult(pulled: pages.pulled, pushed: pushed)
    }

    /// Creates a store at `path` for the new device `device` of `ledger`
    /// (`LedgerStore/create(at:device:ledger:schema:options:keys:)`, which makes the device's
    /// key pair), then pulls every event of the ledger from the service into it.
    ///
    /// The service answers only devices the ledger enrolled, so a new device is usually refused:
    /// the store is then kept, empty but holding the device's key, and the error (`.store`) says
    /// that an enrolled device must enrol this one with its public key (given in hexadecimal) and
    /// sync, after which a ``sync(_:)`` of the kept store fetches the ledger. On any other failure
    /// nothing is left at `path` that was not there before.
    public func clone(ledger: UUID, to path: String, device: String) async throws(LedgerError) -> LedgerStore {
        let (store, undo) = try createStoreForClone(ledger: ledger, at: path, device: device)
        let reply: Reply
        do throws(LedgerError) {
            reply = try await send(try pullRequest(for: store, state: SyncState(ledger: ledger)))
        } catch {
            undo()
            throw error
        }
        switch try finishClone(reply, store: store, undo: undo) {
        case .cloned(let store, var pages):
            try await pullPages(&pages, into: store)
            return store
        case .awaitingEnrolment(_, let refusal): throw refusal
        }
    }
}

// MARK: - Requests and replies

extension SyncServiceClient {
    /// A request ready to send, with what it does for messages.
    struct Prepared: Sendable {
        /// `pull` or `push`.
        let action: String
        /// The request, signed.
        let request: URLRequest
        /// The store's device and ledger, for messages.
        let device: String
        let ledger: UUID
        /// The body's size in bytes, for messages.
        let bodyBytes: Int
    }

    /// What the service answered to a request.
    struct Reply: Sendable {
        /// What was asked.
        let prepared: Prepared
        let status: Int
        let headers: [String: String]
        let body: [UInt8]

        /// The header `name`, in any case.
        func header(_ name: String) -> String? {
            let wanted = name.lowercased()
            return headers.first { $0.key.lowercased() == wanted }?.value
        }
    }

    /// How a clone ended: with a store holding the ledger's events, or with an empty store whose
    /// device the service refused (not enrolled yet).
    package enum CloneOutcome {
        /// The store, holding the first page of events the service gave, and the pages' state
        /// for the rest.
        case cloned(LedgerStore, PullPages)
        /// The store, kept empty, and the refusal that says what to do next.
        case awaitingEnrolment(LedgerStore, refusal: LedgerError)
    }

    /// Whether `peer` names a sync service (an `http://` or `https://` URL) rather than a store
    /// directory or a PostgreSQL hub.
    package static func isServiceURL(_ peer: String) -> Bool {
        let lower = peer.lowercased()
        return lower.hasPrefix("https://") || lower.hasPrefix("http://")
    }

    /// `url` for messages: without the user name and password it may carry before its host.
    package static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<scheme.upperBound]) + rest[rest.index(after: at)...]
    }

    /// The URL of `action` for `ledger`, with no user name or password; throws unless the
    /// base URL is an `https` one, or an `http` one to a loopback address.
    func endpoint(_ action: String, ledger: UUID) throws(LedgerError) -> (url: URL, target: String, scheme: String, authority: String) {
        guard let base = URLComponents(url: baseURL, resolvingAgainstBaseURL: true), let scheme = base.scheme?.lowercased(),
            let host = base.host, !host.isEmpty
        else {
            throw LedgerError(.invalidArgument, "the sync service's address is not an http or https URL with a host")
        }
        guard scheme == "https" || scheme == "http" else {
            throw LedgerError(.invalidArgument, "the sync service at \(serviceName) has the scheme \(scheme); use https")
        }
        if scheme == "http", !Self.isLoopback(host) {
            throw LedgerError(
                .invalidArgument,
                "the sync service at \(serviceName) would be reached over plain http, which shows the ledger's events to the network; use https (plain http is only for a loopback address)"
            )
        }
        var path = base.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        let target = path + "/v1/ledgers/\(ledger.uuidString)/\(action)"
        var components = URLComponents()
        components.scheme = scheme
        components.host = base.host
        components.port = base.port
        components.percentEncodedPath = target
        guard let url = components.url else {
            throw LedgerError(.invalidArgument, "the sync service's address gives no usable URL for \(target)")
        }
        return (url, target, scheme, serviceName.lowercased())
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    /// A request of `action` carrying `body`, signed with the store's device key: headers
    /// `ledger`, `device-key`, `content-digest`, `signature-input` and `signature` (label `sig1`,
    /// covering `"@method" "@path" "content-digest" "ledger"`, with `created`, `keyid`,
    /// `alg="ed25519"` and a nonce of 16 random bytes in hexadecimal).
    func signedRequest(_ action: String, for store: LedgerStore, body: [UInt8], contentType: String) throws(LedgerError) -> Prepared {
        let (url, target, scheme, authority) = try endpoint(action, ledger: store.ledgerID)
        guard let key = try store.keys.key(ledger: store.ledgerID, device: store.device) else {
            throw LedgerError.signingKeyMissing(
                device: store.device, path: store.path, hint: " (the sync service answers signed requests only)")
        }
        var headers: [(name: String, value: String)] = [
            ("ledger", store.ledgerID.uuidString), ("device-key", Self.hex(key.publicKey)),
        ]
        // A device that rotated its key proves the rotation, which the service may not hold yet.
        let rotations = try store.reading { try $0.ownKeyRotations() }
        if !rotations.isEmpty {
            headers.append(("ledger-rotation", rotations.map { Data($0).base64EncodedString() }.joined(separator: ",")))
        }
        let parts = SignedRequestParts(method: "POST", target: target, scheme: scheme, authority: authority, headers: headers, body: body)
        var random = SystemRandomNumberGenerator()
        let nonce = Self.hex((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &random) })
        let created = Int64(clock().timeIntervalSince1970.rounded(.down))
        let signature: [(name: String, value: String)]
        do throws(RequestSignatureError) {
            signature = try RequestSignature.sign(parts, key: key, keyID: store.device, created: created, nonce: nonce)
        } catch {
            throw LedgerError(.internal, "cannot sign the \(action) request to the sync service at \(serviceName): \(error.message)")
        }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        request.setValue(action == "pull" ? Self.changesMediaType : "application/json", forHTTPHeaderField: "Accept")
        for (name, value) in headers + signature { request.setValue(value, forHTTPHeaderField: name) }
        return Prepared(action: action, request: request, device: store.device, ledger: store.ledgerID, bodyBytes: body.count)
    }

    /// The pull of what a store in `state` lacks.
    func pullRequest(for store: LedgerStore, state: SyncState) throws(LedgerError) -> Prepared {
        try signedRequest("pull", for: store, body: state.encoded(), contentType: Self.stateMediaType)
    }

    /// The most events one push carries (a service takes at least 10,000 by default): more go
    /// in several pushes, one after the other.
    public static let pushPartEvents = 5_000
    /// The most record bytes one push carries (a service takes 8 MiB by default).
    public static let pushPartBytes = 4 << 20

    /// The pushes of what the store holds beyond `hubState`; none when that is nothing (a
    /// change set also repeats the hub's last event of each origin both hold, which alone is
    /// not worth a request). Parts of at most ``pushPartEvents`` events and ``pushPartBytes``
    /// bytes, each origin's events in order, a part ending only where a signed run ends (a run
    /// longer than that goes alone).
    func pushRequests(for store: LedgerStore, hubState: SyncState) throws(LedgerError) -> [Prepared] {
        let changes = try store.reading { try $0.changeSet(since: hubState) }
        guard changes.events.contains(where: { $0.sequence > (hubState.heads[$0.origin]?.sequence ?? 0) }) else { return [] }
        var prepared: [Prepared] = []
        for part in Self.parts(changes, events: Self.pushPartEvents, bytes: Self.pushPartBytes) {
            prepared.append(try signedRequest("push", for: store, body: part.encoded(), contentType: Self.changesMediaType))
        }
        return prepared
    }

    /// `changes` in parts of at most `events` events and `bytes` record bytes, cut only after
    /// an event that ends a run (signed, or not chained), so that every part vouches for itself.
    static func parts(_ changes: ChangeSet, events limit: Int, bytes byteLimit: Int) -> [ChangeSet] {
        var parts: [ChangeSet] = []
        var part: [Int] = []
        var partBytes = 0
        var run: [Int] = []
        var runBytes = 0
        func flush() {
            guard !part.isEmpty else { return }
            parts.append(
                ChangeSet(ledger: changes.ledger, events: part.map { changes.events[$0] }, records: part.map { changes.records[$0] }))
            part = []
            partBytes = 0
        }
        for i in changes.events.indices {
            run.append(i)
            runBytes += changes.records[i].count
            let e = changes.events[i]
            let last = i + 1 == changes.events.count
            let ends = e.signature != nil || e.previousHash == nil || last || changes.events[i + 1].origin != e.origin
            guard ends else { continue }
            if !part.isEmpty && (part.count + run.count > limit || partBytes + runBytes > byteLimit) { flush() }
            part += run
            partBytes += runBytes
            run = []
            runBytes = 0
        }
        flush()
        return parts
    }

    /// What one page of a pull brought.
    struct PulledPage {
        var result: ImportResult
        /// The hub's state as the `ledger-state` header names it.
        var hubState: SyncState
        /// Whether the service has more (`ledger-more: true`).
        var more: Bool
        /// The origins the page held events of.
        var origins: Set<String>
    }

    /// A pull in pages: the service answers a large pull in pages (`ledger-more: true`), each
    /// asked from the state the pages before it left. An origin whose page brought nothing
    /// (its events wait: a fork, a forgery) is asked from the hub's head the next time, so the
    /// origins after it are reached; the pages end when the service has no more, or when a page
    /// brings nothing from origins already passed.
    package struct PullPages {
        package var pulled = ImportResult()
        package var hubState = SyncState(ledger: UUID())
        var passed: [String: SyncState.Head] = [:]
        package var pages = 0
        var done = false

        /// The state the next page is asked from: the store's, with the passed origins at the
        /// hub's heads.
        func state(of store: LedgerStore) throws(LedgerError) -> SyncState {
            var state = try store.reading { try $0.syncState() }
            for (origin, head) in passed where (state.heads[origin]?.sequence ?? 0) < head.sequence { state.heads[origin] = head }
            return state
        }

        mutating func absorb(_ page: PulledPage) {
            pages += 1
            pulled.add(page.result)
            hubState = page.hubState
            guard page.more, pages < 1_000_000 else {
                done = true
                return
            }
            if page.result.imported == 0 {
                let fresh = page.origins.filter { passed[$0] == nil }
                if fresh.isEmpty { done = true }
                for origin in fresh { if let head = page.hubState.heads[origin] { passed[origin] = head } }
            }
        }
    }

    /// Applies a pull's change set to `store`; returns what was applied, the hub's state as the
    /// `ledger-state` header names it, and whether more pages follow.
    func finishPull(_ reply: Reply, store: LedgerStore) throws(LedgerError) -> PulledPage {
        try applyPull(try readPull(reply, ledger: store.ledgerID), store: store)
    }

    /// A pull's answer read and checked, not yet applied.
    struct PullAnswer {
        let hubState: SyncState
        let changes: ChangeSet
        /// Whether the service holds more after this page.
        let more: Bool
    }

    /// Reads the pull answer `reply` for a store of `ledger`: its status, the hub's state (an
    /// answer without it is refused before anything is applied), its change set.
    func readPull(_ reply: Reply, ledger: UUID) throws(LedgerError) -> PullAnswer {
        try checkStatus(reply)
        let hubState = try hubState(of: reply, ledger: ledger)
        let changes = try ChangeSet(decoding: reply.body, source: "the pull answer of the sync service at \(serviceName)")
        let more = reply.header(Self.moreHeader)?.trimmingCharacters(in: .whitespaces).lowercased() == "true"
        return PullAnswer(hubState: hubState, changes: changes, more: more)
    }

    /// Applies a pull's answer to `store`.
    func applyPull(_ answer: PullAnswer, store: LedgerStore) throws(LedgerError) -> PulledPage {
        let pulled = try store.writing { try $0.apply(answer.changes, from: "the sync service at \(serviceName)") }
        return PulledPage(result: pulled, hubState: answer.hubState, more: answer.more, origins: Set(answer.changes.events.map(\.origin)))
    }

    /// The state a store in `state` is in once it took every event of `changes` (each
    /// origin's head at its last event there): what the next page is asked from when the
    /// page applies whole.
    static func state(_ state: SyncState, after changes: ChangeSet) -> SyncState {
        // Each origin's last event first: only those are hashed.
        var last: [String: (sequence: UInt64, index: Int)] = [:]
        for i in changes.events.indices {
            let (origin, sequence) = (changes.events[i].origin, changes.events[i].sequence)
            if sequence > (last[origin]?.sequence ?? 0) { last[origin] = (sequence, i) }
        }
        var next = state
        for (origin, head) in last where head.sequence > (next.heads[origin]?.sequence ?? 0) {
            next.heads[origin] = SyncState.Head(sequence: head.sequence, hash: EventChain.hash(changes.events[head.index]))
        }
        return next
    }

    /// The response header of a pull answered in part: `true` when more pages follow.
    public static let moreHeader = "ledger-more"

    /// The hub's state from a pull's `ledger-state` header.
    func hubState(of reply: Reply, ledger: UUID) throws(LedgerError) -> SyncState {
        let source = "the sync service at \(serviceName)"
        guard let text = reply.header(Self.stateHeader) else {
            throw LedgerError(
                .store,
                "\(source) did not say which events it holds (its pull answer has no \(Self.stateHeader) header); nothing was applied or sent"
            )
        }
        guard let bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespaces)) else {
            throw LedgerError(.store, "the \(Self.stateHeader) header of \(source) is not base64; nothing was applied or sent")
        }
        let state: SyncState
        do throws(LedgerError) {
            state = try SyncState(decoding: Array(bytes))
        } catch {
            throw LedgerError(.store, "the \(Self.stateHeader) header of \(source) is \(error.message); nothing was applied or sent")
        }
        guard state.ledger == ledger else {
            throw LedgerError(
                .store,
                "\(source) answered with the state of ledger \(state.ledger.uuidString), not of \(ledger.uuidString); nothing was applied or sent"
            )
        }
        return state
    }

    /// What a push's answer reports: the events the service stored and what it set aside.
    func finishPush(_ reply: Reply) throws(LedgerError) -> ImportResult {
        struct Answer: Decodable {
            struct Waiting: Decodable {
                let origin: String
                let sequence: UInt64
                let count: Int
                let cause: String?
                let reason: String
            }
            let inserted: Int
            let waiting: [Waiting]?
        }
        try checkStatus(reply)
        guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(reply.body)) else {
            throw LedgerError(
                .store,
                "the sync service at \(serviceName) answered the push with \(Self.quoted(reply.body)), not {\"inserted\":N,\"waiting\":[…]}; whether it stored the events is unknown: sync again"
            )
        }
        // A part holds at most `pushPartEvents` events: a count outside what a push can have
        // stored or set aside is not an answer to it (and must not reach the sums).
        guard (0...Self.pushPartEvents).contains(answer.inserted), (answer.waiting ?? []).allSatisfy({ (0...Int(UInt32.max)).contains($0.count) })
        else {
            throw LedgerError(
                .store,
                "the sync service at \(serviceName) answered the push with counts no push of at most \(Self.pushPartEvents) events can have (\(Self.quoted(reply.body))); whether it stored the events is unknown: sync again"
            )
        }
        var result = ImportResult(imported: answer.inserted)
        result.waiting = (answer.waiting ?? []).map {
            WaitingEvents(
                origin: $0.origin, sequence: $0.sequence, count: $0.count, cause: $0.cause.flatMap(WaitingEvents.Cause.init) ?? .other,
                reason: "the sync service at \(serviceName): " + $0.reason)
        }
        return result
    }

    /// Makes the store a clone pulls into; `undo` removes what was made.
    func createStoreForClone(ledger: UUID, at path: String, device: String) throws(LedgerError) -> (LedgerStore, undo: @Sendable () -> Void)
    {
        let fm = FileManager.default
        let existed = fm.fileExists(atPath: path)
        let before = Set((try? fm.contentsOfDirectory(atPath: path)) ?? [])
        let undo: @Sendable () -> Void = {
            let fm = FileManager.default
            if !existed {
                try? fm.removeItem(atPath: path)
            } else {
                for name in (try? fm.contentsOfDirectory(atPath: path)) ?? [] where !before.contains(name) {
                    try? fm.removeItem(atPath: path + "/" + name)
                }
            }
        }
        do throws(LedgerError) {
            return (try LedgerStore.create(at: path, device: device, ledger: ledger), undo)
        } catch {
            // A store that was there before is not ours to remove.
            if error.reason != .storeExists(path: path) { undo() }
            throw error
        }
    }

    /// Applies a clone's pull answer, or keeps the store when the service refused the new device.
    func finishClone(_ reply: Reply, store: LedgerStore, undo: () -> Void) throws(LedgerError) -> CloneOutcome {
        if reply.status == 401 {
            let publicKey = (try? store.reading { try $0.publicKey() }).flatMap { $0 }
            let key = publicKey.map(Self.hex) ?? "(unknown)"
            let refusal = LedgerError(
                "the sync service at \(serviceName) refused device \(store.device) of ledger \(store.ledgerID.uuidString): \(Self.reason(reply.body)). A new device must first be enrolled by an enrolled device of the ledger, with this device's public key \(key), and that device must sync with the service; then sync this store, which was kept at \(store.path) with the device's key",
                reason: .deviceNotEnrolled(device: store.device, publicKey: publicKey ?? [], byService: true))
            return .awaitingEnrolment(store, refusal: refusal)
        }
        do throws(LedgerError) {
            var pages = PullPages()
            pages.absorb(try finishPull(reply, store: store))
            return .cloned(store, pages)
        } catch {
            undo()
            throw error
        }
    }

    // MARK: Statuses

    /// Throws the error a status other than 200 stands for.
    func checkStatus(_ reply: Reply) throws(LedgerError) {
        let action = reply.prepared.action
        let service = "the sync service at \(serviceName)"
        let reason = Self.reason(reply.body)
        switch reply.status {
        case 200:
            return
        case 401:
            throw LedgerError(
                "\(service) refused the \(action) of device \(reply.prepared.device) of ledger \(reply.prepared.ledger.uuidString): \(reason); nothing was written",
                reason: .serviceRefused(peer: serviceName, status: 401))
        case 503:
            throw LedgerError(
                "\(service) cannot reach its database; nothing was written; try again",
                reason: .peerUnreachable(peer: serviceName))
        case 400:
            throw LedgerError(
                "\(service) refused the \(action) as malformed: \(reason); nothing was written",
                reason: .serviceRefused(peer: serviceName, status: 400))
        case 413:
            throw LedgerError(
                "\(service) refused the \(action) as too large (\(reply.prepared.bodyBytes) bytes): \(reason); nothing was written",
                reason: .serviceRefused(peer: serviceName, status: 413))
        case 404:
            throw LedgerError(
                "\(service) has no \(action) endpoint (404: \(reason)); is it a ledger sync service of protocol version 1?",
                reason: .serviceRefused(peer: serviceName, status: 404))
        case 403:
            throw LedgerError(
                "\(service) does not keep ledger \(reply.prepared.ledger.uuidString): \(reason)",
                reason: .serviceRefused(peer: serviceName, status: 403))
        case 429:
            let wait = reply.header("retry-after").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            throw LedgerError(
                "\(service) is limiting the requests of device \(reply.prepared.device): \(reason)"
                    + (wait.map { " (Retry-After: \($0) s)" } ?? ""),
                reason: .peerUnreachable(peer: serviceName))
        default:
            throw LedgerError(
                "\(service) answered the \(action) with status \(reply.status): \(reason)",
                reason: .serviceRefused(peer: serviceName, status: reply.status))
        }
    }

    /// The service's reason: the `error` of a JSON body `{"error":"…"}`, else the body itself
    /// (shortened).
    static func reason(_ body: [UInt8]) -> String {
        struct Refusal: Decodable { let error: String }
        if let refusal = try? JSONDecoder().decode(Refusal.self, from: Data(body)) { return refusal.error }
        return body.isEmpty ? "no reason given" : quoted(body)
    }

    /// A body as a message shows it: its text, at most 200 characters, control characters escaped.
    static func quoted(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        let shown = text.unicodeScalars.map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }.joined()
        return "\"" + shown + (body.count > 200 ? "…" : "") + "\""
    }

    static func hex(_ bytes: [UInt8]) -> String { Hex.string(bytes) }
}

// MARK: - Sending

extension SyncServiceClient {
    /// Sends `prepared` and waits for the answer, without blocking a thread.
    func send(_ prepared: Prepared) async throws(LedgerError) -> Reply {
        let outcome: Result<Reply, LedgerError>
        do {
            let (data, response) = try await session.data(for: prepared.request)
            outcome = reply(prepared, data, response, nil)
        } catch {
            outcome = reply(prepared, nil, nil, error)
        }
        return try outcome.get()
    }

    /// Sends `prepared` and blocks the calling thread until the answer (for the command line,
    /// which is synchronous). The session's callback queue must not be the calling thread's.
    func sendBlocking(_ prepared: Prepared) throws(LedgerError) -> Reply {
        try sendAhead(prepared).wait()
    }

    /// A request sent, its answer not yet waited for.
    final class PendingReply: @unchecked Sendable {
        /// Written once by the callback before it signals, read after the wait: the semaphore
        /// orders the two.
        fileprivate var outcome: Result<Reply, LedgerError>?
        fileprivate let done = DispatchSemaphore(value: 0)
        private var waited = false

        /// Blocks until the answer (the first call; from one thread only).
        func wait() throws(LedgerError) -> Reply {
            if !waited {
                done.wait()
                waited = true
            }
            return try outcome!.get()
        }
    }

    /// Sends `prepared` and returns at once; the answer's `wait()` blocks for it.
    func sendAhead(_ prepared: Prepared) -> PendingReply {
        let pending = PendingReply()
        let task = session.dataTask(with: prepared.request) { data, response, error in
            pending.outcome = self.reply(prepared, data, response, error)
            pending.done.signal()
        }
        task.resume()
        return pending
    }

    /// Pulls page after page into `store` until `pages` is done, each next page asked for while
    /// the one before it is applied, as ``pullPagesBlocking(_:into:signedBy:)`` does.
    func pullPages(_ pages: inout PullPages, into store: LedgerStore) async throws(LedgerError) {
        var ahead: (state: SyncState, reply: Task<Reply, any Error>)?
        // A request still out when the pull fails is not waited for.
        defer { ahead?.reply.cancel() }
        while !pages.done {
            let state = try pages.state(of: store)
            var reply: Reply?
            if let a = ahead {
                ahead = nil
                // Its answer serves only the state it was asked from; a failed one is asked again.
                let answer = try? await a.reply.value
                if a.state == state { reply = answer }
            }
            if reply == nil { reply = try await send(try pullRequest(for: store, state: state)) }
            let answer = try readPull(reply!, ledger: store.ledgerID)
            if answer.more {
                let next = Self.state(state, after: answer.changes)
                let prepared = try pullRequest(for: store, state: next)
                ahead = (next, Task { try await self.send(prepared) })
            }
            pages.absorb(try applyPull(answer, store: store))
        }
    }

    /// Pulls page after page into `store` (each request signed as `signer`'s device) until
    /// `pages` is done. While a page is applied, the next is already asked for, from the state
    /// the page leaves when it applies whole; it is used only when the store is then in that
    /// state, and asked for again from the store's state otherwise.
    func pullPagesBlocking(_ pages: inout PullPages, into store: LedgerStore, signedBy signer: LedgerStore) throws(LedgerError) {
        var ahead: (state: SyncState, reply: PendingReply)?
        // A request still out is waited for: its callback must not outlive the pull.
        defer { if let ahead { _ = try? ahead.reply.wait() } }
        while !pages.done {
            let state = try pages.state(of: store)
            var reply: Reply?
            if let a = ahead {
                ahead = nil
                // Its answer serves only the state it was asked from; a failed one is asked again.
                let answer = try? a.reply.wait()
                if a.state == state { reply = answer }
            }
            if reply == nil { reply = try sendBlocking(try pullRequest(for: signer, state: state)) }
            let answer = try readPull(reply!, ledger: store.ledgerID)
            if answer.more {
                let next = Self.state(state, after: answer.changes)
                ahead = (next, sendAhead(try pullRequest(for: signer, state: next)))
            }
            pages.absorb(try applyPull(answer, store: store))
        }
    }

    /// The answer, or the error a failed exchange stands for.
    func reply(_ prepared: Prepared, _ data: Data?, _ response: URLResponse?, _ error: (any Error)?) -> Result<Reply, LedgerError> {
        if let error {
            if error is CancellationError || (error as? URLError)?.code == .cancelled {
                return .failure(LedgerError(.store, "the \(prepared.action) to the sync service at \(serviceName) was cancelled"))
            }
            return .failure(
                LedgerError(
                    "cannot reach the sync service at \(serviceName): \(Self.describe(error))",
                    reason: .peerUnreachable(peer: serviceName)))
        }
        guard let http = response as? HTTPURLResponse else {
            return .failure(
                LedgerError(
                    "cannot reach the sync service at \(serviceName): the answer is not an HTTP response",
                    reason: .peerUnreachable(peer: serviceName)))
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return .success(Reply(prepared: prepared, status: http.statusCode, headers: headers, body: Array(data ?? Data())))
    }

    /// An error of the URL loading system in words, without the URL (which could hold a password).
    static func describe(_ error: any Error) -> String {
        guard let urlError = error as? URLError else { return "\(error.localizedDescription)" }
        switch urlError.code {
        case .cannotConnectToHost: return "the connection was refused"
        case .cannotFindHost, .dnsLookupFailed: return "its host name is not known"
        case .timedOut: return "no answer in time"
        case .notConnectedToInternet: return "this device is not connected to a network"
        case .networkConnectionLost: return "the connection was lost"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot, .clientCertificateRejected, .clientCertificateRequired:
            return "the TLS connection failed (\(urlError.localizedDescription))"
        default:
            return urlError.localizedDescription + " (URL error \(urlError.code.rawValue))"
        }
    }
}

// MARK: - Blocking calls for the command line

extension SyncServiceClient {
    /// ``sync(_:)``, blocking the calling thread until it is done (for the command line).
    package func syncBlocking(_ store: LedgerStore) throws(LedgerError) -> SyncResult {
        var pages = PullPages()
        try pullPagesBlocking(&pages, into: store, signedBy: store)
        var pushed = ImportResult()
        for push in try pushRequests(for: store, hubState: pages.hubState) { pushed.add(try finishPush(try sendBlocking(push))) }
        return SyncResult(pulled: pages.pulled, pushed: pushed)
    }

    /// A pull into `store` of what it lacks, the request signed as `signer`'s device (for the
    /// benchmark: a store that is not enrolled reads through an enrolled one's identity).
    package func pullBlocking(into store: LedgerStore, signedBy signer: LedgerStore) throws(LedgerError) -> ImportResult {
        var pages = PullPages()
        try pullPagesBlocking(&pages, into: store, signedBy: signer)
        return pages.pulled
    }

    /// ``clone(ledger:to:device:)``, blocking the calling thread until it is done (for the
    /// command line), and telling a refused new device apart from other failures.
    package func cloneBlocking(ledger: UUID, to path: String, device: String) throws(LedgerError) -> CloneOutcome {
        let (store, undo) = try createStoreForClone(ledger: ledger, at: path, device: device)
        let reply: Reply
        do throws(LedgerError) {
            reply = try sendBlocking(try pullRequest(for: store, state: SyncState(ledger: ledger)))
        } catch {
            undo()
            throw error
        }
        switch try finishClone(reply, store: store, undo: undo) {
        case .cloned(let store, var pages):
            try pullPagesBlocking(&pages, into: store, signedBy: store)
            return .cloned(store, pages)
        case .awaitingEnrolment(let store, let refusal): return .awaitingEnrolment(store, refusal: refusal)
        }
    }
}

extension ImportResult {
    /// Adds what one more push of the same sync did.
    mutating func add(_ other: ImportResult) {
        imported += other.imported
        alreadyPresent += other.alreadyPresent
        revoked += other.revoked
        waiting += other.waiting
        setAside += other.setAside
    }
}
