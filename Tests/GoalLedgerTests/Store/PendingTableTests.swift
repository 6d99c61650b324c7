import Foundation
import Testing

@testable import GoalLedger

/// The stored pending table: after any history it equals a fresh computation, and reading it
/// gives the plan the pure policy computes from the whole projection.
struct PendingTableTests {
    static let devices = ["phone", "tablet", "watch"]
    static let base: Int64 = 1_793_602_800_000  // 2026-11-02T07:00:00Z

    /// Random events of three devices (facts: no business rule enforced), with routing,
    /// authorizations, both strategies, small capacities and dated progress near the moments
    /// the plans are read at.
    static func events(seed: UInt64, count: Int) -> [Event] {
        var rng = SeededRandom(seed: seed)
        let goals = (0..<5).map { _ in rng.uuid() }
        var recorded: [UUID] = []
        var clock: [String: UInt64] = [:]
        var sequence: [String: UInt64] = [:]
        var out: [Event] = []
        func day(_ offset: Int) -> Day { Instant(milliseconds: base).day(in: GoalState.utc).adding(days: offset) }
        func someDevices(_ rng: inout SeededRandom) -> [String]? {
            rng.next() % 3 == 0 ? nil : Array(devices.filter { _ in rng.next() % 2 == 0 }.prefix(2)).nilIfEmpty ?? ["phone"]
        }
        for i in 0..<count {
            let device = devices.randomElement(using: &rng)!
            let goal = goals.randomElement(using: &rng)!
            let id = rng.uuid()
            let ms = base + Int64(i) * 60_000
            var hlc = HLC(milliseconds: ms, counter: 0)
            if let last = clock[device], hlc.rawValue <= last { hlc = HLC(rawValue: last + 1) }
            clock[device] = hlc.rawValue
            sequence[device, default: 0] += 1
            let at = Instant(milliseconds: ms)
            let payload: Payload
            switch rng.next() % 14 {
            case 0, 1:
                let measurable = rng.next() % 2 == 0
                let cadence = Cadence.allCases.randomElement(using: &rng)!
                let reminder = rng.next() % 4 == 0 ? nil : ReminderTime(unchecked: Int(rng.next() % 24), 30)
                payload = .goalCreated(
                    GoalCreated(
                        goal: goal, title: "goal \(i)", cadence: cadence,
                        targetDate: rng.next() % 4 == 0 ? nil : day(Int(rng.next() % 9) - 2),
                        progressKind: measurable ? .measurable : .outcome, target: measurable ? try! Amount("3") : nil, reminder: reminder,
                        reminderDevices: reminder == nil ? nil : someDevices(&rng)))
            case 2:
                var e = GoalEdited(goal: goal, replaces: [:])
                if rng.next() % 2 == 0 { e.title = "title \(i)" }
                if rng.next() % 2 == 0 { e.cadence = Cadence.allCases.randomElement(using: &rng)! }
                if rng.next() % 2 == 0 || e.changedFields.isEmpty {
                    e.targetDate = .some(rng.next() % 3 == 0 ? nil : day(Int(rng.next() % 9) - 2))
                }
                payload = .goalEdited(e)
            case 3: payload = .goalDeleted(GoalRegisterWrite(goal: goal))
            case 4: payload = .goalRestored(GoalRegisterWrite(goal: goal))
            case 5, 6, 7:
                let d = day(Int(rng.next() % 9) - 3)
                payload = .progressRecorded(
                    rng.next() % 2 == 0
                        ? ProgressRecorded(goal: goal, amount: try! Amount(whole: Int64(rng.next() % 3)), occurredAt: at, day: d)
                        : ProgressRecorded(goal: goal, completed: rng.next() % 3 != 0, occurredAt: at, day: d))
                recorded.append(id)
            case 8:
                payload = .progressRemoved(ProgressRemoved(goal: goal, entry: recorded.randomElement(using: &rng) ?? rng.uuid()))
            case 9:
                payload =
                    rng.next() % 3 == 0
                    ? .reminderCleared(GoalRegisterWrite(goal: goal))
                    : .reminderSet(ReminderSet(goal: goal, hour: Int(rng.next() % 24), minute: 0, devices: someDevices(&rng)))
            case 10, 11:
                payload = .notificationAuthorization(
                    NotificationAuthorization(status: AuthorizationStatus.allCases.randomElement(using: &rng)!))
            default:
                payload = .deviceConfigured(
                    DeviceConfigured(
                        timeZone: ["UTC", "Asia/Tokyo", "Europe/Berlin"].randomElement(using: &rng)!, firstWeekday: Int(rng.next() % 7) + 1,
                        locale: ["en_US", "ja_JP"].randomElement(using: &rng)!, strategy: rng.next() % 2 == 0 ? .repeating : .window,
                        windowDays: Int(rng.next() % 6) + 1, capacity: Int(rng.next() % 6) + 1))
            }
            out.append(Event(id: id, origin: device, sequence: sequence[device]!, hlc: hlc, at: at, schema: 2, payload: payload))
        }
        return out
    }

