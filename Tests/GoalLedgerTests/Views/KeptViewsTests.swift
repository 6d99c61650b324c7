import Foundation
import LMDB
import Testing

@testable import GoalLedger

/// The views a store keeps with its projection (per goal and day, a summary of the live
/// entries; per goal, its runs of completed periods) give exactly the view folded from the
/// entries, whatever the history, the order it arrived in, and the calendar.
struct KeptViewsTests {
    static let start = instant("2026-09-01T00:00:00Z")

    /// Events of several devices over about 80 days: goals of every cadence and kind, entries
    /// (some negative, some fractional, some dated ahead), removals (some arriving before their
    /// entry), edits of cadence and target, deletions, and changes of the store device's first
    /// weekday and time zone.
    static func history(seed: UInt64, count: Int, ownDevice: String) -> [Event] {
        var rng = SeededRandom(seed: seed)
        let devices = [ownDevice, "tablet", "watch"]
        let goals = (0..<5).map { _ in rng.uuid() }
        var recorded: [UUID] = []
        var sequence: [String: UInt64] = [:]
        var clock: [String: UInt64] = [:]
        var out: [Event] = []
        var planned = goals
        for i in 0..<count {
            let device = devices[Int(rng.next() % 3)]
            let goal = goals[Int(rng.next() % 5)]
            let id = rng.uuid()
            let ms = start.milliseconds + Int64(i) * 80 * 86_400_000 / Int64(count) + Int64(rng.next() % 3_600_000)
            var hlc = HLC(milliseconds: ms, counter: 0)
            if let last = clock[device], hlc.rawValue <= last { hlc = HLC(rawValue: last + 1) }
            clock[device] = hlc.rawValue
            sequence[device, default: 0] += 1
            let at = Instant(milliseconds: ms)
            let payload: Payload
            let roll = rng.next() % 20
            if let n = goals.firstIndex(of: goal), planned.contains(goal), roll < 2 || i < 5 {
                planned.removeAll { $0 == goal }
                let measurable = n % 2 == 0
                payload = .goalCreated(
                    GoalCreated(
                        goal: goal, title: "goal \(n)", details: nil, cadence: [.daily, .weekly, .monthly, .yearly, .once][n],
                        targetDate: nil, progressKind: measurable ? .measurable : .outcome, target: measurable ? try! Amount("2.5") : nil, unit: nil,
                        reminder: nil, tags: []))
            } else {
                switch roll {
                case 0...10:
                    // Entries: mostly near their time, some dated days back or ahead.
                    let shift = rng.next() % 5 == 0 ? Int64(rng.next() % 21) - 10 : 0
                    let occurred = Instant(milliseconds: ms + shift * 86_400_000)
                    let amounts: [Amount] = [1, 2, 0.5, 0.1, 0.2, -1, 3.000001]
                    payload = .progressRecorded(
                        ProgressRecorded(
                            goal: goal, amount: rng.next() % 2 == 0 ? amounts[Int(rng.next() % 7)] : nil,
                            completed: rng.next() % 2 == 0 ? rng.next() % 3 != 0 : nil, occurredAt: occurred,
                            day: occurred.day(in: TimeZone(identifier: rng.next() % 2 == 0 ? "UTC" : "Pacific/Kiritimati")!)))
                    recorded.append(id)
                case 11, 12:
                    // A removal, now and then of an entry still to come.
                    let entry = rng.next() % 6 == 0 ? UUID() : recorded.randomElement(using: &rng) ?? UUID()
                    payload = .progressRemoved(ProgressRemoved(goal: goal, entry: entry))
                case 13:
                    var e = GoalEdited(goal: goal, replaces: [:])
                    if rng.next() % 2 == 0 { e.cadence = Cadence.allCases.randomElement(using: &rng)! }
                    if rng.next() % 2 == 0 { e.target = [1, 2.5, 4][Int(rng.next() % 3)] }
                    if e.cadence == nil && e.target == nil { e.title = "edited \(i)" }
                    payload = .goalEdited(e)
                case 14:
                    payload =
                        rng.next() % 2 == 0 ? .goalDeleted(GoalRegisterWrite(goal: goal)) : .goalRestored(GoalRegisterWrite(goal: goal))
                case 15, 16:
                    payload = .deviceConfigured(
                        DeviceConfigured(
                            timeZone: ["UTC", "Asia/Tokyo", "America/New_York"][Int(rng.next() % 3)], firstWeekday: Int(rng.next() % 7) + 1,
                            locale: "en_US", strategy: .repeating, windowDays: 7, capacity: 64))
                default:
                    payload = .tagAdded(TagAdded(goal: goal, tag: "t"))
                }
            }
            out.append(Event(id: id, origin: device, sequence: sequence[device]!, hlc: hlc, at: at, schema: 2, payload: payload))
        }
        return out
    }

