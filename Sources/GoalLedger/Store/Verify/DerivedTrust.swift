import Foundation

/// Trust as the log says it is: the fold of the log's trust events, and the sequence each
/// origin's events count through, where not all of them do.
struct DerivedTrust {
    var state: TrustState
    var cutoffs: [String: UInt64]
}
