import Foundation

/// What a receiver holds, as the checks of offered events read it: a store's log, or a hub's
/// rows of one ledger.
package struct HeldHistory {
    /// Each origin's last sequence held.
    package var heads: [String: UInt64]
    /// The receiving store's own device (nil for a hub), and whether it signs: a store takes back
    /// only its own signed events.
    package var ownDevice: String?
    package var signsOwnEvents = false
    /// The held trust events, each origin's first chained sequence where it enrolled itself, and
    /// the founder when known (see `TrustFold`).
    package var trustInputs: [TrustFold.Input] = []
    package var firstChained: [String: UInt64] = [:]
    package var founder: (name: String, key: [UInt8])?

    package init(heads: [String: UInt64]) { self.heads = heads }
}
