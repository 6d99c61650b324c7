import Foundation
import LMDB

/// One generation of the stored projections: the goal projection and the pending tables.
///
/// | database        | key                          | value                           |
/// |-----------------|------------------------------|---------------------------------|
/// | `pN.goals`      | goal id (16)                 | goal header (`ProjectionCodec`) |
/// | `pN.removed`    | goal id (16) · entry id (16) | empty: the entry was removed    |
/// | `pN.devices`    | device name                  | device state                    |
/// | `pN.reminders`, `pN.pending`, `pN.entries` | see `PendingTable`    |                |
/// | `pN.digest`     | goal id (16)                 | entry sum (32) · header hash (32, once created) |
/// |                 | `ledger`                     | sum of goal hashes (32) · created goals (u64 BE) |
/// | `pN.days`, `pN.periods`, `pN.runs` | see `ViewTables` |                      |
///
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

    static let tableNames = ["goals", "removed", "devices", "reminders", "pending", "entries", "setAside", "digest", "days", "periods", "runs"]
    /// The key of the ledger's row in `digest` (goal rows have 16-byte keys).
    static let ledgerKey = Array("ledger".utf8)
    /// Tables of earlier projection versions, dropped when the projection is rebuilt.
    static let obsoleteTableNames = ["entryDays"]

    static func names(generation g: Int) -> [String] { tableNames.map { "p\(g).\($0)" } }

    init(generation g: Int, _ open: (String) throws -> Database) rethrows {
        let n = Self.names(generation: g)
        goals = try open(n[0])
        removed = try open(n[1])
        devices = try open(n[2])
        reminders = try open(n[3])
        pending = try open(n[4])
        entries = try open(n[5])
        setAside = try open(n[6])
        digest = try open(n[7])
        days = try open(n[8])
        periods = try open(n[9])
        runs = try open(n[10])
    }

    /// The tables in the order of `tableNames`.
    var all: [Database] { [goals, removed, devices, reminders, pending, entries, setAside, digest, days, periods, runs] }

    func clear(_ txn: borrowing StoreTransaction) throws {
        for db in all { try txn.clear(db) }
    }
}
