import Foundation
import Testing

@testable import GoalLedger

/// Random three-device histories built to break convergence: text in several Unicode forms of
/// the same letters, numbers and dates at the limits, deletions, restores and edits interleaved
/// with clocks skewed between devices. After every sync the two stores print the same bytes;
/// at the end all three do, and every output is JSON.
struct AdversarialConvergenceTests {
    /// Canonically equivalent spellings side by side (composed and decomposed, singletons), case
    /// variants, compatibility forms NFC keeps apart, emoji with modifiers and joiners,
    /// right-to-left text and bidi controls.
    static let texts = [
        "\u{E9}t\u{E9}", "e\u{301}te\u{301}", "\u{C9}T\u{C9}", "E\u{301}TE\u{301}",
        "\u{C5}", "A\u{30A}", "\u{212B}", "\u{1E0C}\u{307}", "D\u{307}\u{323}", "D\u{323}\u{307}",
        "\u{FB01}", "fi", "Stra\u{DF}e", "STRASSE", "\u{1C5}", "\u{130}", "i\u{307}",
        "\u{1F44D}\u{1F3FD}", "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}", "\u{1F3F3}\u{FE0F}\u{200D}\u{1F308}",
        "\u{5E9}\u{5DC}\u{5D5}\u{5DD}", "\u{627}\u{644}\u{639}\u{631}\u{628}\u{64A}\u{629}", "\u{202E}abc\u{202C}",
        "\u{FF76}", "\u{30AB}", "\u{304B}\u{3099}", "\u{304C}", "\u{1100}\u{1161}\u{11A8}", "\u{AC01}", "a", "A",
    ]
    /// Tags are drawn from a few groups of equivalent spellings, so that devices often add the
    /// same tag in different forms.
    static let tagTexts = [
        "\u{E9}t\u{E9}", "e\u{301}te\u{301}", "\u{E9}te\u{301}", "\u{C5}", "A\u{30A}", "\u{212B}",
        "\u{1E0C}\u{307}", "D\u{307}\u{323}", "D\u{323}\u{307}", "\u{304C}", "\u{304B}\u{3099}", "\u{1F44D}\u{1F3FD}",
    ]
    static let amounts: [Amount] = ["1000000000000", "-1000000000000", "999999999999.99", "0.1", "-0.1", "0.000001", "123.456", "0", "1"]
        .map { try! Amount($0) }
    static let targets: [Amount] = ["1000000000000", "0.000001", "0.5", "3"].map { try! Amount($0) }
    static let targetDates = ["1970-01-02", "9999-12-30", "2026-12-31", "2000-02-29"]
    static let days = ["1970-01-01", "9999-12-31", "2026-11-05", "2024-02-29"]
    /// Each device's clock is off by its own amount.
    static let skew: [String: Int64] = ["phone": 0, "tablet": -3 * 3_600_000, "watch": 5 * 3_600_000 + 7]

    static let calendar = DeviceCalendar(timeZoneIdentifier: "Pacific/Kiritimati", firstWeekday: 2)
    static let now = instant("2026-11-05T12:00:00Z")

    /// What a device prints: the replay, the goals with a view (for one fixed calendar, so that
    /// stores of devices in different zones are comparable), and the conflicts.
    static func outputs(_ store: LedgerStore) throws -> [String] {
        let replay = try store.replay()
        let goals = JSONValue.array(
            replay.existingGoals.map { g in
                guard case .object(var m) = g.json else { return g.json }
                m.append(("view", GoalView(goal: g, calendar: calendar, now: now).json))
                return .object(m)
            })
        let conflicts = JSONValue.array(try store.conflicts().map(\.json))
        let texts = [
            try JSONWriter.string(.object([("position", .number(Double(replay.position))), ("digest", .string(try replay.digest)), ("goals", replay.canonicalJSON)])),
            try JSONWriter.string(goals), try JSONWriter.string(conflicts),
        ]
        for t in texts { _ = try JSONParser.parse(Array(t.utf8)) }
        return texts
    }

    @Test(arguments: 0..<80)
    func adversarialHistoriesConvergeByteForByte(_ seed: Int) throws {
        let dir = TemporaryDirectory()
        let a = try LedgerStore.create(at: dir.path + "/a", device: "phone")
        let b = try a.clone(to: dir.path + "/b", device: "tablet", now: instant("2026-11-01T00:00:00Z"))
        let c = try a.clone(to: dir.path + "/c", device: "watch", now: instant("2026-11-01T00:00:00Z"))
        let stores = [a, b, c]
        var rng = SeededRandom(seed: UInt64(seed) &* 0x9E37 &+ 11)
        for step in 0..<24 {
            let store = stores[Int(rng.next() % 3)]
            if rng.next() % 3 == 0 {
                let other = stores.filter { $0 !== store }[Int(rng.next() % 2)]
                _ = try store.sync(with: other)
                let (x, y) = (try Self.outputs(store), try Self.outputs(other))
                #expect(x == y, "seed \(seed) step \(step): \(store.device) and \(other.device) differ after a sync")
                continue
            }
            let batch = try Self.batch(for: store, rng: &rng, step: step)
            try store.append(batch, now: Self.now)
        }
        _ = try a.sync(with: b)
        _ = try b.sync(with: c)
        _ = try a.sync(with: b)
        let all = try stores.map(Self.outputs)
        #expect(all[0] == all[1] && all[1] == all[2], "seed \(seed): stores differ after a full exchange")
        for s in stores {
            let report = try s.verify()
            #expect(report.isClean, "\(s.device): \(report.problems)")
        }
    }

