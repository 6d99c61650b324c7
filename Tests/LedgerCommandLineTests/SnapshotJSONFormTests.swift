import Foundation
import GoalLedger
import LedgerCommandLine
import Testing

/// An encoded `GoalSnapshot` is what `ledger goals --json` and `ledger show --json` print for the
/// same goal at the same moment, with each entry's clock (`hlc`), the goal's field versions
/// (`versions`) and its creation time (`createdAt`) added; a list in the person's order, as
/// `goals --ordered` prints it.
struct SnapshotJSONFormTests {
    /// `json` without the `hlc` members of entries and the goals' `versions` and `createdAt`,
    /// with every object's members in key order (JSON objects are unordered).
    func withoutClocks(_ json: JSONValue) -> JSONValue {
        switch json {
        case .object(let members):
            return .object(
                members.filter { !["hlc", "versions", "createdAt"].contains($0.0) }.map { ($0.0, withoutClocks($0.1)) }.sorted { $0.0 < $1.0 })
        case .array(let items): return .array(items.map(withoutClocks))
        default: return json
        }
    }

    @Test func encodedSnapshotsAreWhatTheCommandLinePrints() throws {
        let f = CLIFixture()
        let now = Instant(rfc3339: f.now)!
        let monday = Instant(rfc3339: "2026-11-02T07:00:00Z")!
        do {
            let store = try LedgerStore.create(at: f.store, device: "phone")
            try store.configureDevice(try DeviceConfigured(timeZone: TimeZone(identifier: "Asia/Tokyo")!, firstWeekday: 2), now: monday)
            let water = try store.createGoal(
                title: "Drink water", cadence: .daily, progress: .measurable(target: try .target(2), unit: "l"),
                targetDate: Day(iso: "2026-12-31"), details: "Before noon", reminder: try ReminderTime(hour: 9, minute: 30),
                tags: ["morning", "health"], now: monday)
            let call = try store.createGoal(title: "Call grandma", cadence: .weekly, now: monday)
            let old = try store.createGoal(title: "Old habit", now: monday)
            try store.recordProgress(water, amount: try Amount(0.1), occurredAt: Instant(rfc3339: "2026-11-05T06:59:59.250Z"), now: monday)
            try store.recordProgress(water, amount: try Amount(0.2), now: now)
            try store.recordCompletion(call, now: monday)
            try store.deleteGoal(old, now: monday)
        }
        let store = try LedgerStore.open(at: f.store)
        let rows = try store.goals(now: now, includingDeleted: true)
        #expect(rows.count == 3)
        let printed = try f.json(["goals", "--all", "--ordered"])
        #expect(withoutClocks(try JSONParser.parse(Array(try JSONEncoder().encode(rows)))) == withoutClocks(printed))
        for row in rows {
            let shown = try f.json(["show", row.id.uuidString])
            #expect(withoutClocks(try JSONParser.parse(Array(try JSONEncoder().encode(row)))) == withoutClocks(shown))
        }
    }
}
