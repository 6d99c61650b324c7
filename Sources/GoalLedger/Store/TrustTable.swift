import Foundation

/// The ledger's trust as the `trust` table holds it: a projection of the log's enrolments and
/// revocations (`TrustFold`), rewritten whole whenever a trust event is written and re-derived
/// from the log by `rebuild` and `verify`, never edited in place.
///
/// Rows: `k` name 0 from → key; `p` name → depth (u8) and the enroller's name; `r` name →
/// revoked after (u64); `c` name → the last sequence of the origin that counts (u64), present
/// when lower than its head would allow (revoked, or signed by a key it no longer holds);
/// `F` → the founder's name and key. The keys are made here; `StoreTransaction` reads and
/// writes the rows (`trustState`, `writeTrust`, `keys(of:)`, `revocations`, `founder`).
enum TrustTable {
    static func keyPrefix(_ device: String) -> [UInt8] { [UInt8(ascii: "k")] + Array(device.utf8) + [0] }
    static func cutoffKey(_ device: String) -> [UInt8] { [UInt8(ascii: "c")] + Array(device.utf8) }
    static let founderKey = [UInt8(ascii: "F")]
}
