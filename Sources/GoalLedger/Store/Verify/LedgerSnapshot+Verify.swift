import Foundation

extension LedgerSnapshot {
    /// Checks the store against itself in one snapshot, one ``VerificationCheck`` after another:
    /// every record's checksum and gapless positions (``VerificationCheck/log``), every index
    /// against the log (``VerificationCheck/indexes``), gapless origin sequences and their heads
    /// (``VerificationCheck/origins``), the trust table against trust re-derived from the log
    /// (``VerificationCheck/trust``), every origin's hash chain and signatures
    /// (``VerificationCheck/chains``), and the stored projection byte for byte against a fresh
    /// replay, the pending tables and the maintained digest's rows included
    /// (``VerificationCheck/projections``; a difference is a damaged projection, which `rebuild`
    /// repairs).
    ///
    /// A sound store is checked in memory that does not grow with the log: one read of the log
    /// in position order (each record, its index entries, each origin's chain and signatures),
    /// then trust re-derived from what that read kept, then one goal at a time through the goal
    /// index, its events folded and its rows counted and summed into each table's
    /// order-independent sum, the stored tables summed in one ordered walk of each. When
    /// anything differs,
    /// the log is read again into a fresh replay of the whole ledger, and the checks after that
    /// read compare the store with what it gathered, to name every problem in order (memory then
    /// grows with the log). A record's own problems and its index entries' are reported in the
    /// order the records were read. When a record is damaged, the checks that count index
    /// entries, re-derive trust or walk the chains say nothing: their figures would only repeat
    /// the damage.
    public func verify() throws(LedgerError) -> VerificationReport {
        // A sound store is checked in memory that does not grow with the log; when anything
        // differs, the full check names every problem.
        if let report = try streamingVerification() { return report }
        return try fullVerification()
    }

    /// The check of a sound store, one goal at a time
    /// (``LedgerStore/verifyStreaming(_:rule:plan:)``): nil when anything differs.
    func streamingVerification(decoding plan: LogDecodingPlan = LogDecodingPlan()) throws(LedgerError) -> VerificationReport? {
        try run { try store.verifyStreaming(txn, rule: historyRule, plan: plan) }
    }

    /// The full check: the log read once into a fresh replay and what the other checks compare
    /// with, every problem named in the order of the checks.
    func fullVerification() throws(LedgerError) -> VerificationReport {
        try run {
            let progress = store.verifyProgress
            let log = try store.verifyLog(txn, rule: historyRule)
            let heads = try txn.originHeads()
            progress?(.indexes, log.events)
            var found = ProblemList.inRecordOrder(log.problems, try store.verifyIndexEntries(txn, log))
            found += try store.verifyIndexes(txn, log)
            progress?(.origins, log.events)
            found += store.verifyOrigins(log, heads: heads)
            progress?(.trust, log.events)
            let trust = store.deriveTrust(log, heads: heads, recorded: try store.recordedFounder(txn))
            found += try store.verifyTrust(txn, damaged: log.damaged, trust)
            progress?(.chains, log.events)
            let chains = store.verifyChains(log, trust, heads: heads)
            found += chains.problems
            progress?(.projections, log.events)
            found += try store.verifyProjections(txn, log)

            var report = VerificationReport()
            report.events = log.events
            report.goals = log.projection.existingGoals.count
            report.findings = Array(found.prefix(VerificationReport.limit))
            report.unsignedEvents = chains.unsignedEvents
            report.setAside = log.setAside
            return report
        }
    }
}
