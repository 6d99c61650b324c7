import Foundation
import GoalLedger
import HTTPServer
import LedgerCommandLine
import LedgerSync
import RequestSigning
import Sodium
import Testing

/// A directory removed when the test ends.
final class TemporaryDirectory {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-sync-\(UUID().uuidString)").path
    init() { try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

let runGoal = "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1"
let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

/// Events with ids, as a device would append them.
func drafts(_ lines: [String]) throws -> [EventDraft] {
    try lines.enumerated().map { try EventDraft(line: $0.element, number: $0.offset + 1) }
}

let dayOne = [
    #"{"id":"10000000-0000-4000-8000-000000000001","type":"goalCreated","goal":"\#(runGoal)","title":"Run 5 km","cadence":"daily","progress":{"kind":"measurable","target":5,"unit":"km"},"at":"2026-11-02T07:05:00Z"}"#,
    #"{"id":"10000000-0000-4000-8000-000000000002","type":"progressRecorded","goal":"\#(runGoal)","amount":2.5,"at":"2026-11-02T22:40:00Z"}"#,
]

func progress(_ n: Int) throws -> [EventDraft] {
    try drafts((0..<n).map { _ in #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":1}"# })
}

/// The error `body` throws, as a ledger error (nil when it succeeds).
func ledgerError(_ body: () async throws -> Void) async -> LedgerError? {
    do {
        try await body()
        return nil
    } catch let error as LedgerError {
        return error
    } catch {
        Issue.record("not a ledger error: \(error)")
        return nil
    }
}

/// A phone that founded a ledger, a tablet cloned from it store to store (so enrolled), and a
/// stand-in service whose hub store holds nothing yet.
struct Devices {
    let dir = TemporaryDirectory()
    let phone: LedgerStore
    let tablet: LedgerStore
    let service: StandInService

    init() throws {
        phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        try phone.append(try drafts(dayOne), now: now)
        tablet = try phone.clone(to: dir.path + "/tablet", device: "tablet", now: now)
        service = try StandInService(hub: try LedgerStore.create(at: dir.path + "/hub", device: "hub", ledger: phone.ledgerID))
    }

    var client: SyncServiceClient { SyncServiceClient(baseURL: service.url) }
}

@Suite(.timeLimit(.minutes(5)))
struct SyncServiceClientTests {
    @Test func twoStoresConvergeThroughTheService() async throws {
        let d = try Devices()
        // The phone founded the ledger: the service holds nothing and takes the founder's key.
        let first = try await d.client.sync(d.phone)
        #expect(first.pulled.imported == 0)
        #expect(first.pushed.imported == 3)  // day one and the tablet's enrolment
        #expect(try d.service.hub.lastPosition() == 3)

        try d.tablet.append(try progress(5), now: now)
        let second = try await d.client.sync(d.tablet)
        #expect(second.pulled.imported == 0 && second.pushed.imported == 5)

        try d.phone.append(try progress(2), now: now)
        let third = try await d.client.sync(d.phone)
        #expect(third.pulled.imported == 5 && third.pushed.imported == 2)
        let fourth = try await d.client.sync(d.tablet)
        #expect(fourth.pulled.imported == 2 && fourth.pushed.imported == 0)

        #expect(try d.phone.projection().digest == d.tablet.projection().digest)
        #expect(try d.phone.projection().digest == d.service.hub.projection().digest)
        #expect(try d.phone.originHeads() == ["phone": 5, "tablet": 5])
        #expect(try d.tablet.originHeads() == d.phone.originHeads())

        // In step: a sync is one pull and no push.
        let before = d.service.seen.count
        let idle = try await d.client.sync(d.phone)
        #expect(idle.pulled.imported == 0 && idle.pushed.imported == 0)
        #expect(d.service.seen.dropFirst(before).map(\.request.path) == ["/v1/ledgers/\(d.phone.ledgerID.uuidString)/pull"])
        #expect(try d.phone.verify().isClean && d.tablet.verify().isClean)
    }

    @Test func everyRequestCarriesTheSignatureTheProtocolRequires() async throws {
        let d = try Devices()
        let signedAt = Date(timeIntervalSince1970: 1_795_000_000.75)
        d.service.now = { signedAt }
        let client = SyncServiceClient(baseURL: d.service.url, clock: { signedAt })
        _ = try await client.sync(d.phone)
        _ = try await client.sync(d.tablet)

        let seen = d.service.seen
        let ledger = d.phone.ledgerID.uuidString
        #expect(seen.map(\.request.path) == ["pull", "push", "pull"].map { "/v1/ledgers/\(ledger)/\($0)" })
        let keys = [
            try #require(try d.phone.publicKey()), try #require(try d.phone.publicKey()), try #require(try d.tablet.publicKey()),
        ]
        for (index, (entry, device)) in zip(seen, ["phone", "phone", "tablet"]).enumerated() {
            let request = entry.request
            let verified = try #require(entry.verified, "request \(index) was not verified")
            #expect(request.method == "POST")
            #expect(request.header("ledger") == ledger)
            #expect(request.header("device-key") == StandInService.hex(keys[index]))
            #expect(
                request.header("content-type") == (index == 1 ? "application/x-goal-ledger-changes" : "application/x-goal-ledger-state"))
            let digest = try #require(request.header("content-digest"))
            #expect(digest.hasPrefix("sha-256=:") && digest.hasSuffix(":"))
            #expect(ContentDigest.matches(digest, body: request.body))
            #expect(
                request.header("signature-input")?.hasPrefix(
                    #"sig1=("@method" "@path" "content-digest" "ledger");created=1795000000;keyid=""#) == true)
            #expect(request.header("signature-input")?.contains(#";alg="ed25519";nonce=""#) == true)
            #expect(request.header("signature")?.hasPrefix("sig1=:") == true)
            #expect(verified.label == "sig1")
            #expect(verified.components == ["@method", "@path", "content-digest", "ledger"])
            #expect(verified.keyID == device)
            #expect(verified.created == 1_795_000_000)
            #expect(verified.nonce.count == 32 && verified.nonce.allSatisfy(\.isHexDigit) && verified.nonce == verified.nonce.lowercased())
        }
        #expect(Set(seen.compactMap { $0.verified?.nonce }).count == 3)
        // The pull sends the store's state; the push its change set since the hub's.
        #expect(try SyncState(decoding: seen[0].request.body) == d.phone.syncState())
        #expect(try ChangeSet(decoding: seen[1].request.body).count == 3)
    }

    @Test func refusalsBecomeLedgerErrorsWithTheServicesReason() async throws {
        let d = try Devices()
        let host = "127.0.0.1:\(d.service.port)"

        d.service.force(401, error: "the nonce was seen before")
        let unauthorized = try #require(await ledgerError { _ = try await d.client.sync(d.phone) })
        #expect(unauthorized.code == .store)
        #expect(unauthorized.message.contains("the sync service at \(host) refused the pull of device phone"))
        #expect(unauthorized.message.contains("the nonce was seen before"))

        d.service.force(503, error: "the database is unreachable")
        let unavailable = try #require(await ledgerError { _ = try await d.client.sync(d.phone) })
        #expect(unavailable.code == .store)
        #expect(unavailable.message == "the sync service at \(host) cannot reach its database; nothing was written; try again")

        d.service.force(413, error: "the body is over 8388608 bytes")
        let tooLarge = try #require(await ledgerError { _ = try await d.client.sync(d.phone) })
        #expect(tooLarge.code == .invalidInput)
        #expect(tooLarge.message.contains("too large") && tooLarge.message.contains("the body is over 8388608 bytes"))

        d.service.force(400, error: "not a sync state")
        let malformed = try #require(await ledgerError { _ = try await d.client.sync(d.phone) })
        #expect(malformed.code == .invalidInput)
        #expect(malformed.message.contains("not a sync state"))

        // A real refusal: a store of the ledger whose device nobody enrolled.
        d.service.force(nil)
        _ = try await d.client.sync(d.phone)
        let stranger = try LedgerStore.create(at: d.dir.path + "/stranger", device: "stranger", ledger: d.phone.ledgerID)
        let unknown = try #require(await ledgerError { _ = try await d.client.sync(stranger) })
        #expect(unknown.code == .store)
        #expect(unknown.message.contains("refused the pull of device stranger"))
        #expect(unknown.message.contains("no key is known by the keyid \"stranger\""))

        // A service that does not name its state: nothing is applied or sent.
        d.service.omitState(true)
        try d.tablet.append(try progress(1), now: now)
        let stateless = try #require(await ledgerError { _ = try await d.client.sync(d.tablet) })
        #expect(stateless.code == .store && stateless.message.contains("ledger-state"))
        #expect(try d.tablet.originHeads()["tablet"] == 1)
        #expect(try d.service.hub.originHeads()["tablet"] == nil)
    }

    @Test func aHubStateNamingASequencePastWhatALedgerHoldsIsAClearErrorAndNothingIsSent() async throws {
        let d = try Devices()
        _ = try await d.client.sync(d.phone)
        try d.phone.append(try progress(1), now: now)
        let held = try d.service.hub.syncState()
        var state = held
        state.heads["phone"]?.sequence = 1 << 63
        d.service.answerState(state.encoded())
        let error = try #require(await ledgerError { _ = try await d.client.sync(d.phone) })
        #expect(error.code == .store)
        #expect(error.message.contains("sequence of phone, 9223372036854775808, is past the largest a store holds"), "\(error.message)")
        #expect(error.message.contains("nothing was applied or sent"))
        #expect(try d.service.hub.syncState() == held)
        // The largest sequence a store holds is read as it is (and nothing of it is lacking).
        state.heads["phone"]?.sequence = UInt64(Int64.max)
        d.service.answerState(state.encoded())
        _ = try await d.client.sync(d.phone)
        #expect(try d.service.hub.syncState() == held)
        d.service.answerState(nil)
        _ = try await d.client.sync(d.phone)
        #expect(try d.service.hub.originHeads()["phone"] == d.phone.originHeads()["phone"])
    }

    @Test func aPushOverTheServersBodyLimitIsInvalidInput() async throws {
        let d = try Devices()
        // Room for the phone's state (one origin), not for its three events.
        let small = try StandInService(
            hub: try LedgerStore.create(at: d.dir.path + "/small", device: "hub", ledger: d.phone.ledgerID), maxBodyBytes: 200)
        let error = try #require(await ledgerError { _ = try await SyncServiceClient(baseURL: small.url).sync(d.phone) })
        #expect(error.code == .invalidInput)
        #expect(error.message.contains("refused the push as too large ("))
        #expect(error.message.contains("larger than the 200 bytes this server accepts"))  // the server's text body, quoted
        #expect(small.seen.map { $0.request.path.hasSuffix("/pull") } == [true])
        #expect(try small.hub.lastPosition() == 0)
    }

    @Test func aServiceThatCannotBeReachedIsAStoreErrorWithoutThePassword() async throws {
        let d = try Devices()
        // A port nothing listens on: one a server had, then gave up.
        let closed = try HTTPServer { _ in HTTPResponse(status: 200) }
        let port = closed.port
        closed.stop(gracePeriod: .zero)
        let client = SyncServiceClient(baseURL: URL(string: "http://alice:s3cret@127.0.0.1:\(port)/base/")!)
        let error = try #require(await ledgerError { _ = try await client.sync(d.phone) })
        #expect(error.code == .store)
        #expect(error.message.hasPrefix("cannot reach the sync service at 127.0.0.1:\(port): "))
        #expect(error.reason == .peerUnreachable(peer: "127.0.0.1:\(port)"), "\(String(describing: error.reason))")
        #expect(!error.message.contains("s3cret") && !error.message.contains("alice"))
        #expect(try d.phone.lastPosition() == 3)

        // Plain http leaves this machine only in tests' dreams.
        let remote = SyncServiceClient(baseURL: URL(string: "http://sync.example.org")!)
        let plain = try #require(await ledgerError { _ = try await remote.sync(d.phone) })
        #expect(plain.code == .invalidArgument && plain.message.contains("use https"))
    }

    @Test func aBasePathPrecedesTheProtocolsPaths() async throws {
        let d = try Devices()
        let client = SyncServiceClient(baseURL: URL(string: "http://127.0.0.1:\(d.service.port)/service/")!)
        let error = try #require(await ledgerError { _ = try await client.sync(d.phone) })
        // The stand-in serves at the root only: the path was /service/v1/ledgers/…/pull.
        #expect(error.code == .store && error.message.contains("no pull endpoint"))
        #expect(d.service.seen.map(\.request.path) == ["/service/v1/ledgers/\(d.phone.ledgerID.uuidString)/pull"])
    }

    @Test func aNewDeviceIsKeptUntilEnrolledAndThenSyncs() async throws {
        let d = try Devices()
        _ = try await d.client.sync(d.phone)
        let path = d.dir.path + "/laptop"
        let refusal = try #require(await ledgerError { _ = try await d.client.clone(ledger: d.phone.ledgerID, to: path, device: "laptop") })
        #expect(refusal.code == .store)
        let kept = try LedgerStore.open(at: path)
        let key = try #require(try kept.publicKey())
        #expect(refusal.message.contains("must first be enrolled by an enrolled device"))
        #expect(refusal.message.contains(StandInService.hex(key)))
        #expect(refusal.message.contains("no key is known by the keyid \"laptop\""))
        #expect(!refusal.message.contains("ledger device"))  // no command names in the library
        #expect(try kept.lastPosition() == 0)
        // An app branches on the reason and shows people a text without ids, paths or keys.
        #expect(refusal.reason == .deviceNotEnrolled(device: "laptop", publicKey: key, byService: true))
        #expect(refusal.localizedDescription == "This device is not part of the ledger yet.")
        for text in [refusal.localizedDescription, refusal.failureReason, refusal.recoverySuggestion].compactMap({ $0 }) {
            #expect(!text.contains(StandInService.hex(key)) && !text.contains(path) && !text.contains(d.phone.ledgerID.uuidString))
        }
        // Syncing the kept store before anyone enrolled it says the same.
        let early = try #require(await ledgerError { _ = try await d.client.sync(kept) })
        #expect(early.reason == .deviceNotEnrolled(device: "laptop", publicKey: key, byService: true), "\(early)")
        // The phone, enrolled, refused for another reason keeps the service's status.
        d.service.force(403)
        let other = try #require(await ledgerError { _ = try await d.client.sync(d.phone) })
        #expect(other.reason == .serviceRefused(peer: d.client.serviceName, status: 403), "\(other)")
        d.service.force(nil)

        try d.phone.enrol(device: "laptop", publicKey: key, now: now)
        _ = try await d.client.sync(d.phone)
        let joined = try await d.client.sync(kept)
        #expect(joined.pulled.imported == 4)
        #expect(try kept.projection().digest == d.phone.projection().digest)
        try kept.append(try progress(1), now: now)
        #expect(try await d.client.sync(kept).pushed.imported == 1)
    }

    @Test func aCloneTakesEveryEventTheServiceGives() async throws {
        let d = try Devices()
        _ = try await d.client.sync(d.phone)
        d.service.acceptAnyKey(true)
        let clone = try await d.client.clone(ledger: d.phone.ledgerID, to: d.dir.path + "/watch", device: "watch")
        #expect(clone.device == "watch" && clone.ledgerID == d.phone.ledgerID)
        #expect(try clone.lastPosition() == 3)
        #expect(try clone.projection().digest == d.phone.projection().digest)

        // A failed clone leaves nothing behind.
        d.service.force(503)
        let failed = try #require(
            await ledgerError { _ = try await d.client.clone(ledger: d.phone.ledgerID, to: d.dir.path + "/radio", device: "radio") })
        #expect(failed.code == .store)
        #expect(!FileManager.default.fileExists(atPath: d.dir.path + "/radio"))
    }

    @Test func theCommandLineSyncsAndClonesThroughTheService() throws {
        let d = try Devices()
        let environment = ["TZ": "UTC", "LANG": "C"]
        let url = "http://127.0.0.1:\(d.service.port)"
        let sync = CommandLineTool.run(["--store", d.phone.path, "sync", url], environment: environment, input: { Data() })
        #expect(sync.exitCode == 0, "\(sync.stderr)")
        #expect(sync.stdout == "received 0 events, sent 3\n")

        try d.tablet.append(try progress(2), now: now)
        let viaHub = CommandLineTool.run(
            ["--store", d.tablet.path, "sync", "--json"], environment: environment.merging(["LEDGER_HUB": url]) { $1 }, input: { Data() })
        #expect(viaHub.exitCode == 0, "\(viaHub.stderr)")
        #expect(viaHub.stdout == #"{"pulled":0,"pushed":2,"events":5}"# + "\n")

        let back = CommandLineTool.run(["--store", d.phone.path, "sync", url + "/"], environment: environment, input: { Data() })
        #expect(back.stdout == "received 2 events, sent 0\n")

        // The service refuses: exit 5, the service's reason.
        d.service.force(503)
        let down = CommandLineTool.run(["--store", d.phone.path, "sync", url], environment: environment, input: { Data() })
        #expect(down.exitCode == 5)
        #expect(down.stderr.contains("cannot reach its database; nothing was written; try again"))
        d.service.force(nil)

        // A new device: the store is kept and the message says how to enrol it.
        let laptop = d.dir.path + "/laptop"
        let clone = CommandLineTool.run(
            ["--store", laptop, "clone", url, "--ledger", d.phone.ledgerID.uuidString, "--device", "laptop"], environment: environment,
            input: { Data() })
        #expect(clone.exitCode == 5)
        let key = try #require(try LedgerStore.open(at: laptop).publicKey())
        #expect(clone.stderr.contains("ledger device enrol laptop --key \(StandInService.hex(key))"))
        #expect(clone.stderr.contains("ledger sync \(url)"))

        let withoutLedger = CommandLineTool.run(
            ["--store", d.dir.path + "/pad", "clone", url, "--device", "pad"], environment: environment, input: { Data() })
        #expect(withoutLedger.exitCode == 2)
    }
}
