import Foundation
import GoalLedger
import Testing

// The example of the article "Syncing through your own transport", compiled and run: a
// transport that carries sync states and change sets as `Data`, with the public API only.

/// An app's own way of moving bytes between two devices (its server, a cloud container, a
/// file): here, an in-memory mailbox.
actor Mailbox {
    private var messages: [Data] = []
    func send(_ data: Data) { messages.append(data) }
    func receive() -> Data? { messages.isEmpty ? nil : messages.removeFirst() }
}

/// One round of sync between `local` and a peer that is reached only through `toPeer` and
/// `fromPeer`: the local state goes out, the peer's change set comes back and is applied, and
/// what the peer lacks goes out.
func syncThroughMailboxes(_ local: LedgerStore, peer: LedgerStore, toPeer: Mailbox, fromPeer: Mailbox) async throws -> ImportResult {
    // This device: "here is what I hold".
    let holds = try await local.read { try $0.syncState() }
    await toPeer.send(Data(holds.encoded()))
    // The peer's side, wherever it runs: answer with what this device lacks, and ask back
    // (both read from one snapshot of the peer).
    let asked = try SyncState(decoding: Array(await toPeer.receive()!))
    let (answer, peerHolds) = try await peer.read { snapshot in
        (try snapshot.changeSet(since: asked), try snapshot.syncState())
    }
    await fromPeer.send(Data(answer.encoded()))
    await fromPeer.send(Data(peerHolds.encoded()))
    // This device: apply what came, then send what the peer lacks.
    let changes = try ChangeSet(decoding: Array(await fromPeer.receive()!), source: "the peer")
    let result = try await local.write { try $0.apply(changes, from: "the peer") }
    let peerState = try SyncState(decoding: Array(await fromPeer.receive()!))
    let lacking = try await local.read { try $0.changeSet(since: peerState) }
    await toPeer.send(Data(lacking.encoded()))
    // The peer applies it.
    let offered = try ChangeSet(decoding: Array(await toPeer.receive()!), source: "the device")
    try await peer.write { try $0.apply(offered, from: "the device") }
    return result
}

struct OwnTransportExampleTests {
    @Test func twoStoresSyncThroughAnAppsOwnTransport() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-own-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!
        let goal = UUID()
        let phone = try LedgerStore.create(at: dir + "/phone", device: "phone")
        try await phone.write {
            try $0.append(
                [EventDraft(payload: .goalCreated(GoalCreated(goal: goal, title: "Water", cadence: .daily, progressKind: .measurable, target: try! Amount("8"))))],
                now: now)
        }
        let tablet = try phone.clone(to: dir + "/tablet", device: "tablet", now: now)
        let (two, oneAndAHalf) = (try Amount(2), try Amount(1.5))
        try await phone.write { try $0.append([EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: two)))], now: now) }
        try await tablet.write {
            try $0.append([EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: oneAndAHalf)))], now: now)
        }
        let (toPhone, fromPhone) = (Mailbox(), Mailbox())
        let result = try await syncThroughMailboxes(tablet, peer: phone, toPeer: toPhone, fromPeer: fromPhone)
        #expect(result.imported == 1)
        let (phoneDigest, entries) = try await phone.read { (try $0.digest(), try $0.goalState(goal).entries.count) }
        #expect(try await phoneDigest == tablet.read { try $0.digest() })
        #expect(entries == 2)
        // A second round moves nothing new.
        #expect(try await syncThroughMailboxes(tablet, peer: phone, toPeer: toPhone, fromPeer: fromPhone).imported == 0)
        #expect(try await phone.read { try $0.verify() }.isClean)
        #expect(try await tablet.read { try $0.verify() }.isClean)
        // A change set of another ledger is refused, naming both ledgers.
        let stranger = try LedgerStore.create(at: dir + "/stranger", device: "phone")
        let foreign = try await stranger.read { try $0.changeSet(since: SyncState(ledger: stranger.ledgerID)) }
        await #expect(throws: LedgerError.self) { try await tablet.write { try $0.apply(foreign, from: "x") } }
    }
}