    /// The plan the pure policy computes from a fresh replay.
    static func expected(_ store: LedgerStore, device: String, now: Instant) throws -> ReminderPlan {
        let p = try store.replay()
        return ReminderPlan.plan(
            goals: p.existingGoals, device: p.device(device), now: now, routing: ReminderRouting(devices: p.devices.values))
    }

    @Test(arguments: 0..<24)
    func theTableAfterARandomHistoryEqualsAFreshComputation(_ seed: Int) throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        let events = Self.events(seed: UInt64(seed) &+ 7, count: 90)
        var start = 0
        var rng = SeededRandom(seed: UInt64(seed))
        var requests = 0
        var windowRequests = 0
        while start < events.count {
            let end = min(events.count, start + 1 + Int(rng.next() % 12))
            _ = try t.store.importEvents(Array(events[start..<end]), from: "test")
            start = end
            let report = try t.store.verify()
            #expect(report.isClean, "seed \(seed) after \(end) events: \(report.problems.prefix(3))")
            for offset in [-86_400_000, 0, 3 * 86_400_000 + 3_600_000] as [Int64] {
                let now = Instant(milliseconds: Self.base + Int64(end) * 60_000 + offset)
                for device in Self.devices + ["laptop"] {
                    let stored = try t.store.pendingPlan(device: device, now: now).1
                    requests += stored.requests.count
                    windowRequests += stored.requests.filter { $0.id.count > 50 }.count
                    #expect(stored == (try Self.expected(t.store, device: device, now: now)), "seed \(seed), \(device) at \(now.rfc3339)")
                }
            }
        }
        // The history exercised the table (both strategies).
        #expect(requests > 0 && windowRequests > 0, "seed \(seed): \(requests) requests, \(windowRequests) dated")
        // A rebuild writes the same tables.
        try t.store.rebuild()
        #expect(try t.store.verify().isClean)
    }

    /// An entry's stored duplicate read in place (`verify`'s walk) gives the entry back, as the
    /// row's key and value read apart do; a history write's duplicate gives none; any shorter
    /// duplicate, or one on a day no event can be on, is refused with an error, never read past
    /// its end.
    @Test(arguments: 0..<6)
    func anEntrysDuplicateReadInPlaceIsTheEntry(_ seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &+ 311)
        let goal = rng.uuid()
        for n in 0..<200 {
            let hlc = HLC(rawValue: rng.next() >> UInt64(n % 40))
            let amount: Amount? = n % 3 == 0 ? nil : Amount(unchecked: Int128(Int64(bitPattern: rng.next()) % 1_000_000_000_000))
            let e = ProgressEntry(
                id: rng.uuid(), amount: amount, completed: n % 3 == 0 ? n % 2 == 0 : (n % 5 == 0 ? true : nil),
                occurredAt: Instant(milliseconds: hlc.milliseconds &+ Int64(bitPattern: rng.next()) % 86_400_000),
                day: Day(daysSinceEpoch: Int32(rng.next() % UInt64(Day.supported.upperBound.daysSinceEpoch + 1))),
                device: String(repeating: "d", count: n % 70), hlc: hlc)
            var w = ByteWriter()
            PendingTable.writeEntryDuplicate(goal: goal, e, into: &w)
            let read = try w.bytes.withUnsafeBytes { try PendingTable.entry(duplicate: $0) }
            #expect(read == e)
            let apart = try PendingTable.entryKey(goal: goal, e).withUnsafeBytes { k in
                try PendingTable.entryValue(e).withUnsafeBytes { v in try PendingTable.entry(key: k, value: v) }
            }
            #expect(apart == e)
            // The same entry on a day no event can be on (before 1970, after 9999) is refused.
            var outside = e
            outside.day = Day(daysSinceEpoch: n % 2 == 0 ? -1 - Int32(n) : Day.supported.upperBound.daysSinceEpoch + 1 + Int32(n))
            var o = ByteWriter()
            PendingTable.writeEntryDuplicate(goal: goal, outside, into: &o)
            #expect(throws: RecordDecodingError.self) { try o.bytes.withUnsafeBytes { try PendingTable.entry(duplicate: $0) } }
            for cut in [0, 1, PendingTable.EntryKey.headSize - 1, PendingTable.EntryKey.headSize] {
                #expect(throws: RecordDecodingError.self) { try w.bytes.prefix(cut).withUnsafeBytes { try PendingTable.entry(duplicate: $0) } }
            }
        }
        var history = ByteWriter()
        PendingTable.writeHistoryDuplicate(goal: goal, event: rng.uuid(), CanonicalKey(hlc: HLC(rawValue: 9), device: "phone"), into: &history)
        #expect(try history.bytes.withUnsafeBytes { try PendingTable.entry(duplicate: $0) } == nil)
    }

    @Test func routingFollowsTheNamedDevicesAndFallsBackWhenNoneIsAuthorized() throws {
        let t = try TemporaryStore(device: "laptop", signed: false)
        let now = instant("2026-11-05T12:00:00Z")
        let goal = goalID(1)
        func event(_ device: String, _ seq: UInt64, _ payload: Payload) -> Event {
            Event(
                id: UUID(), origin: device, sequence: seq, hlc: HLC(milliseconds: now.milliseconds - 10_000 + Int64(seq) * 100, counter: 0),
                at: Instant(milliseconds: now.milliseconds - 10_000), schema: 2, payload: payload)
        }
        _ = try t.store.importEvents(
            [
                event("phone", 1, .notificationAuthorization(NotificationAuthorization(status: .authorized))),
                event(
                    "phone", 2,
                    .goalCreated(GoalCreated(goal: goal, title: "Run", cadence: .daily, reminder: .default, reminderDevices: ["phone"]))),
                event("tablet", 1, .notificationAuthorization(NotificationAuthorization(status: .authorized))),
            ], from: "test")
        func ids(_ device: String) throws -> [String] { try t.store.pendingPlan(device: device, now: now).1.requests.map(\.id) }
        let rid = "goal-reminder-" + goal.uuidString
        #expect(try ids("phone") == [rid])
        #expect(try ids("tablet").isEmpty)
        // The phone denies: every authorized device takes over.
        _ = try t.store.importEvents(
            [event("phone", 3, .notificationAuthorization(NotificationAuthorization(status: .denied)))], from: "test")
        #expect(try ids("phone") == [rid])  // its table still holds it; its reconciler cancels under denial
        #expect(try ids("tablet") == [rid])
        #expect(try ids("laptop").isEmpty)  // never authorized
        // Allowed again: the tablet's row goes.
        _ = try t.store.importEvents(
            [event("phone", 4, .notificationAuthorization(NotificationAuthorization(status: .provisional)))], from: "test")
        #expect(try ids("tablet").isEmpty)
        // A reminder set without devices goes to every device again.
        _ = try t.store.importEvents([event("phone", 5, .reminderSet(ReminderSet(goal: goal, hour: 9, minute: 0)))], from: "test")
        #expect(try ids("tablet") == [rid])
        #expect(try t.store.verify().isClean)
    }

    @Test func verifyFindsAPendingRowThatDiffersFromAFreshComputation() throws {
        let t = try TemporaryStore()
        let now = instant("2026-11-05T12:00:00Z")
        try t.store.append(
            try drafts([
                #"{"type":"notificationAuthorization","status":"authorized"}"#,
                #"{"type":"goalCreated","goal":"\#(goalID(1).uuidString)","title":"Run","cadence":"daily","reminder":{"hour":7}}"#,
            ]), now: now)
        #expect(try t.store.verify().isClean)
        try t.store.writeTransaction { txn in
            let tables = try txn.activeProjection()
            _ = try txn.delete(tables.pending, key: PendingTable.rowKey(device: "phone", goal: goalID(1)))
        }
        #expect(try t.store.verify().problems == ["projection pending: 0 rows stored, a fresh replay has 1"])
        try t.store.writeTransaction { txn in
            let tables = try txn.activeProjection()
            try txn.put(tables.pending, key: PendingTable.rowKey(device: "phone", goal: goalID(2)), value: [1])
        }
        let problems = try t.store.verify().problems
        #expect(
            problems.contains("projection pending: device phone request goal-reminder-\(goalID(2).uuidString) is not in a fresh replay"),
            "\(problems)")
        // A rebuild repairs it.
        try t.store.rebuild()
        #expect(try t.store.verify().isClean)
        #expect(try t.store.pendingPlan(device: "phone", now: now).1.requests.map(\.goal) == [goalID(1)])
    }

    @Test func eventsWithoutDevicesKeepTheirBinaryForm() throws {
        // Golden records: a goal with a reminder and a reminderSet, without devices, are encoded
        // as before routing existed (no new presence bit, no new bytes).
        let goal = UUID(uuidString: "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1")!
        func record(_ p: Payload) -> String {
            EventCodec.encode(
                Event(
                    id: goal, origin: "phone", sequence: 1, hlc: HLC(milliseconds: 1_000, counter: 0), at: Instant(milliseconds: 1_000),
                    schema: 2, payload: p)
            ).dropFirst(5).map { String(format: "%02x", $0) }.joined()
        }
        let envelope = "0b5e2a8c6c1f4e0b9c528d0c6b0e51a1" + "0000000003e80000" + "d00f" + "01" + "0570686f6e65" + "02"
        #expect(
            record(.goalCreated(GoalCreated(goal: goal, title: "Run", cadence: .daily, reminder: ReminderTime(unchecked: 7, 30))))
                == envelope + "01" + "10" + "0b5e2a8c6c1f4e0b9c528d0c6b0e51a1" + "0352756e" + "01" + "00" + "071e" + "00")
        #expect(
            record(.reminderSet(ReminderSet(goal: goal, hour: 18, minute: 0)))
                == envelope + "05" + "03" + "0b5e2a8c6c1f4e0b9c528d0c6b0e51a1" + "12" + "00")
        // With devices, a new presence bit announces the list.
        let routed = Event(
            id: goal, origin: "phone", sequence: 1, hlc: HLC(milliseconds: 1_000, counter: 0), at: Instant(milliseconds: 1_000), schema: 2,
            payload: .reminderSet(ReminderSet(goal: goal, hour: 18, minute: 0, devices: ["phone", "watch"])))
        #expect(try EventCodec.decode(EventCodec.encode(routed)) == routed)
    }
}

extension Array {
    var nilIfEmpty: Self? { isEmpty ? nil : self }
}
