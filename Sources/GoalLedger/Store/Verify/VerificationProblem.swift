import Foundation

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
