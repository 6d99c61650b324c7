import Foundation

extension LedgerStore {
    /// The ``VerificationCheck/indexes`` check at each event the log holds: its origin and
    /// sequence point to its position, and an event about the device (not a goal) is in the
    /// device's index. Each problem carries the record it was found at, so that it is reported
    /// among the log's problems in the order the records were read.
    func verifyIndexEntries(_ txn: borrowing StoreTransaction, _ log: LogScan) throws -> ProblemList {
        var found = ProblemList(.indexes)
        for e in log.indexEntries {
            if found.isFull { break }
            if try txn.position(origin: e.origin, sequence: e.sequence) != e.position {
                found.add(
                    "origins: \(e.origin)/\(e.sequence) does not point to position \(e.position)", position: e.position, origin: e.origin,
                    sequence: e.sequence, record: e.record)
            }
            if !e.aboutGoal, try txn.get(layout.deviceEvents, key: StoreLayout.deviceKey(e.origin, e.position)) == nil {
                found.add(
                    "deviceEvents: position \(e.position) is missing for device \(e.origin)", position: e.position, origin: e.origin,
                    record: e.record)
            }
        }
        return found
    }

    /// The rest of the ``VerificationCheck/indexes`` check: every id points to its event's
    /// position, every goal holds its events' positions (one ordered walk over each index, not
    /// one lookup per event), and no index holds entries the log does not explain.
    func verifyIndexes(_ txn: borrowing StoreTransaction, _ log: LogScan) throws -> [VerificationProblem] {
        var found = ProblemList(.indexes)
        let ids = log.ids
        var next = 0
        func misplaced(_ key: IDWords, _ position: UInt64) {
            found.add("eventIds: id \(key.uuid.uuidString) does not point to position \(position)", position: position)
        }
        try txn.scan(layout.eventIds) { k, v in
            guard k.count == 16 else { return true }
            let key = IDWords(k)
            while next < ids.count, ids[next].key < key {
                misplaced(ids[next].key, ids[next].position)
                next += 1
            }
            if next < ids.count, ids[next].key == key {
                if v.count != 8 || UInt64(bigEndianBytes: v) != ids[next].position { misplaced(key, ids[next].position) }
                next += 1
            }
            return !found.isFull
        }
        for (key, position) in ids[next...] where !found.isFull { misplaced(key, position) }

        let goals = log.goals
        next = 0
        func missing(_ key: IDWords, _ position: UInt64) {
            found.add("goalEvents: position \(position) is missing for goal \(key.uuid.uuidString)", position: position, goal: key.uuid)
        }
        try txn.scan(layout.goalEvents) { k, v in
            guard k.count == 16, v.count == 8 else { return true }
            let stored = (IDWords(k), UInt64(bigEndianBytes: v))
            while next < goals.count, goals[next].key < stored.0 || (goals[next].key == stored.0 && goals[next].position < stored.1) {
                missing(goals[next].key, goals[next].position)
                next += 1
            }
            if next < goals.count, goals[next].key == stored.0, goals[next].position == stored.1 { next += 1 }
            return !found.isFull
        }
        for (key, position) in goals[next...] where !found.isFull { missing(key, position) }

        // No index holds entries the log does not explain (with a damaged record, the counts
        // only repeat the damage).
        let logged = Int(log.events) - log.damaged
        for (name, db, want) in [
            ("eventIds", layout.eventIds, logged),
            ("goalEvents", layout.goalEvents, log.goalIndexed),
            ("deviceEvents", layout.deviceEvents, log.deviceIndexed),
        ] {
            let count = try txn.count(db)
            if count != want, log.damaged == 0 { found.add("\(name): \(count) entries for \(want) events") }
        }
        let runs = log.originRuns
        if log.damaged == 0, case let count = try txn.count(layout.origins), count != runs {
            found.add("origins: \(count) entries for the \(runs) runs of the log's \(logged) events")
        }
        return found.problems
    }
}
