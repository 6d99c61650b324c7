import Foundation

extension LedgerStore {
    /// The ``VerificationCheck/log`` check, in the one read of the log every check uses: every
    /// key is a position, the positions are gapless, every record decodes. It folds the events
    /// into a fresh replay and gathers what the other checks compare with.
    func verifyLog(_ txn: borrowing StoreTransaction, rule: HistoryRule) throws -> LogScan {
        var scan = LogScan(projection: GoalProjection(historyRule: rule))
        // What counts is the derived trust's; a difference from the table is the trust check's.
        scan.projection.revokedAfter = try txn.revocations()
        var expected: UInt64 = 1
        var record = 0
        let progress = verifyProgress
        progress?(.log, 0)
        try txn.scan(layout.events) { key, value in
            defer { record += 1 }
            let position = UInt64(bigEndianBytes: key)
            if record & 255 == 0 { progress?(.log, position) }
            if key.count != 8 { scan.problems.add("events: a key of \(key.count) bytes is not a position", record: record) }
            if position != expected {
                scan.problems.add("events: position \(expected) is missing (next is \(position))", position: expected, record: record)
            }
            expected = position + 1
            scan.events += 1
            let event: Event
            do {
                event = try EventCodec.decode(value)
            } catch {
                scan.damaged += 1
                scan.problems.add("event at position \(position) is damaged: \(error)", position: position, record: record)
                return true
            }
            scan.take(event, bytes: value, at: position, record: record)
            return true
        }
        scan.projection.position = scan.events
        // In key order, for the walks over the id and goal indexes.
        scan.ids.sort { $0.key < $1.key }
        scan.goals.sort { $0.key != $1.key ? $0.key < $1.key : $0.position < $1.position }
        return scan
    }
}
