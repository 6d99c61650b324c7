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
