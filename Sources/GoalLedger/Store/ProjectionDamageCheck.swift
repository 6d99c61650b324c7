import Foundation
import LMDB

/// The reads and writes of a store one of whose rows holds arbitrary bytes, for the fuzzer: the
/// projection's rows and the log's indexes carry no checksum, so a damaged disk or a copied
/// store can put any value in one. Each read, the next append, `verify` and `rebuild` must then
/// give an error or go on, never trap; after damage to the projection, `rebuild` must bring the
/// store back to a clean `verify`. A broken invariant is returned as its description (nil when
/// all hold).
///
/// The store is made once per process (`pristine`): goals of every cadence and both kinds, with
/// reminders, tags, entries on several days, a deleted one and a settings event, so that every
/// projection table has rows. Each input works on a copy of it. The input's first byte chooses
/// the table (the projection's, then the log's: `Target.all`), its second the row (by its
/// place), its third how the row changes: its value replaced by the rest of the input, the rest
/// XORed into its value from the place the fourth byte names (the row keeps its shape where the
/// input is zero, and a short input reaches any byte of it), or, for a table of duplicates, the
/// rest added as one more.
package enum ProjectionDamageCheck {
    package static func run(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count >= 4, let pristine = pristine else { return nil }
        // A copy of its own (tests run inputs in parallel).
        let work = pristine + "-work-\(UUID().uuidString)"
        let fm = FileManager.default
        do {
            try fm.copyItem(atPath: pristine, toPath: work)
        } catch {
            return "cannot copy the pristine store: \(error)"
        }
        defer { try? fm.removeItem(atPath: work) }
        guard let store = try? LedgerStore.open(at: work) else { return "the copy of the pristine store does not open" }
        let target = Target.all[Int(bytes[0]) % Target.all.count]
        let rest = Array(bytes[4...])
        let changed = try? store.writeTransaction("damaging") { txn -> Bool in
            let db = try target.database(txn, store.layout)
            let hasDuplicates = target.hasDuplicates
            var rows: [(key: [UInt8], value: [UInt8])] = []
            try txn.scan(db) { k, v in
                rows.append((Array(k), Array(v)))
                return true
            }
            guard !rows.isEmpty else { return false }
            let row = rows[Int(bytes[1]) % rows.count]
            switch bytes[2] % 3 {
            case 0 where !hasDuplicates:
                try txn.put(db, key: row.key, value: rest)
            case 1:
                var value = row.value
                guard !value.isEmpty else { return false }
                let start = Int(bytes[3]) % value.count
                for (i, b) in rest.prefix(value.count - start).enumerated() { value[start + i] ^= b }
                if hasDuplicates { _ = try txn.delete(db, key: row.key, value: row.value) }
                try txn.put(db, key: row.key, value: value)
            default:
                guard !rest.isEmpty else { return false }
                try txn.put(db, key: row.key, value: rest)
            }
            return true
        }
        guard changed == true else { return nil }
        // Every read an app makes; errors are what a damaged row may give.
        _ = try? store.read { try $0.goals(now: now, includingEntries: false) }
        _ = try? store.read { try $0.goals(now: now, includingDeleted: true) }
        for goal in goals { _ = try? store.read { try $0.goal(goal, now: now) } }
        _ = try? store.read { try $0.pendingPlan(device: store.device, now: now) }
        _ = try? store.read { try $0.status() }
        _ = try? store.read { try $0.digest() }
        _ = try? store.read { try $0.verify() }
        // The next append, on the goal most rows are about.
        let progress = EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goals[0], amount: Amount(unchecked: 1_000_000))))
        _ = try? store.writing { try $0.append([progress], now: now) }
        // The projection is made from the log again: it must then be whole. A damaged row of
        // the log's own tables may stay damaged (`recover` is the way back); it must only not
        // trap anything above.
        guard case .projection(let table) = target else {
            _ = try? store.rebuild()
            _ = try? store.read { try $0.verify() }
            return nil
        }
        do {
            try store.rebuild()
            let report = try store.read { try $0.verify() }
            return report.isClean ? nil : "after damage to a row of \(table.rawValue), rebuild leaves: \(report.findings.prefix(3))"
        } catch {
            return "after damage to a row of \(table.rawValue), rebuild or verify fails: \(error)"
        }
    }

    /// A table a damaged row is put in: one of the active projection's, or one of the log's.
    enum Target {
        case projection(ProjectionTable)
        case log(String)

        static let all = ProjectionTable.allCases.map(Target.projection) + StoreLayout.names.map(Target.log)

        var hasDuplicates: Bool {
            switch self {
            case .projection(let t): t.hasDuplicates
            case .log(let name): StoreLayout.duplicates(of: name) != .none
            }
        }

        func database(_ txn: borrowing StoreTransaction, _ layout: StoreLayout) throws -> Database {
            switch self {
            case .projection(let t): return try txn.activeProjection()[t]
            case .log(let name):
                let tables = [
                    "meta": layout.meta, "events": layout.events, "ids": layout.ids, "recentIds": layout.recentIDs, "origins": layout.origins,
                    "originHeads": layout.originHeads, "goalPositions": layout.goalPositions, "deviceEvents": layout.deviceEvents,
                    "trust": layout.trust,
                ]
                return tables[name]!
            }
        }
    }

    /// The moment every read is made at.
    static let now = Instant(milliseconds: 1_790_000_000_000)

    /// The goals of the pristine store.
    static let goals = (1...5).map { UUID(uuidString: "00000000-0000-4000-8000-00000000000\($0)")! }

    /// The pristine store's directory, made on first use (nil when it cannot be made).
    static let pristine: String? = {
        try? FileManager.default.removeItem(atPath: pristinePath)
        // Removed when the process exits.
        atexit { try? FileManager.default.removeItem(atPath: ProjectionDamageCheck.pristinePath) }
        return try? makePristine(at: pristinePath)
    }()

    static let pristinePath = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-fuzz-projection-\(getpid())").path

    static func makePristine(at path: String) throws -> String {
        let store = try LedgerStore.create(at: path, device: "phone")
        let g = goals
        let day: Int64 = 86_400_000
        var drafts: [EventDraft] = [
            EventDraft(payload: .deviceConfigured(DeviceConfigured(timeZone: "Europe/Berlin", firstWeekday: 2, strategy: .window))),
            EventDraft(
                payload: .goalCreated(
                    GoalCreated(goal: g[0], title: "Run", cadence: .daily, progressKind: .measurable, target: Amount(unchecked: 2_000_000)))),
            EventDraft(payload: .goalCreated(GoalCreated(goal: g[1], title: "Read", cadence: .weekly, progressKind: .outcome))),
            EventDraft(payload: .goalCreated(GoalCreated(goal: g[2], title: "Save", cadence: .monthly, progressKind: .measurable, target: Amount(unchecked: 50_000_000)))),
            EventDraft(payload: .goalCreated(GoalCreated(goal: g[3], title: "Climb", cadence: .once, progressKind: .outcome))),
            EventDraft(payload: .goalCreated(GoalCreated(goal: g[4], title: "Old", cadence: .yearly, progressKind: .outcome))),
        ]
        drafts.append(
            EventDraft(payload: .goalEdited(GoalEdited(goal: g[3], targetDate: .some(Instant(milliseconds: now.milliseconds + 9 * day).day(in: GoalState.utc))))))
        for goal in g.prefix(4) {
            drafts.append(EventDraft(payload: .reminderSet(ReminderSet(goal: goal, hour: 7, minute: 30))))
            drafts.append(EventDraft(payload: .tagAdded(TagAdded(goal: goal, tag: "daily"))))
        }
        for d in 0..<12 {
            let at = Instant(milliseconds: now.milliseconds - Int64(12 - d) * day)
            drafts.append(EventDraft(payload: .progressRecorded(ProgressRecorded(goal: g[0], amount: Amount(unchecked: 2_000_000), occurredAt: at))))
            if d % 3 == 0 {
                drafts.append(EventDraft(payload: .progressRecorded(ProgressRecorded(goal: g[1], amount: nil, completed: true, occurredAt: at))))
                drafts.append(EventDraft(payload: .progressRecorded(ProgressRecorded(goal: g[2], amount: Amount(unchecked: 5_500_000), occurredAt: at))))
            }
        }
        drafts.append(EventDraft(payload: .goalDeleted(GoalDeleted(goal: g[4]))))
        try store.writing { try $0.append(drafts, now: now) }
        return path
    }
}
