import Foundation
import Testing

@testable import GoalLedger

/// The library's side of a damaged store: the page walk finds nothing in healthy stores (after
/// appends, large sets of duplicates, a rebuild, a clone and syncs), a file cut short is a
/// `LedgerError` (never SIGBUS), and `recover` builds a store from what is readable and a peer.
struct DamageRecoveryTests {
    let now = instant("2026-11-05T12:00:00Z")

    func progress(_ n: Int) throws -> [EventDraft] {
        try drafts((0..<n).map { _ in #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":1}"# })
    }

    func ids(_ store: LedgerStore) throws -> Set<UUID> {
        Set(try store.read { try $0.events(missingFrom: [:]) }.map(\.id))
    }

    @Test func healthyStoresHaveNoDamagedPageAndSalvageWhole() throws {
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        try phone.write { try $0.append(try drafts(dayOne), now: now) }
        for _ in 0..<6 { try phone.write { try $0.append(try progress(700), now: now) } }
        try phone.rebuild()
        let laptop = try phone.clone(to: dir.path + "/laptop", device: "laptop", now: now)
        try laptop.write { try $0.append(try progress(300), now: now) }
        _ = try laptop.sync(with: phone)
        for store in [phone, laptop] {
            #expect(try LedgerStore.checkPages(at: store.path).isEmpty, "\(store.path)")
            let s = try LedgerStore.salvage(at: store.path)
            #expect(s.events.count == Int(try store.read { try $0.lastPosition() }))
            #expect(s.damage.isEmpty && s.missingPositions.isEmpty && s.damagedRecords.isEmpty)
            #expect(s.ledgerID == store.ledgerID && s.device == store.device)
        }
    }

    @Test func aFileCutShortIsADamagedStoreAndRecoversFromAPeer() throws {
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        try phone.write { try $0.append(try drafts(dayOne), now: now) }
        try phone.write { try $0.append(try progress(400), now: now) }
        let laptop = try phone.clone(to: dir.path + "/laptop", device: "laptop", now: now)
        try laptop.write { try $0.append(try progress(100), now: now) }
        _ = try laptop.sync(with: phone)
        try phone.write { try $0.append(try progress(50), now: now) }  // not synced

        // A copy of the phone's files, its data file cut to half.
        let cut = dir.path + "/cut"
        try FileManager.default.createDirectory(atPath: cut, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        for file in ["data.mdb", "device.key"] {
            try FileManager.default.copyItem(atPath: phone.path + "/" + file, toPath: cut + "/" + file)
        }
        let size = try FileManager.default.attributesOfItem(atPath: cut + "/data.mdb")[.size] as! Int
        #expect(truncate(cut + "/data.mdb", off_t(size / 2)) == 0)

        do {
            _ = try LedgerStore.open(at: cut)
            Issue.record("a store cut short opened")
        } catch {
            #expect(error.code == .store)
            #expect(error.message.contains("is damaged at") && error.message.contains("restore a backup or recover"), "\(error.message)")
            if case .fileDamaged? = error.reason {} else { Issue.record("reason \(String(describing: error.reason))") }
        }
        #expect(!(try LedgerStore.checkPages(at: cut)).isEmpty)

        let before = try Data(contentsOf: URL(fileURLWithPath: cut + "/data.mdb"))
        let peer = try laptop.read { try $0.changeSet(since: SyncState(ledger: laptop.ledgerID)) }
        let (recovered, report) = try LedgerStore.recover(from: cut, to: dir.path + "/recovered", sources: [("laptop", peer)])
        #expect(try Data(contentsOf: URL(fileURLWithPath: cut + "/data.mdb")) == before)
        #expect(recovered.device == "phone" && recovered.ledgerID == phone.ledgerID)
        #expect(try recovered.read { try $0.verify() }.isClean)
        #expect(try ids(laptop).isSubset(of: try ids(recovered)))
        #expect(report.sources.first?.events == peer.count)
        // The device's own key signs on: the recovered store is the same device.
        #expect(
            try recovered.keys.key(ledger: recovered.ledgerID, device: "phone")?.publicKey
                == (try phone.keys.key(ledger: phone.ledgerID, device: "phone")?.publicKey))
    }
}
