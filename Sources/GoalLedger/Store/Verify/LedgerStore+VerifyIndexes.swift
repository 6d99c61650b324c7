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
            if !e.aboutGoal, try txn.get(layout.deviceEvents, key: e.position.bigEndianBytes) == nil {
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
        // The index's rows, each under its id's first 8 bytes, against the log's: the rows
        // under one key come in the order of their bytes, so both sides are put in the order of
        // key, then position (a row of neither form is counted below).
        var stored: [(key: UInt64, position: UInt64)] = []
        for table in [layout.ids, layout.recentIDs] {
            try txn.scan(table) { k, v in
                if k.count == 8, let p = IDIndex.position(v) { stored.append((UInt64(bigEndianBytes: k), p)) }
                return true
            }
        }
        stored.sort { $0.key == $1.key ? $0.position < $1.position : $0.key < $1.key }
        let ids = log.ids.sorted { $0.key.high == $1.key.high ? $0.position < $1.position : $0.key.high < $1.key.high }
        var next = 0
        for (id, position) in ids where !found.isFull {
            let key = IDIndex.key(id)
            while next < stored.count, stored[next].key < key || (stored[next].key == key && stored[next].position < position) { next += 1 }
            if next < stored.count, stored[next].key == key, stored[next].position == position {
                next += 1
            } else {
                found.add("ids: id \(id.uuid.uuidString) does not point to position \(position)", position: position)
            }
        }

        let goals = log.goals
        next = 0
        func missing(_ key: IDWords, _ position: UInt64) {
            found.add("goalPositions: position \(position) is missing for goal \(key.uuid.uuidString)", position: position, goal: key.uuid)
        }
        var indexed = 0
        let sound = try txn.scanGoalPositions { k, position in
            let goal = IDWords(k)
            indexed += 1
            while next < goals.count, goals[next].key < goal || (goals[next].key == goal && goals[next].position < position) {
                missing(goals[next].key, goals[next].position)
                next += 1
            }
            if next < goals.count, goals[next].key == goal, goals[next].position == position { next += 1 }
            return !found.isFull
        }
        if !sound {
            found.add("goalPositions: a row is not a run of a goal's positions")
        } else {
            for (key, position) in goals[next...] where !found.isFull { missing(key, position) }
        }

        // No index holds entries the log does not explain (with a damaged record, the counts
        // only repeat the damage).
        let logged = Int(log.events) - log.damaged
        for (name, count, want) in [
            ("ids", try txn.idIndexRowCount(), logged),
            ("goalPositions", indexed, log.goalIndexed),
            ("deviceEvents", try txn.count(layout.deviceEvents), log.deviceIndexed),
        ] where sound || name != "goalPositions" {
            if count != want, log.damaged == 0 { found.add("\(name): \(count) entries for \(want) events") }
        }
        let runs = log.originRuns
        if log.damaged == 0, case let count = try txn.count(layout.origins), count != runs {
            found.add("origins: \(count) entries for the \(runs) runs of the log's \(logged) events")
        }
        return found.problems
    }
}
