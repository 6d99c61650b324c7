import Foundation

@testable import GoalLedger

/// Random histories for property tests, repeatable by seed.
enum RandomHistory {
    static let devices = ["phone", "tablet", "watch"]
    static let tags = ["a", "b", "c"]

    /// Events as several devices might have written them, with no business rule enforced
    /// (imported events are facts): the fold must converge on any of them.
    static func events(seed: UInt64, count: Int) -> [Event] {
        var rng = SeededRandom(seed: seed)
        let goals = (0..<4).map { _ in rng.uuid() }
        var recorded: [UUID] = []
        var adds: [UUID] = []
        var clock: [String: UInt64] = [:]
        var sequence: [String: UInt64] = [:]
        var out: [Event] = []
        for i in 0..<count {
            let device = devices.randomElement(using: &rng)!
            let goal = goals.randomElement(using: &rng)!
            let id = rng.uuid()
            // Clocks of different devices may tie in milliseconds; the device name breaks the tie.
            let ms = Int64(1_793_602_800_000 + Int64(i / 2) * 60_000 + Int64(rng.next() % 3) * 1000)
            var hlc = HLC(milliseconds: ms, counter: 0)
            if let last = clock[device], hlc.rawValue <= last { hlc = HLC(rawValue: last + 1) }
            clock[device] = hlc.rawValue
            sequence[device, default: 0] += 1
            let at = Instant(milliseconds: ms)
            let payload: Payload
            switch rng.next() % 12 {
            case 0, 1:
                let measurable = rng.next() % 2 == 0
                payload = .goalCreated(
                    GoalCreated(
                        goal: goal, title: "goal \(i)", details: rng.next() % 2 == 0 ? nil : "d\(i)",
                        cadence: Cadence.allCases.randomElement(using: &rng)!, targetDate: nil,
                        progressKind: measurable ? .measurable : .outcome, target: measurable ? try! Amount("5") : nil, unit: nil,
                        reminder: rng.next() % 2 == 0 ? nil : ReminderTime(unchecked: 8, 15), tags: ["a"]))
                adds.append(id)
            case 2:
                var e = GoalEdited(goal: goal, replaces: [:])
                e.title = "title \(i)"
                if rng.next() % 2 == 0 { e.details = .some(rng.next() % 2 == 0 ? nil : "details \(i)") }
                if rng.next() % 2 == 0 { e.cadence = Cadence.allCases.randomElement(using: &rng)! }
                if rng.next() % 2 == 0 { e.target = try! Amount(whole: Int64(rng.next() % 10 + 1)) }
                payload = .goalEdited(e)
            case 3: payload = .goalDeleted(GoalRegisterWrite(goal: goal))
            case 4: payload = .goalRestored(GoalRegisterWrite(goal: goal))
            case 5, 6:
                payload = .progressRecorded(
                    ProgressRecorded(
                        goal: goal, amount: rng.next() % 2 == 0 ? try! Amount(whole: Int64(rng.next() % 5)) : nil,
                        completed: rng.next() % 2 == 0 ? rng.next() % 2 == 0 : nil, occurredAt: at,
                        day: at.day(in: TimeZone(identifier: "UTC")!)))
                recorded.append(id)
            case 7:
                payload = .progressRemoved(ProgressRemoved(goal: goal, entry: recorded.randomElement(using: &rng) ?? rng.uuid()))
            case 8:
                payload = .tagAdded(TagAdded(goal: goal, tag: tags.randomElement(using: &rng)!))
                adds.append(id)
            case 9:
                payload = .tagRemoved(
                    TagRemoved(
                        goal: goal, tag: tags.randomElement(using: &rng)!,
                        observed: adds.filter { _ in rng.next() % 2 == 0 }))
            case 10:
                payload =
                    rng.next() % 2 == 0
                    ? .reminderSet(ReminderSet(goal: goal, hour: Int(rng.next() % 24), minute: 0))
                    : .reminderCleared(GoalRegisterWrite(goal: goal))
            default:
                payload = .deviceConfigured(
                    DeviceConfigured(
                        timeZone: ["UTC", "Asia/Tokyo"].randomElement(using: &rng)!, firstWeekday: Int(rng.next() % 7) + 1,
                        locale: "en_US", strategy: .repeating, windowDays: 7, capacity: 64))
            }
            out.append(Event(id: id, origin: device, sequence: sequence[device]!, hlc: hlc, at: at, schema: 2, payload: payload))
        }
        return out
    }

