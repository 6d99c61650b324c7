import Foundation

/// The pending reminders read model: `reminders` (per goal, the facts of its live reminder) and
/// `pending` (per device the store knows, the request it should hold for each goal). See
/// `PendingTable`, which computes them.
///
/// Folding only notes what changed (`PendingTable.Changes`); the flush, after the headers and
/// devices are written, brings the facts and the affected rows in line in one pass.
struct PendingModel: ReadModel {
    static let tables: [ProjectionTable] = [.reminders, .pending]

    /// What the pending tables must follow, applied by `flush`.
    private var changes = PendingTable.Changes()

    init() {}

    mutating func apply(_ e: Event, at position: UInt64, _ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        if let goal = e.payload.goal {
            switch e.payload {
            // The goals of progress events are the batch's slots, read at flush.
            case .progressRecorded, .progressHistoryReplaced, .progressRemoved: break
            default: changes.goals.insert(goal)
            }
            return
        }
        // A device seen for the first time (its row is written by this batch) gets a whole table.
        if !changes.settings.contains(e.origin), try txn.get(state.tables.devices, key: Array(e.origin.utf8)) == nil {
            changes.settings.insert(e.origin)
        }
        if case .notificationAuthorization = e.payload {
            changes.authorization = true
        } else {
            changes.settings.insert(e.origin)
        }
    }

    mutating func flush(_ state: inout FoldState, _ txn: borrowing StoreTransaction) throws {
        changes.progress.formUnion(state.slotGoals)
        try PendingTable.update(changes, headers: state.headers, txn, state.tables)
        changes = PendingTable.Changes()
    }

    /// `reminders` (every goal with a live reminder) and `pending` (each known device's row for
    /// each of them, routing applied).
    static func freshRows(of replay: FreshReplay) throws -> [FreshReplay.Rows] {
        let p = replay.projection
        var reminders: [[UInt8]: [UInt8]] = [:]
        var pending: [[UInt8]: [UInt8]] = [:]
        var facts: [ReminderFacts] = []
        for (id, g) in p.goals {
            guard let f = ReminderFacts(g) else { continue }
            reminders[id.bytes] = PendingTable.encode(f)
            facts.append(f)
        }
        let routing = ReminderRouting(devices: p.devices.values)
        for device in p.devices.values {
            let context = ReminderPlan.Context(device)
            for f in facts {
                if let row = ReminderPlan.row(f, context, routing: routing, device: device.name) {
                    pending[PendingTable.rowKey(device: device.name, goal: f.goal)] = PendingTable.encode(row)
                }
            }
        }
        return [.keyed(reminders), .keyed(pending)]
    }
}
