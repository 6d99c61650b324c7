import Foundation
import LMDB

extension LedgerStore {
    /// The ``VerificationCheck/projections`` check: the stored projection is of this version,
    /// has folded the whole log, and equals the fresh replay `log` made, row for row, in every
    /// table of every read model (`ReadModel.freshRows`).
    func verifyProjections(_ txn: borrowing StoreTransaction, _ log: LogScan) throws -> [VerificationProblem] {
        var found = ProblemList(.projections)
        let status = try txn.projectionStatus()
        if status.version != StoredProjection.version {
            found.add("projection: version \(status.version), expected \(StoredProjection.version)")
        }
        if status.checkpoint != log.events {
            found.add("projection: checkpoint \(status.checkpoint), the log ends at \(log.events)")
        }
        let tables = layout.projections[status.generation]
        let firstWeekday = log.projection.device(device).calendar.firstWeekday
        let replay = FreshReplay(
            projection: log.projection, setAsideRows: log.setAsideRows, firstWeekday: firstWeekday,
            calendarStored: try txn.withValue(tables.runs, key: ViewTables.calendarKey, { _ in true }) == true)
        var fresh: [(table: ProjectionTable, rows: FreshReplay.Rows)] = []
        for model in StoredProjection.Batch.models { fresh += zip(model.tables, try model.freshRows(of: replay)).map { ($0, $1) } }
        // In the tables' order, `entries` last: the order the report has always named them in.
        fresh.sort { ($0.table == .entries ? 1 : 0, $0.table.index) < ($1.table == .entries ? 1 : 0, $1.table.index) }
        for (table, rows) in fresh {
            switch rows {
            case .keyed(let want):
                for p in try Self.compareRows(table.rawValue, tables[table], want, txn) {
                    found.add(p.text, position: p.position, origin: p.device, goal: p.goal)
                }
            case .entries(let want):
                for p in try Self.compareEntries(tables[table], want, txn) { found.add(p.text, goal: p.goal) }
            }
        }
        return found.problems
    }

    /// A difference between a stored projection table and a fresh replay: its line, and the goal,
    /// device or position of the row it is about.
    struct RowDifference {
        var text: String
        var goal: UUID?
        var device: String?
        var position: UInt64?
    }

    /// Differences between the stored `entries` table and a fresh replay's rows (in key order):
    /// one walk over both, as `compareRows` reports them, without a table of a million rows.
    static func compareEntries(
        _ db: Database, _ want: [(key: PendingTable.EntryKey, row: PendingTable.EntryRow)], _ txn: borrowing StoreTransaction
    ) throws -> [RowDifference] {
        var problems: [RowDifference] = []
        var seen = 0
        var next = 0
        func row(_ k: UnsafeRawBufferPointer, _ what: String) {
            guard k.count == 36 else {
                problems.append(RowDifference(text: "projection entries: a key of \(k.count) bytes \(what)"))
                return
            }
            let goal = StoredProjection.uuid(k)
            let entry = StoredProjection.uuid(UnsafeRawBufferPointer(rebasing: k[20...]))
            problems.append(
                RowDifference(text: "projection entries: goal \(goal.uuidString) entry \(entry.uuidString) \(what)", goal: goal))
        }
        func missing(_ i: Int) {
            want[i].key.bytes.withUnsafeBytes { row($0, "is missing (a fresh replay has it)") }
        }
        try txn.scanAllEntries(db) { k, v in
            seen += 1
            let key = PendingTable.EntryKey(key: k, value: v)
            if let key {
                while next < want.count, want[next].key < key {
                    missing(next)
                    next += 1
                }
            }
            if let key, next < want.count, want[next].key == key {
                let expected = want[next].row.value
                if !expected.elementsEqual(v) { row(k, "differs from a fresh replay") }
                next += 1
            } else {
                row(k, "is not in a fresh replay")
            }
            return problems.count < 100
        }
        while next < want.count, problems.count < 100 {
            missing(next)
            next += 1
        }
        if seen != want.count {
            problems.append(RowDifference(text: "projection entries: \(seen) rows stored, a fresh replay has \(want.count)"))
        }
        return problems
    }

