import Foundation

/// What `verify` found: every problem, each with the check that found it and where it is.
public struct VerificationReport: Sendable {
    /// The most problems a report holds: the first ones found, in the order the checks run.
    static let limit = 1000

    /// The events in the log.
    public var events: UInt64 = 0
    /// The goals that exist (created) in the replay.
    public var goals = 0
    /// What is wrong, in the order the checks run (see ``VerificationCheck``), each with the
    /// check that found it and the position, origin or goal it concerns; at most the first 1,000.
    public var findings: [VerificationProblem] = []
    /// What is wrong, one line each naming where (`events: position 7 is missing …`): the
    /// messages of ``findings``, in their order.
    public var problems: [String] { findings.map(\.message) }
    /// Events written before their origin signed (a ledger founded before signing).
    public var unsignedEvents = 0
    /// Events that fail the gate, which every fold sets aside (see ``SetAsideEvent``), in
    /// position order. Not a problem when the stored projection set them aside too.
    public var setAside: [SetAsideEvent] = []
    /// Whether nothing is wrong.
    public var isClean: Bool { findings.isEmpty }
}

/// The checks `verify` makes, in the order it makes them, each comparing one part of the store
/// with the log (or the log with itself).
public enum VerificationCheck: String, CaseIterable, Sendable {
    /// The log itself: every key is a position, the positions run 1, 2, 3, … without gaps, and
    /// every record passes its checksum and decodes.
    case log
    /// The log's indexes (by event id, by origin and sequence, by goal, by device) hold each
    /// event of the log at its position, and nothing the log does not explain.
    case indexes
    /// Each origin's sequences run 1, 2, 3, … without gaps, and the head recorded for each origin
    /// is its last sequence in the log.
    case origins
    /// The trust table (each device's keys, who enrolled it, its revocation, the sequence its
    /// events count through) equals trust re-derived from the log.
    case trust
    /// Each origin's hash chain links, every signature verifies, and those within what counts
    /// were made by the key trust gives the origin.
    case chains
    /// The stored projection equals a fresh replay row for row: its version and checkpoint, the
    /// goals, removed entries and devices, the pending tables, the set-aside events and the
    /// digest (`rebuild` repairs a difference).
    case projections
}

/// One problem `verify` found: the check that found it, what it concerns, and its line of text.
public struct VerificationProblem: Hashable, Sendable, CustomStringConvertible {
    /// The check that found it.
    public var check: VerificationCheck
    /// The position in this store's log it concerns: a missing or damaged record, an event whose
    /// index entry or chain link is wrong, a row of the set-aside table.
    public var position: UInt64?
    /// The origin device it concerns: whose sequences, index entries, chain, trust or projection
    /// rows are wrong.
    public var origin: String?
    /// The origin sequence it concerns (with ``origin``).
    public var sequence: UInt64?
    /// The goal it concerns: an index entry of the goal, or a projection row of it.
    public var goal: UUID?
    /// What is wrong, in one line naming where (`chain: phone/8 does not follow phone/7`): the
    /// line `ledger verify` prints.
    public var message: String

    /// The message.
    public var description: String { message }

    init(
        _ check: VerificationCheck, _ message: String, position: UInt64? = nil, origin: String? = nil, sequence: UInt64? = nil,
        goal: UUID? = nil
    ) {
        self.check = check
        self.message = message
        self.position = position
        self.origin = origin
        self.sequence = sequence
        self.goal = goal
    }
}

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
    /// index, its events folded and its rows compared before the next. When anything differs,
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

    /// The check of a sound store, one goal at a time (``LedgerStore/verifyStreaming(_:rule:)``):
    /// nil when anything differs.
    func streamingVerification() throws(LedgerError) -> VerificationReport? {
        try run { try store.verifyStreaming(txn, rule: historyRule) }
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
            let trust = store.deriveTrust(log, heads: heads)
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

/// The problems one check found, at most as many as a report holds (the first ones; a report
/// keeps the first problems of all the checks in order, so no check needs more).
struct ProblemList {
    let check: VerificationCheck
    private(set) var problems: [VerificationProblem] = []
    /// For a problem found at a record of the log, the record's place in the read (the first
    /// record read is 0); nil for one found afterwards.
    private(set) var records: [Int?] = []

    init(_ check: VerificationCheck) { self.check = check }

    /// Whether the list holds as many problems as a report does.
    var isFull: Bool { problems.count >= VerificationReport.limit }

    mutating func add(
        _ message: String, position: UInt64? = nil, origin: String? = nil, sequence: UInt64? = nil, goal: UUID? = nil,
        record: Int? = nil
    ) {
        guard !isFull else { return }
        problems.append(VerificationProblem(check, message, position: position, origin: origin, sequence: sequence, goal: goal))
        records.append(record)
    }

    /// The problems of `a` and `b`, each found at records of the log, in the order the records
    /// were read; at one record, `a`'s first.
    static func inRecordOrder(_ a: ProblemList, _ b: ProblemList) -> [VerificationProblem] {
        var out: [VerificationProblem] = []
        out.reserveCapacity(a.problems.count + b.problems.count)
        var i = 0
        var j = 0
        while i < a.problems.count || j < b.problems.count {
            if j == b.problems.count || (i < a.problems.count && (a.records[i] ?? .max) <= (b.records[j] ?? .max)) {
                out.append(a.problems[i])
                i += 1
            } else {
                out.append(b.problems[j])
                j += 1
            }
        }
        return out
    }
}
