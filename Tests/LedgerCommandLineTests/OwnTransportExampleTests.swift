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
    await toPeer.send(Data(try local.syncState().encoded()))
    // The peer's side, wherever it runs: answer with what this device lacks, and ask back.
    let asked = try SyncState(decoding: Array(await toPeer.receive()!))
    await fromPeer.send(Data(try peer.changeSet(since: asked).encoded()))
    await fromPeer.send(Data(try peer.syncState().encoded()))
    // This device: apply what came, then send what the peer lacks.
    let changes = try ChangeSet(decoding: Array(await fromPeer.receive()!), source: "the peer")
    let result = try local.apply(changes, from: "the peer")
    let peerState = try SyncState(decoding: Array(await fromPeer.receive()!))
    await toPeer.send(Data(try local.changeSet(since: peerState).encoded()))
    // The peer applies it.
    _ = try peer.apply(try ChangeSet(decoding: Array(await toPeer.receive()!), source: "the device"), from: "the device")
    return result
}

struct OwnTransportExampleTests {
    @Test func twoStoresSyncThroughAnAppsOwnTransport() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-own-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!
        let goal = UUID()
        let phone = try LedgerStore.create(at: dir + "/phone", device: "phone")
        try await phone.append(
            [EventDraft(payload: .goalCreated(GoalCreated(goal: goal, title: "Water", cadence: .daily, progressKind: .measurable, target: 8)))],
            now: now)
        let tablet = try phone.clone(to: dir + "/tablet", device: "tablet", now: now)
        try await phone.append([EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try Amount(2))))], now: now)
        try await tablet.append([EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try Amount(1.5))))], now: now)
        let (toPhone, fromPhone) = (Mailbox(), Mailbox())
        let result = try await syncThroughMailboxes(tablet, peer: phone, toPeer: toPhone, fromPeer: fromPhone)
        #expect(result.imported == 1)
        #expect(try phone.digest() == tablet.digest())
        #expect(try phone.goalState(goal).entries.count == 2)
        // A second round moves nothing new.
        #expect(try await syncThroughMailboxes(tablet, peer: phone, toPeer: toPhone, fromPeer: fromPhone).imported == 0)
        #expect(try phone.verify().isClean && tablet.verify().isClean)
        // A change set of another ledger is refused, naming both ledgers.
        let stranger = try LedgerStore.create(at: dir + "/stranger", device: "phone")
        #expect(throws: LedgerError.self) { try tablet.apply(try stranger.changeSet(since: SyncState(ledger: stranger.ledgerID)), from: "x") }
    }
}
