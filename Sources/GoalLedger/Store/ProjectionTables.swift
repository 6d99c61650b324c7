import Foundation
import LMDB

/// One generation of the stored projections: the goal projection and the pending tables.
///
/// | database        | key                          | value                           | read model |
/// |-----------------|------------------------------|---------------------------------|------------|
/// | `pN.goals`      | goal id (16)                 | goal header (`ProjectionCodec`) | `GoalHeaderModel` |
/// | `pN.removed`    | goal id (16) · entry id (16) | empty: the entry was removed    | `EntryModel` |
/// | `pN.devices`    | device name                  | device state                    | `GoalHeaderModel` |
/// | `pN.reminders`, `pN.pending` | see `PendingTable` |                                | `PendingModel` |
/// | `pN.goalEntries` | see `PendingTable`          |                                 | `EntryModel` |
/// | `pN.setAside`   | position (u64 BE)            | the gate's message              | `SetAsideModel` |
/// | `pN.digest`     | goal id (16)                 | entry sum (32) · header hash (32, once created) | `DigestModel` |
/// |                 | `ledger`                     | sum of goal hashes (32) · created goals (u64 BE) | |
/// | `pN.days`, `pN.periods`, `pN.runs` | see `ViewTables` |                      | `ViewModel` |
///
/// Each table has one owner among the read models (`ReadModel`), which alone writes it.
/// An entry is its `progressRecorded` event; `entries` keeps, by day, what the views need of
/// each (see `PendingTable.entryValue`), so that reading a goal does not decode its events.
struct ProjectionTables {
    let goals: Database
    let removed: Database
    let devices: Database
    let reminders: Database
    let pending: Database
    let entries: Database
    /// Events no fold reads, by position: stored events that fail the gate (only a store
    /// written before every event passed it can hold one, or receive one from such a store).
    /// The value is the gate's message.
    let setAside: Database
    /// The digest's parts (`ProjectionDigest`): per goal, its entry sum and header hash (a goal
    /// with neither live entries nor `goalCreated` has no row); under `ledgerKey`, the sum of the
    /// created goals' hashes and their number (no row while no goal is created).
    let digest: Database
    /// What the views read (`ViewTables`): per goal and day, a summary of the live entries;
    /// per goal, its runs of completed periods.
    let days: Database
    let periods: Database
    let runs: Database

    static let tableNames = ProjectionTable.allCases.map(\.storedName)
    /// The key of the ledger's row in `digest` (goal rows have 16-byte keys).
    static let ledgerKey = Array("ledger".utf8)
    /// Tables of earlier projection versions, dropped when the projection is rebuilt.
    static let obsoleteTables: [(name: String, duplicates: DuplicateValues)] = [("entryDays", .fixedSize), ("entries", .none)]

    static func names(generation g: Int) -> [String] { tableNames.map { "p\(g).\($0)" } }

    init(generation g: Int, _ open: (String) throws -> Database) rethrows {
        let n = Self.names(generation: g)
        goals = try open(n[ProjectionTable.goals.index])
        removed = try open(n[ProjectionTable.removed.index])
        devices = try open(n[ProjectionTable.devices.index])
        reminders = try open(n[ProjectionTable.reminders.index])
        pending = try open(n[ProjectionTable.pending.index])
        entries = try open(n[ProjectionTable.entries.index])
        setAside = try open(n[ProjectionTable.setAside.index])
        digest = try open(n[ProjectionTable.digest.index])
        days = try open(n[ProjectionTable.days.index])
        periods = try open(n[ProjectionTable.periods.index])
        runs = try open(n[ProjectionTable.runs.index])
    }

    /// The database of `table`.
    subscript(_ table: ProjectionTable) -> Database {
        switch table {
        case .goals: goals
        case .removed: removed
        case .devices: devices
        case .reminders: reminders
        case .pending: pending
        case .entries: entries
        case .setAside: setAside
        case .digest: digest
        case .days: days
        case .periods: periods
        case .runs: runs
        }
    }

    /// The tables in the order of `tableNames`.
    var all: [Database] { ProjectionTable.allCases.map { self[$0] } }

    /// Empties every table, each through the read model that owns it (a rebuild starts from
    /// nothing).
    func clear(_ txn: borrowing StoreTransaction) throws {
        for model in StoredProjection.Batch.models { try model.clear(self, txn) }
    }
}

/// A table of a projection generation; its raw value is the table's name, and its place among
/// the cases is its place in `ProjectionTables.tableNames` (which a table's database name and
/// the goal walk of `verify` count by: new tables go last).
enum ProjectionTable: String, CaseIterable {
    case goals, removed, devices, reminders, pending, entries, setAside, digest, days, periods, runs

    /// The table's place in `ProjectionTables.tableNames`.
    var index: Int { Self.allCases.firstIndex(of: self)! }

    /// The name of its database in a generation (`pN.` and this): the raw value, but for
    /// `entries`, whose rows are duplicates under their goal since projection version 15
    /// (`goalEntries`; the table of a row per entry before it, `entries`, is dropped by the
    /// rebuild to this version).
    var storedName: String { self == .entries ? "goalEntries" : rawValue }

    /// Whether the table's keys hold sorted duplicates.
    var hasDuplicates: Bool { self == .entries }
}