    /// A batch of events valid for `store`'s local rules, chosen from its current state.
    static func validBatch(for store: LedgerStore, rng: inout SeededRandom, size: Int, step: Int) throws -> [EventDraft] {
        var projection = try store.replay()
        var batch: [EventDraft] = []
        var at = Instant(milliseconds: 1_793_602_800_000 + Int64(step) * 3_600_000)
        for _ in 0..<size {
            at.milliseconds += 60_000
            let live = projection.existingGoals.filter { !$0.isDeleted }
            let deleted = projection.existingGoals.filter(\.isDeleted)
            var payload: Payload?
            switch live.isEmpty ? 0 : rng.next() % 10 {
            case 0:
                let measurable = rng.next() % 2 == 0
                payload = .goalCreated(
                    GoalCreated(
                        goal: rng.uuid(), title: "goal \(step)", details: nil, cadence: Cadence.allCases.randomElement(using: &rng)!,
                        targetDate: nil, progressKind: measurable ? .measurable : .outcome, target: measurable ? try! Amount("3") : nil,
                        unit: nil, reminder: nil, tags: ["a"]))
            case 1:
                if let g = live.randomElement(using: &rng) {
                    var e = GoalEdited(goal: g.id, replaces: [:])
                    e.title = "edited \(step)"
                    if g.kind == .measurable, rng.next() % 2 == 0 { e.target = try! Amount(whole: Int64(rng.next() % 6 + 1)) }
                    payload = .goalEdited(e)
                }
            case 2, 3, 4:
                if let g = live.randomElement(using: &rng) {
                    payload = .progressRecorded(
                        g.kind == .measurable
                            ? ProgressRecorded(goal: g.id, amount: try! Amount(whole: Int64(rng.next() % 4)), completed: nil)
                            : ProgressRecorded(goal: g.id, amount: nil, completed: rng.next() % 3 != 0))
                }
            case 5:
                if let g = live.randomElement(using: &rng), let entry = g.entries.randomElement(using: &rng) {
                    payload = .progressRemoved(ProgressRemoved(goal: g.id, entry: entry.id))
                }
            case 6:
                if let g = live.randomElement(using: &rng) {
                    if let tag = g.tags.randomElement(using: &rng), rng.next() % 2 == 0 {
                        payload = .tagRemoved(TagRemoved(goal: g.id, tag: tag, observed: []))
                    } else {
                        payload = .tagAdded(TagAdded(goal: g.id, tag: tags.randomElement(using: &rng)!))
                    }
                }
            case 7:
                if let g = live.randomElement(using: &rng) { payload = .goalDeleted(GoalRegisterWrite(goal: g.id)) }
            case 8:
                if let g = deleted.randomElement(using: &rng) {
                    payload = .goalRestored(GoalRegisterWrite(goal: g.id))
                } else if rng.next() % 2 == 0 {
                    payload = .deviceConfigured(
                        DeviceConfigured(
                            timeZone: ["Europe/Berlin", "Asia/Tokyo", "America/New_York"].randomElement(using: &rng)!,
                            firstWeekday: Int(rng.next() % 7) + 1, locale: "en_US", strategy: .repeating, windowDays: 7, capacity: 64))
                } else {
                    payload = .notificationAuthorization(
                        NotificationAuthorization(status: AuthorizationStatus.allCases.randomElement(using: &rng)!))
                }
            default:
                if let g = live.randomElement(using: &rng) {
                    payload =
                        rng.next() % 2 == 0
                        ? .reminderSet(ReminderSet(goal: g.id, hour: 6, minute: nil))
                        : .reminderCleared(GoalRegisterWrite(goal: g.id))
                }
            }
            guard let payload else { continue }
            let draft = EventDraft(id: rng.uuid(), at: at, payload: payload)
            batch.append(draft)
            // Keep the local model in step so later choices in the batch stay valid.
            projection.apply(
                Event(
                    id: draft.id!, origin: store.device, sequence: 0, hlc: HLC(milliseconds: at.milliseconds, counter: 0),
                    at: at, schema: 2, payload: try filled(payload, projection: projection, store: store, id: draft.id!, at: at)))
        }
        return batch
    }

    private static func filled(_ p: Payload, projection: GoalProjection, store: LedgerStore, id: UUID, at: Instant) throws -> Payload {
        try LocalRules.prepare(p, id: id, at: at, goal: p.goal.flatMap { projection.goals[$0] }, author: projection.device(store.device))
    }
}
