import Foundation

/// The goal headers and devices read model: `goals` (per goal, its registers and tags, with a
/// status prefix; no entries) and `devices` (per device, its settings and authorization).
///
/// A header or device row is read once per batch, folded in memory (`FoldState.headers`,
/// `FoldState.devices`, which the rules of an append and the later models read), and written
/// once at flush. Progress events leave the header alone: entries live in `EntryModel`'s tables.
struct GoalHeaderModel: ReadModel {
    static let tables: [ProjectionTable] = [.goals, .devices]

    /// Devices whose row the batch changed.
    private var changedDevices = Set<String>()

    init() {}

    mutating func apply(_ e: Event, at position: UInt64, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        switch e.payload {
        case .progressRecorded, .progressHistoryReplaced, .progressRemoved:
            return
        default:
            break
        }
        // Looked up by index: `headers[goal] == nil` would copy the whole state out to compare it.
        if let goal = e.payload.goal {
            if state.headers.index(forKey: goal) == nil {
                state.headers[goal] = try StoredProjection.header(goal, txn, state.tables) ?? GoalState(id: goal)
            }
            state.headers[goal]!.apply(e)
            state.changedGoals.insert(goal)
            state.headerChanges(goal)
        } else {
            if state.devices.index(forKey: e.origin) == nil { state.devices[e.origin] = try StoredProjection.device(e.origin, txn, state.tables) }
            state.devices[e.origin]!.apply(e)
            changedDevices.insert(e.origin)
        }
    }

    /// Writes the changed headers in key order, then the changed devices.
    mutating func flush(_ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        let t = state.tables
        let goals = state.changedGoals.map { (key: $0.bytes, goal: $0) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        if let first = goals.first {
            let options = try txn.orderedPutOptions(t.goals, from: first.key)
            for (key, goal) in goals {
                try txn.put(t.goals, key: key, value: ProjectionCodec.encodeHeader(state.headers[goal]!), options: options)
            }
        }
        for name in changedDevices {
            try txn.put(t.devices, key: Array(name.utf8), value: ProjectionCodec.encodeDevice(state.devices[name]!))
        }
        changedDevices = []
    }

    /// `goals` (every goal with a header) and `devices`.
    static func freshRows(of replay: FreshReplay) throws -> [FreshReplay.Rows] {
        var goals: [[UInt8]: [UInt8]] = [:]
        var devices: [[UInt8]: [UInt8]] = [:]
        for (id, g) in replay.projection.goals where g.hasHeader { goals[id.bytes] = ProjectionCodec.encodeHeader(g) }
        for (name, d) in replay.projection.devices { devices[Array(name.utf8)] = ProjectionCodec.encodeDevice(d) }
        return [.keyed(goals), .keyed(devices)]
    }
}
