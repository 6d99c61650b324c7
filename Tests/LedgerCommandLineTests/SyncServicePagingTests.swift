import Foundation
import LedgerService
import LedgerSync
import Testing

@testable import GoalLedger

/// A pull of more than a page is answered in pages, each ending where a signed run ends, and a
/// device follows them to the end, past an origin whose events wait.
struct SyncServicePagingTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

    @Test func aLargePullComesInPagesEndingAtSignedRunsAndTheDeviceGetsEverything() throws {
        let f = try ServiceFixture(configure: { $0.maxPullEvents = 50 }, http: { $0.maxBodyBytes = 8 << 20 })
        let c = SyncServiceClient(baseURL: URL(string: f.base)!)
        let phone = try SyncServiceAttackTests.founder(at: f.hub.path("phone"), now: now)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        // Runs of 1, 60 and 30 events, and one batch longer than a signed run.
        for n in [1, 60, 30, 1, LedgerStore.signedRunLength + 10] { try phone.append(SyncServiceAttackTests.progress(n), now: now) }
        _ = try c.syncBlocking(phone)
        // One page, asked by hand: at least 50 events, ending with a signed event.
        let page = try f.signed(tablet, "pull", body: tablet.syncState().encoded())
        #expect(page.status == 200 && page.headers["ledger-more"] == "true", "\(page.headers)")
        let changes = try ChangeSet(decoding: page.body)
        #expect(changes.count >= 50 && changes.count < 200, "\(changes.count)")
        #expect(changes.events.last?.signature != nil)
        // The long batch carries a signature every signedRunLength events too.
        let signed = try phone.events(missingFrom: [:]).filter { $0.origin == "phone" && $0.signature != nil }.map(\.sequence)
        // (the goal, the tablet's enrolment, four batches, and the long one twice)
        #expect(signed.count == 8, "\(signed)")
        // The device follows the pages to the end.
        let pulls = f.logged.all.filter { $0.contains("/pull") }.count
        let r = try c.syncBlocking(tablet)
        // Everything but the goal and the tablet's enrolment, which the clone brought.
        #expect(r.pulled.imported == Int(try phone.originHeads()["phone"]!) - 2, "\(r.pulled)")
        // Three pages: the runs up to 50 events and more (62), the rest up to the long batch's
        // first signature (a whole run), its last 10.
        #expect(f.logged.all.filter { $0.contains("/pull") }.count - pulls == 3)
        #expect(try tablet.digest() == phone.digest())
        #expect(try tablet.verify().isClean)
    }

    /// Each next page is asked for while the one before it is applied, from the state that
    /// page leaves; when every page applies whole, no request is wasted: the app's `sync` and
    /// the command line's each make one request a page and end with everything.
    @Test func pagesAskedAheadWasteNoRequestWhenEachPageAppliesWhole() async throws {
        let f = try ServiceFixture(configure: { $0.maxPullEvents = 40 })
        let c = SyncServiceClient(baseURL: URL(string: f.base)!)
        let phone = try SyncServiceAttackTests.founder(at: f.hub.path("phone"), now: now)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        let laptop = try phone.clone(to: f.hub.path("laptop"), device: "laptop", now: now)
        for _ in 0..<6 { try phone.append(SyncServiceAttackTests.progress(30), now: now) }
        _ = try c.syncBlocking(phone)
        // Six runs of 30 events, a signature ending each: pages of 60 (two runs reach 40).
        let head = try #require(try phone.originHeads()["phone"])
        var pulls = f.logged.all.filter { $0.contains("/pull") }.count
        var before = try tablet.originHeads()["phone"] ?? 0
        let r = try await c.sync(tablet)
        #expect(r.pulled.imported == Int(head - before), "\(r.pulled)")
        #expect(f.logged.all.filter { $0.contains("/pull") }.count - pulls == 3)
        #expect(try tablet.digest() == phone.digest())
        pulls = f.logged.all.filter { $0.contains("/pull") }.count
        before = try laptop.originHeads()["phone"] ?? 0
        let blocking = try c.syncBlocking(laptop)
        #expect(blocking.pulled.imported == Int(head - before), "\(blocking.pulled)")
        #expect(f.logged.all.filter { $0.contains("/pull") }.count - pulls == 3)
        #expect(try laptop.digest() == phone.digest())
        #expect(try laptop.verify().isClean)
    }

    @Test func anOriginWhoseEventsWaitDoesNotHideTheOriginsAfterIt() throws {
        let f = try ServiceFixture(configure: { $0.maxPullEvents = 20 })
        let c = SyncServiceClient(baseURL: URL(string: f.base)!)
        let phone = try SyncServiceAttackTests.founder(at: f.hub.path("phone"), now: now)
        let tablet = try phone.clone(to: f.hub.path("tablet"), device: "tablet", now: now)
        _ = try c.syncBlocking(phone)
        // 60 unreadable rows of an origin that sorts first, written by a hub role.
        for sequence in 1...60 {
            let id = UUID()
            _ = try f.hub.admin().query(
                "INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record) VALUES ($1, 'aaa', $2, $3, $4, $5)",
                [
                    .uuid(phone.ledgerID), .int64(Int64(sequence)), .uuid(id), .int64(Int64(sequence)),
                    .bytea([2, 0, 0, 0, 0] + id.bytes + UInt64(sequence).bigEndianBytes + Array("garbage".utf8)),
                ])
        }
        for _ in 0..<3 { try phone.append(SyncServiceAttackTests.progress(30), now: now) }
        _ = try c.syncBlocking(phone)
        let pulls = f.logged.all.filter { $0.contains("/pull") }.count
        let r = try c.syncBlocking(tablet)
        #expect(r.pulled.imported == 90, "\(r.pulled)")
        // A page of the unreadable origin, then the phone's from past it.
        #expect(f.logged.all.filter { $0.contains("/pull") }.count - pulls >= 3)
        #expect(try tablet.digest() == phone.digest())
    }
}