    /// The kept view of every goal equals the folded one at several moments (read through the
    /// kept rows, checked to be used: they are never bypassed here).
    static func expectKeptViewsMatch(_ store: LedgerStore, _ label: String) throws {
        let projection = try store.replay()
        let calendar = projection.device(store.device).calendar
        let moments = [
            "2026-08-20T10:00:00Z", "2026-09-15T23:30:00Z", "2026-10-04T05:00:00Z", "2026-11-19T12:00:00Z", "2027-02-01T00:00:00Z",
        ]
        for text in moments {
            let now = instant(text)
            for goal in projection.existingGoals {
                let folded = GoalView(goal: goal, calendar: calendar, now: now)
                let kept = try store.readTransaction { txn in
                    try ViewTables.view(of: goal, calendar: calendar, now: now, txn, try txn.activeProjection())
                }
                #expect(kept == folded, "\(label) goal \(goal.title?.value ?? "?") at \(text)")
            }
            let listed = try store.goals(now: now, includingDeleted: true, includingEntries: false)
            #expect(
                listed.map(\.view)
                    == projection.existingGoals.sorted { $0.orderKey! < $1.orderKey! }.map { GoalView(goal: $0, calendar: calendar, now: now) },
                "\(label) at \(text)")
            #expect(listed.allSatisfy { $0.goal.entries.isEmpty })
        }
    }

    @Test(arguments: 0..<10)
    func keptViewsEqualTheFoldAfterEveryBatchInAnyOrder(_ seed: Int) throws {
        let events = Self.history(seed: UInt64(seed) &* 31 &+ 7, count: 160, ownDevice: "laptop")
        var views: [[GoalSnapshot]] = []
        for order in 0..<2 {
            let t = try TemporaryStore(device: "laptop", signed: false)
            var rng = SeededRandom(seed: UInt64(seed) &* 977 &+ UInt64(order))
            var queues = Dictionary(grouping: events, by: \.origin)
            var step = 0
            while !queues.isEmpty {
                var batch: [Event] = []
                for _ in 0..<(1 + Int(rng.next() % 12)) {
                    guard let origin = queues.keys.sorted().randomElement(using: &rng) else { break }
                    batch.append(queues[origin]!.removeFirst())
                    if queues[origin]!.isEmpty { queues[origin] = nil }
                }
                _ = try t.store.importEvents(batch, from: "test")
                step += 1
                if step % 4 == 0 { try Self.expectKeptViewsMatch(t.store, "seed \(seed) order \(order) step \(step)") }
            }
            try Self.expectKeptViewsMatch(t.store, "seed \(seed) order \(order)")
            views.append(try t.store.goals(now: instant("2026-10-04T05:00:00Z"), includingDeleted: true, includingEntries: false))
            // A rebuild, in small chunks too, keeps the same rows.
            for chunk in [3, 100_000] as [UInt64] {
                try t.store.rebuild(progress: nil, chunk: chunk)
                try Self.expectKeptViewsMatch(t.store, "seed \(seed) order \(order) rebuilt in chunks of \(chunk)")
            }
        }
        #expect(views[0] == views[1])
    }

    /// Streaks across the edges of runs: a period completed between two runs joins them, a
    /// removal splits a run (and the best streak falls back to the longest remaining run), and
    /// a change of target or cadence builds the runs again.
    @Test func runsJoinSplitAndFollowTheRules() throws {
        let t = try TemporaryStore(device: "phone")
        let store = t.store
        let goal = UUID()
        let now = instant("2026-10-10T12:00:00Z")
        try store.append(
            [
                EventDraft(
                    payload: .goalCreated(GoalCreated(goal: goal, title: "Run", cadence: .daily, progressKind: .measurable, target: try! Amount("2"))))
            ], now: now)
        var ids: [Int: UUID] = [:]
        for d in [1, 2, 3, 5, 6, 8] {
            let r = try store.append(
                [
                    EventDraft(
                        payload: .progressRecorded(
                            ProgressRecorded(goal: goal, amount: try! Amount("2"), completed: nil, occurredAt: instant("2026-10-0\(d)T09:00:00Z"))))
                ],
                now: now)
            ids[d] = r[0].id
        }
        func streak(_ at: String) throws -> Streak? { try store.goal(goal, now: instant(at))?.view.streak }
        #expect(try streak("2026-10-08T20:00:00Z") == Streak(current: 1, best: 3))
        #expect(try streak("2026-10-06T20:00:00Z") == Streak(current: 2, best: 3))
        // Day 4 joins 1–3 and 5–6 into a run of six.
        try store.append(
            [
                EventDraft(
                    payload: .progressRecorded(
                        ProgressRecorded(goal: goal, amount: try! Amount("2.5"), completed: nil, occurredAt: instant("2026-10-04T09:00:00Z"))))
            ],
            now: now)
        #expect(try streak("2026-10-06T20:00:00Z") == Streak(current: 6, best: 6))
        // Removing day 2 splits it: 1, then 3–6; the best is 4.
        try store.append([EventDraft(payload: .progressRemoved(ProgressRemoved(goal: goal, entry: ids[2]!)))], now: now)
        #expect(try streak("2026-10-06T20:00:00Z") == Streak(current: 4, best: 4))
        // A higher target leaves no period complete; a weekly cadence counts weeks.
        var edit = GoalEdited(goal: goal, replaces: [:])
        edit.target = try! Amount("3")
        try store.append([EventDraft(payload: .goalEdited(edit))], now: now)
        #expect(try streak("2026-10-06T20:00:00Z") == Streak(current: 0, best: 0))
        edit = GoalEdited(goal: goal, replaces: [:])
        edit.cadence = .weekly
        try store.append([EventDraft(payload: .goalEdited(edit))], now: now)
        let view = try #require(try store.goal(goal, now: instant("2026-10-06T20:00:00Z"))?.view)
        #expect(view.value?.description == "8.5")
        #expect(view.streak == Streak(current: 2, best: 2))
        try Self.expectKeptViewsMatch(store, "edited")
        #expect(try store.verify().isClean)
    }

    /// The command line's `goals` and `show` print the same views as the fold does, and a
    /// store written before the kept views existed (projection version 8) is rebuilt on open.
    @Test func aStoreWithoutKeptViewsIsRebuiltOnOpen() throws {
        let dir = TemporaryDirectory()
        let goal = UUID()
        let now = instant("2026-10-10T12:00:00Z")
        do {
            let store = try LedgerStore.create(at: dir.path + "/s", device: "phone")
            try store.append(
                [EventDraft(payload: .goalCreated(GoalCreated(goal: goal, title: "Walk", cadence: .daily, progressKind: .outcome)))],
                now: now)
            for d in 1...4 {
                try store.append(
                    [
                        EventDraft(
                            payload: .progressRecorded(
                                ProgressRecorded(goal: goal, amount: nil, completed: true, occurredAt: instant("2026-10-0\(d)T09:00:00Z"))))
                    ],
                    now: now)
            }
            // As an older version left it: no kept views, an older projection version.
            try store.writeTransaction("damaging") { txn in
                let t = try txn.activeProjection()
                try txn.clear(t.days)
                try txn.clear(t.runs)
                try txn.put(store.layout.meta, key: MetaKey.projectionVersion, value: UInt64(8).bigEndianBytes)
            }
        }
        let store = try LedgerStore.open(at: dir.path + "/s")
        #expect(try store.goal(goal, now: instant("2026-10-04T20:00:00Z"))?.view.streak == Streak(current: 4, best: 4))
        try Self.expectKeptViewsMatch(store, "reopened")
    }

    /// A damaged, missing or stray row of `days`, `periods` or `runs` is a projection problem `verify`
    /// reports (a changed or stray one by its goal); `rebuild` repairs it.
    @Test func verifyNamesADamagedViewRowAndRebuildRepairsIt() throws {
        let t = try TemporaryStore(device: "phone")
        let store = t.store
        let goal = UUID()
        let now = instant("2026-10-10T12:00:00Z")
        try store.append(
            [
                EventDraft(
                    payload: .goalCreated(GoalCreated(goal: goal, title: "Read", cadence: .daily, progressKind: .measurable, target: try! Amount("1"))))
            ], now: now)
        for d in 1...3 {
            try store.append(
                [
                    EventDraft(
                        payload: .progressRecorded(
                            ProgressRecorded(goal: goal, amount: try! Amount("1"), completed: nil, occurredAt: instant("2026-10-0\(d)T09:00:00Z"))))
                ],
                now: now)
        }
        #expect(try store.verify().isClean)
        let damages: [(String, (borrowing StoreTransaction, ProjectionTables) throws -> Void)] = [
            ("days", { txn, t in try txn.put(t.days, key: ViewTables.dayKey(goal, day("2026-10-02")), value: DaySummary().bytes) }),
            ("days", { txn, t in try txn.delete(t.days, key: ViewTables.dayKey(goal, day("2026-10-03"))) }),
            (
                "periods",
                {
                    txn, t in
                    try txn.put(t.periods, key: ViewTables.periodKey(goal, day("2026-10-02").daysSinceEpoch), value: DaySummary().bytes)
                }
            ),
            ("runs", { txn, t in try txn.put(t.runs, key: ViewTables.runKey(goal, 5), value: [0x80, 0, 0, 5]) }),
            (
                "runs",
                { txn, t in
                    try txn.put(
                        t.runs, key: goal.bytes, value: ViewBasis(cadence: .daily, kind: .measurable, targetMicro: 1_000_000, best: 9).bytes
                    )
                }
            ),
        ]
        for (table, damage) in damages {
            try store.writeTransaction("damaging") { txn in try damage(txn, try txn.activeProjection()) }
            let findings = try store.verify().findings
            // A changed or stray row is named with its goal; a missing one shows in the count.
            #expect(
                !findings.isEmpty && findings.allSatisfy { $0.check == .projections && $0.message.hasPrefix("projection \(table): ") },
                "\(findings)")
            #expect(findings.allSatisfy { $0.goal == goal || $0.message.contains("rows stored") }, "\(findings)")
            try store.rebuild()
            #expect(try store.verify().isClean)
            #expect(try store.goal(goal, now: instant("2026-10-03T20:00:00Z"))?.view.streak == Streak(current: 3, best: 3))
        }
    }

    /// A day or period row damaged to hold the largest sums and counts does not stop the store:
    /// an append that adds to them, and the reads that sum them, go on (the sums wrap); `verify`
    /// names the rows and `rebuild` repairs them.
    @Test func aViewRowAtTheLimitsStopsNeitherAnAppendNorARead() throws {
        let t = try TemporaryStore(device: "phone")
        let store = t.store
        let goal = UUID()
        let now = instant("2026-10-10T12:00:00Z")
        func record(_ at: String, _ amount: String) -> EventDraft {
            EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount(amount), completed: nil, occurredAt: instant(at))))
        }
        try store.append(
            [
                EventDraft(
                    payload: .goalCreated(GoalCreated(goal: goal, title: "Read", cadence: .weekly, progressKind: .measurable, target: try! Amount("1")))),
                record("2026-10-02T09:00:00Z", "1"),
            ], now: now)
        var full = DaySummary()
        full.micro = Int128.max
        full.amounts = UInt32.max
        full.outcomes = UInt32.max
        try store.writeTransaction("damaging") { txn in
            let t = try txn.activeProjection()
            try txn.put(t.days, key: ViewTables.dayKey(goal, day("2026-10-02")), value: full.bytes)
            try txn.put(t.periods, key: ViewTables.periodKey(goal, Cadence.weekly.periodNumber(of: day("2026-10-02"), firstWeekday: try #require(try ViewTables.firstWeekday(txn, t)))), value: full.bytes)
        }
        // The same day again, and the day after (the same week): each adds to a damaged row.
        try store.append([record("2026-10-02T10:00:00Z", "1000000000000"), record("2026-10-03T10:00:00Z", "-1000000000000")], now: now)
        _ = try store.read { try $0.goals(now: now, includingEntries: false) }
        _ = try store.goal(goal, now: now)
        let findings = try store.verify().findings
        #expect(findings.contains { $0.message.hasPrefix("projection days: ") && $0.goal == goal }, "\(findings)")
        #expect(findings.contains { $0.message.hasPrefix("projection periods: ") && $0.goal == goal }, "\(findings)")
        try store.rebuild()
        #expect(try store.verify().isClean)
        #expect(try store.goal(goal, now: instant("2026-10-03T12:00:00Z"))?.view.value == (try! Amount("1")))
    }
}
