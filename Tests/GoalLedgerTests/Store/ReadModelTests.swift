import Foundation
import LMDB
import Testing

@testable import GoalLedger

/// The read models own the projection's tables between them: each table exactly one model,
/// which clears it and gives `verify` its fresh rows.
struct ReadModelTests {
    let now = instant("2026-11-05T12:00:00Z")

    /// `dayOne` and the removal of its first entry: every table but `setAside` holds rows.
    func seededStore() throws -> TemporaryStore {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        try t.store.append(
            [try draft(#"{"type":"progressRemoved","goal":"\#(runGoal)","entry":"10000000-0000-4000-8000-000000000004"}"#)], now: now)
        return t
    }

    @Test func everyProjectionTableHasExactlyOneModel() {
        let owned = StoredProjection.Batch.models.flatMap { $0.tables }
        #expect(owned.count == ProjectionTable.allCases.count)
        #expect(Set(owned) == Set(ProjectionTable.allCases))
        #expect(ProjectionTable.allCases.map(\.storedName) == ProjectionTables.tableNames)
        // The tables' names are their raw values, but for the entries kept as duplicates.
        #expect(ProjectionTable.allCases.filter { $0.storedName != $0.rawValue } == [.entries])
    }

    @Test func eachModelGivesVerifyOneSetOfFreshRowsPerTable() throws {
        let replay = FreshReplay(projection: GoalProjection(), setAsideRows: [:], firstWeekday: 1, calendarStored: true)
        for model in StoredProjection.Batch.models {
            #expect(try model.freshRows(of: replay).count == model.tables.count, "\(model)")
        }
    }

    @Test func clearingAGenerationEmptiesItsTablesAndNothingElse() throws {
        let t = try seededStore()
        let layout = t.store.layout
        try t.store.writeTransaction { txn in
            let active = try txn.projectionStatus().generation
            let other = layout.projections[1 - active]
            // The other generation filled from the log too, so that leaving it alone shows.
            try txn.fold(from: 1, through: try txn.lastPosition(), into: other)
            let logTables = [
                layout.meta, layout.events, layout.ids, layout.recentIDs, layout.origins, layout.originHeads, layout.goalPositions, layout.deviceEvents,
            ]
            let logBefore = try logTables.map { try txn.count($0) }
            let otherBefore = try other.all.map { try txn.count($0) }
            let activeBefore = try layout.projections[active].all.map { try txn.count($0) }
            for table in ProjectionTable.allCases where table != .setAside {
                #expect(activeBefore[table.index] > 0, "\(table) is empty before clearing")
            }
            #expect(otherBefore == activeBefore)

            try layout.projections[active].clear(txn)

            #expect(
                try layout.projections[active].all.map { try txn.count($0) } == Array(repeating: 0, count: ProjectionTable.allCases.count))
            #expect(try other.all.map { try txn.count($0) } == otherBefore)
            #expect(try logTables.map { try txn.count($0) } == logBefore)
        }
    }

    @Test func verifyNamesDamagedTablesInTheTablesOrderWithEntriesLast() throws {
        let t = try seededStore()
        let store = t.store
        let run = UUID(uuidString: runGoal)!
        let stray = goalID(9)
        try store.writeTransaction { txn in
            let tables = try txn.activeProjection()
            try txn.putEntry(tables.entries, key: PendingTable.entryKey(goal: stray, day: 1, event: stray), value: [0])
            try txn.put(tables.runs, key: ViewTables.runKey(stray, 3), value: [0x80, 0, 0, 3])
            try txn.put(tables.removed, key: stray.bytes + stray.bytes, value: [])
            try txn.put(tables.goals, key: run.bytes, value: [1, 2, 3])
        }
        let report = try store.verify()
        var named: [String] = []
        for message in report.problems where message.hasPrefix("projection ") {
            let table = String(message.dropFirst("projection ".count).prefix { $0 != ":" })
            if named.last != table { named.append(table) }
        }
        #expect(named == ["goals", "removed", "runs", "entries"], "\(report.problems)")
    }
}
