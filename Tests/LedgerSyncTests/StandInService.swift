import Foundation
import GoalLedger
import HTTPServer
import LedgerTestSupport
import RequestSigning
import Sodium

/// A stand-in for the sync service: an HTTP server on a free loopback port that keeps one
/// `LedgerStore` as the hub, checks every request's signature as the protocol says (the key the
/// hub's trust gives the `keyid`, or the founder's key for a ledger the hub holds nothing of yet;
/// `created` within 300 seconds; a nonce never seen before), answers a pull with the change set
/// the caller lacks and the hub's state in `ledger-state`, and applies a push.
final class StandInService: @unchecked Sendable {
    /// What the stand-in saw of one request, and what it made of its signature.
    struct Seen {
        let request: HTTPRequest
        let verified: RequestSignature.Verified?
    }

    let hub: LedgerStore
    private(set) var server: HTTPServer!
    private let lock = NSLock()
    private var seenRequests: [Seen] = []
    private var nonces: Set<String> = []
    private var forced: (status: Int, error: String)?
    private var omitsState = false
    private var stateOverride: [UInt8]?
    private var acceptsAnyKey = false
    /// The stand-in's clock.
    var now: @Sendable () -> Date = Date.init

    init(hub: LedgerStore, maxBodyBytes: Int = 8 << 20) throws {
        self.hub = hub
        server = try HTTPServer(options: HTTPServer.Options(maxBodyBytes: maxBodyBytes)) { [unowned self] request in
            self.handle(request)
        }
    }

    deinit { server.stop(gracePeriod: .seconds(1)) }

    var port: UInt16 { server.port }
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The requests seen so far.
    var seen: [Seen] { lock.withLock { seenRequests } }

    /// Answers every request from now on with `status` and `{"error": error}` (nil: normally).
    func force(_ status: Int?, error: String = "") {
        lock.withLock { forced = status.map { ($0, error) } }
    }

    /// Leaves the `ledger-state` header out of pull answers (a service of another version).
    func omitState(_ omit: Bool) { lock.withLock { omitsState = omit } }
    /// Makes every pull answer name these bytes as the hub's state (nil: the hub's own).
    func answerState(_ bytes: [UInt8]?) { lock.withLock { stateOverride = bytes } }

    /// Accepts a signature by any key the request's `device-key` names (to clone without enrolment).
    func acceptAnyKey(_ accept: Bool) { lock.withLock { acceptsAnyKey = accept } }

    private func refuse(_ status: Int, _ error: String) -> HTTPResponse {
        let body = try! JSONSerialization.data(withJSONObject: ["error": error])
        return HTTPResponse(status: status, json: Array(body))
    }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let (forced, omitsState, acceptsAnyKey, stateOverride) = lock.withLock {
            (self.forced, self.omitsState, self.acceptsAnyKey, self.stateOverride)
        }
        var verified: RequestSignature.Verified?
        defer { lock.withLock { seenRequests.append(Seen(request: request, verified: verified)) } }
        if let forced { return refuse(forced.status, forced.error) }

        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false)
        guard request.method == "POST", parts.count == 5, parts[0].isEmpty, parts[1] == "v1", parts[2] == "ledgers",
            let ledger = UUID(uuidString: String(parts[3])), ["pull", "push"].contains(parts[4])
        else { return refuse(404, "no such endpoint") }
        guard ledger == hub.ledgerID else { return refuse(401, "this service holds no ledger \(ledger.uuidString)") }
        guard let header = request.header("ledger"), UUID(uuidString: header) == ledger else {
            return refuse(400, "the ledger header differs from the path's ledger")
        }

        // The signature.
        let signed = SignedRequestParts(
            method: request.method, target: request.path + (request.query.map { "?" + $0 } ?? ""), scheme: "http",
            headers: request.headers, body: request.body)
        let deviceKey = request.header("device-key").flatMap(Self.bytes(hex:))
        do {
            let holdsEvents = try hub.lastPosition() > 0
            let enrolled = try hub.enrolledDevices()
            verified = try RequestSignature.verify(signed, label: "sig1") { keyID in
                if acceptsAnyKey { return deviceKey }
                if let device = enrolled.first(where: { $0.device == keyID && $0.revokedAfter == nil }) { return device.publicKey }
                if !holdsEvents, let deviceKey, EventChain.ledgerID(founder: keyID, publicKey: deviceKey) == ledger { return deviceKey }
                return nil
            }
        } catch let error as RequestSignatureError {
            return refuse(401, error.message)
        } catch {
            return refuse(500, "\(error)")
        }
        guard let verified else { return refuse(500, "no signature") }
        guard abs(verified.created - Int64(now().timeIntervalSince1970)) <= 300 else {
            return refuse(401, "the request was signed at \(verified.created), outside 300 seconds of the service's clock")
        }
        guard lock.withLock({ nonces.insert(verified.nonce).inserted }) else { return refuse(401, "the nonce was seen before") }

        do {
            if parts[4] == "pull" {
                let state = try SyncState(decoding: request.body)
                guard state.ledger == ledger else { return refuse(400, "the state is of another ledger") }
                let changes = try hub.changeSet(since: state)
                var headers: [(name: String, value: String)] = []
                if !omitsState {
                    headers.append(("ledger-state", Data(try stateOverride ?? hub.syncState().encoded()).base64EncodedString()))
                }
                return HTTPResponse(
                    status: 200, bytes: changes.encoded(), contentType: "application/x-goal-ledger-changes", headers: headers)
            } else {
                let changes = try ChangeSet(decoding: request.body)
                guard changes.ledger == ledger else { return refuse(400, "the change set is of another ledger") }
                let result = try hub.apply(changes, from: "device \(verified.keyID)")
                let waiting: [[String: Any]] = result.waiting.map {
                    ["origin": $0.origin, "sequence": $0.sequence, "count": $0.count, "reason": $0.reason]
                }
                let body = try JSONSerialization.data(withJSONObject: ["inserted": result.imported, "waiting": waiting] as [String: Any])
                return HTTPResponse(status: 200, json: Array(body))
            }
        } catch let error as LedgerError where error.code == .invalidInput {
            return refuse(400, error.message)
        } catch {
            return refuse(500, "\(error)")
        }
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