    /// A batch valid for `store`'s local rules, drawn from the adversarial values.
    static func batch(for store: LedgerStore, rng: inout SeededRandom, step: Int) throws -> [EventDraft] {
        var projection = try store.replay()
        var out: [EventDraft] = []
        // Skewed, and now and then set back by up to an hour: the clock must still rise.
        var at = Instant(milliseconds: 1_793_602_800_000 + Int64(step) * 600_000 + skew[store.device]! - Int64(rng.next() % 3_600_000))
        func text() -> String { texts[Int(rng.next() % UInt64(texts.count))] }
        func tag() -> String { tagTexts[Int(rng.next() % UInt64(tagTexts.count))] }
        // The local model's clock: the store gives new events a clock above all it holds.
        var clock = HLC(rawValue: 1 << 62)
        for _ in 0..<(1 + Int(rng.next() % 4)) {
            at.milliseconds += 1_000
            let live = projection.existingGoals.filter { !$0.isDeleted }
            let deleted = projection.existingGoals.filter(\.isDeleted)
            var payload: Payload?
            switch live.isEmpty ? 0 : rng.next() % 10 {
            case 0:
                let measurable = rng.next() % 2 == 0
                payload = .goalCreated(
                    GoalCreated(
                        goal: rng.uuid(), title: text(), cadence: Cadence.allCases.randomElement(using: &rng)!,
                        targetDate: rng.next() % 2 == 0 ? Day(iso: targetDates.randomElement(using: &rng)!) : nil,
                        progressKind: measurable ? .measurable : .outcome, target: measurable ? targets.randomElement(using: &rng)! : nil,
                        unit: measurable ? text() : nil, reminder: try ReminderTime(hour: 23, minute: 59), tags: [text()]))
            case 1:
                let g = live.randomElement(using: &rng)!
                var e = GoalEdited(goal: g.id, replaces: [:])
                e.title = text()
                if rng.next() % 2 == 0 { e.targetDate = .some(Day(iso: targetDates.randomElement(using: &rng)!)) }
                if g.kind == .measurable, rng.next() % 2 == 0 { e.target = targets.randomElement(using: &rng)! }
                payload = .goalEdited(e)
            case 2, 3:
                let g = live.randomElement(using: &rng)!
                let day = rng.next() % 2 == 0 ? Day(iso: days.randomElement(using: &rng)!) : nil
                payload = .progressRecorded(
                    g.kind == .measurable
                        ? ProgressRecorded(goal: g.id, amount: amounts.randomElement(using: &rng)!, day: day)
                        : ProgressRecorded(goal: g.id, completed: rng.next() % 3 != 0, day: day))
            case 4:
                let g = live.randomElement(using: &rng)!
                if let entry = g.entries.randomElement(using: &rng) { payload = .progressRemoved(ProgressRemoved(goal: g.id, entry: entry.id)) }
            case 5:
                let g = live.randomElement(using: &rng)!
                payload = .tagAdded(TagAdded(goal: g.id, tag: tag()))
            case 6:
                // Removing a tag spelled in any equivalent form.
                let g = live.randomElement(using: &rng)!
                let spelling = tag()
                if !g.liveAdds(of: spelling).isEmpty { payload = .tagRemoved(TagRemoved(goal: g.id, tag: spelling)) }
            case 7:
                payload = .goalDeleted(GoalRegisterWrite(goal: live.randomElement(using: &rng)!.id))
            case 8:
                if let g = deleted.randomElement(using: &rng) {
                    payload = .goalRestored(GoalRegisterWrite(goal: g.id))
                } else {
                    payload = .reminderSet(ReminderSet(goal: live.randomElement(using: &rng)!.id, hour: 0, minute: 0))
                }
            default:
                payload = .deviceConfigured(
                    DeviceConfigured(
                        timeZone: ["Pacific/Kiritimati", "Pacific/Pago_Pago", "America/New_York"].randomElement(using: &rng)!,
                        firstWeekday: Int(rng.next() % 7) + 1, locale: ["en_US", "ja_JP"].randomElement(using: &rng)!))
            }
            guard let payload else { continue }
            let draft = EventDraft(id: rng.uuid(), at: at, payload: payload)
            out.append(draft)
            let filled = try LocalRules.prepare(
                payload, id: draft.id!, at: at, goal: payload.goal.flatMap { projection.goals[$0] }, author: projection.device(store.device))
            clock = HLC(rawValue: clock.rawValue + 1)
            projection.apply(Event(id: draft.id!, origin: store.device, sequence: 0, hlc: clock, at: at, schema: 2, payload: filled))
        }
        return out
    }
}