    /// Differences between a stored projection table and the rows of a fresh replay.
    static func compareRows(_ name: String, _ db: Database, _ want: [[UInt8]: [UInt8]], _ txn: borrowing StoreTransaction) throws
        -> [RowDifference]
    {
        var problems: [RowDifference] = []
        var seen = 0
        func row(_ k: [UInt8], _ what: String) {
            var d = RowDifference(text: "")
            let subject: String
            if name == "devices" {
                subject = "device " + String(decoding: k, as: UTF8.self)
                d.device = String(decoding: k, as: UTF8.self)
            } else if name == "digest" && k == ProjectionTables.ledgerKey {
                subject = "the ledger's row"
            } else if name == "pending" {
                // device · 0x00 · request id
                let parts = k.split(separator: 0, maxSplits: 1).map { String(decoding: $0, as: UTF8.self) }
                let request = parts.count > 1 ? parts[1] : ""
                subject = "device \(parts.first ?? "") request \(request)"
                d.device = parts.first
                if request.hasPrefix(ReminderPlan.idPrefix) {
                    d.goal = UUID(uuidString: String(request.dropFirst(ReminderPlan.idPrefix.count)))
                }
            } else if k.count >= 16 {
                let goal = k.withUnsafeBytes { StoredProjection.uuid($0) }
                d.goal = goal
                var s = "goal \(goal.uuidString)"
                if k.count == 32 {
                    // removed: goal · entry
                    s += " entry " + k.withUnsafeBytes { StoredProjection.uuid(UnsafeRawBufferPointer(rebasing: $0[16...])).uuidString }
                }
                subject = s
            } else {
                subject = "a key of \(k.count) bytes"
                // setAside: a position
                if name == "setAside", k.count == 8 { d.position = UInt64(bigEndianBytes: k) }
            }
            d.text = "projection \(name): \(subject) \(what)"
            problems.append(d)
        }
        try txn.scan(db) { k, v in
            let key = Array(k)
            seen += 1
            if let w = want[key] {
                if !w.elementsEqual(v) { row(key, "differs from a fresh replay") }
            } else {
                row(key, "is not in a fresh replay")
            }
            return problems.count < 100
        }
        if seen != want.count {
            problems.append(RowDifference(text: "projection \(name): \(seen) rows stored, a fresh replay has \(want.count)"))
        }
        return problems
    }
}

extension PendingTable {
    /// What a row of `entries` holds: a progress entry, or a history write's canonical key.
    enum EntryRow {
        case entry(ProgressEntry)
        case history(CanonicalKey)

        /// The row's stored value.
        var value: [UInt8] {
            switch self {
            case .entry(let e): entryValue(e)
            case .history(let key): historyValue(key)
            }
        }

        /// Appends the row's stored value to `w` (a writer reused for many rows).
        func write(into w: inout ByteWriter) {
            switch self {
            case .entry(let e): writeEntryValue(e, into: &w)
            case .history(let key): w.bytes.append(contentsOf: historyValue(key))
            }
        }
    }

    /// The rows of `entries` a goal's state holds (a recorded entry, removed or not, and a
    /// history write each have one), in no particular order.
    static func entryRows(of g: GoalState) -> [(key: EntryKey, row: EntryRow)] {
        var rows: [(key: EntryKey, row: EntryRow)] = []
        rows.reserveCapacity(g.recordedEntries.count + g.historyWrites.count)
        for e in g.recordedEntries.values { rows.append((EntryKey(goal: g.id, e), .entry(e))) }
        for w in g.historyWrites.values { rows.append((EntryKey(goal: g.id, day: historyDay, event: w.event, hlc: w.key.hlc.rawValue), .history(w.key))) }
        return rows
    }
}
