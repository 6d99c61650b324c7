import Foundation
import LedgerTestSupport
import Sodium
import Testing

@testable import GoalLedger

/// An event's clock lies within the years the ledger supports: one past them waits at the door,
/// moves no clock, and a store that holds one (written before the bound) keeps appending.
struct ClockBoundTests {
    let now = instant("2026-11-05T12:00:00Z")

    /// A phone and a laptop cloned from it; the laptop enrols a watch with `thief`'s key, known to
    /// both stores.
    static func ledger(_ dir: TemporaryDirectory, thief: SigningKey, at now: Instant) throws -> (LedgerStore, LedgerStore) {
        let s = try TrustAttackTests.ledger(dir, [("laptop", "phone")], at: now)
        let (phone, laptop) = (s["phone"]!, s["laptop"]!)
        _ = try laptop.writing { try $0.enrol(device: "watch", key: thief.publicKey, from: 1, now: now) }
        _ = try phone.sync(with: laptop)
        return (phone, laptop)
    }

    /// Writes `e` into `store` around every check, as a store written before clocks were bounded
    /// holds it: in the log, the indexes, the projection and the store's clock.
    static func writeAroundTheGate(_ e: Event, into store: LedgerStore) throws {
        try store.writeTransaction { txn in
            let layout = store.layout
            let position = try txn.lastPosition() + 1
            try txn.index([e], records: [EventCodec.encode(e)], order: [0], from: position)
            try txn.put(layout.originHeads, key: Array(e.origin.utf8), value: e.sequence.bigEndianBytes)
            var batch = StoredProjection.Batch(tables: try txn.activeProjection(), layout: layout)
            _ = try batch.apply(e, at: position, txn)
            try txn.finish(&batch, clock: e.hlc, through: position)
        }
    }

    @Test func aClockPastTheSupportedYearsWaitsAtTheDoorAndMovesNoClock() throws {
        let dir = TemporaryDirectory()
        let thief = SigningKey.generate()
        let (phone, laptop) = try Self.ledger(dir, thief: thief, at: now)
        let forged = try Forger.next(
            .tagAdded(TagAdded(goal: TrustAttackTests.goal, tag: "late")), origin: "watch", after: phone, key: thief, clock: .max)
        #expect(forged.hlc.rawValue == .max)
        #expect(throws: FieldError.self) { try forged.checkWellFormed() }
        let clock = try phone.clock()
        let result = try phone.importEvents([forged], from: "a stolen watch")
        #expect(result.imported == 0)
        #expect(result.waiting.first?.origin == "watch")
        #expect(result.waiting.first?.reason.contains("hlc") == true, "\(result.waiting)")
        #expect(try phone.clock() == clock)
        #expect(try phone.goalState(TrustAttackTests.goal).tags.isEmpty)
        // The store keeps appending, its clock from the wall, and syncs with its peer.
        try phone.append(TrustAttackTests.progress(2), now: now)
        #expect(try phone.clock() > clock && phone.clock().isSupported)
        _ = try phone.sync(with: laptop)
        #expect(try laptop.digest() == phone.digest())
    }

    @Test func theLatestSupportedClockIsAcceptedAndTheNextStepIsARefusalNotATrap() throws {
        let dir = TemporaryDirectory()
        let thief = SigningKey.generate()
        let (phone, _) = try Self.ledger(dir, thief: thief, at: now)
        let forged = try Forger.next(
            .tagAdded(TagAdded(goal: TrustAttackTests.goal, tag: "last")), origin: "watch", after: phone, key: thief,
            clock: HLC.latest.rawValue)
        #expect(try phone.importEvents([forged], from: "test").imported == 1)
        #expect(try phone.clock() == HLC.latest)
        // No later reading exists: the append is refused with a ledger error, the store unchanged.
        let last = try phone.lastPosition()
        #expect(throws: LedgerError.self) { try phone.append(TrustAttackTests.progress(2), now: now) }
        #expect(try phone.lastPosition() == last)
        #expect(HLC(rawValue: .max).advanced(to: now) == HLC(rawValue: .max))
    }

    @Test func aStoreHoldingAClockPastTheSupportedYearsKeepsAppendingAndSyncing() throws {
        let dir = TemporaryDirectory()
        let thief = SigningKey.generate()
        let (phone, laptop) = try Self.ledger(dir, thief: thief, at: now)
        let before = try laptop.clock()
        let forged = try Forger.next(
            .tagAdded(TagAdded(goal: TrustAttackTests.goal, tag: "late")), origin: "watch", after: laptop, key: thief, clock: .max)
        try Self.writeAroundTheGate(forged, into: laptop)
        #expect(try laptop.event(origin: "watch", sequence: 1)?.hlc.rawValue == .max)
        // The reading past the bound is ignored: the clock is the latest supported one held.
        #expect(try laptop.clock() == before)
        try laptop.append(TrustAttackTests.progress(3), now: now)
        try laptop.append(TrustAttackTests.progress(4), now: now)
        let clock = try laptop.clock()
        #expect(clock > before && clock.isSupported)
        // Through sync: the laptop's new events reach the phone; the forged one waits there, named.
        let result = try phone.sync(with: laptop)
        #expect(result.pulled.waiting.contains { $0.origin == "watch" && $0.reason.contains("hlc") }, "\(result.pulled.waiting)")
        #expect(try phone.goalState(TrustAttackTests.goal).entries.count == 2)
        try phone.append(TrustAttackTests.progress(5), now: now)
        _ = try phone.sync(with: laptop)
        #expect(try laptop.goalState(TrustAttackTests.goal).entries.count == 3)
        #expect(try phone.clock().isSupported)
    }
}
