import Foundation

extension LedgerSnapshot {
    /// Folds the log from scratch one goal at a time and hands each created goal to `body` in id
    /// order, with the digest of the whole; only the goal being folded is in memory, whatever
    /// the log's length. The goals and the digest are those of ``replay(through:asOf:)``
    /// (which holds every goal at once): a goal's facts are a fold of its own events, read
    /// through the goal index, under the same revocations.
    ///
    /// Returns the position folded through and the digest (the digest's construction needs
    /// every goal: `body` sees each goal before the digest is known).
    package func replayGoalByGoal(
        through position: UInt64? = nil, _ body: (GoalState) throws(LedgerError) -> Void
    ) throws(LedgerError) -> (position: UInt64, digest: String) {
        let rule = historyRule
        return try run {
            let revoked = try txn.revocations()
            let last = try txn.last(layout.events).map { UInt64(bigEndianBytes: $0.key) } ?? 0
            let through = min(position ?? last, last)
            var totals = LedgerDigest()
            var current: (id: [UInt8], projection: GoalProjection)?
            func finish(_ c: (id: [UInt8], projection: GoalProjection)) throws {
                guard let goal = c.projection.goals.values.first, goal.exists else { return }
                totals.replace(nil, with: try ProjectionDigest.parts(of: goal).goalHash)
                try body(goal)
            }
            let sound = try txn.scanGoalPositions { key, at in
                if current.map({ !$0.id.elementsEqual(key) }) ?? true {
                    if let c = current { try finish(c) }
                    var p = GoalProjection(historyRule: rule)
                    p.revokedAfter = revoked
                    current = (Array(key), p)
                }
                guard at <= through else { return true }
                guard let e = try txn.event(at: at) else {
                    throw LedgerError.damaged("the goal index names position \(at), which holds no event", position: at)
                }
                current!.projection.apply(e)
                return true
            }
            guard sound else { throw LedgerError.damaged("the goal index holds a row that is not a run of a goal's positions") }
            if let c = current { try finish(c) }
            return (through, totals.hex)
        }
    }
}
