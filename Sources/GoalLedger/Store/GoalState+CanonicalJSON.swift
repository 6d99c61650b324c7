import Foundation

extension GoalState {
    /// Appends the goal's canonical JSON (the bytes of ``json``): one element of the array
    /// `replay --json` prints.
    package func writeCanonicalJSON(into out: inout [UInt8]) throws(LedgerError) { try writeJSON(into: &out) }
}
