import Foundation

extension LedgerSnapshot {
    /// The records of this device's latest key rotations (at most ``KeyRotationProof/limit``),
    /// in sequence order: what a request to a sync service carries so that the service can
    /// verify the new key before the rotation reaches it. Empty for a device that never rotated.
    package func ownKeyRotations() throws(LedgerError) -> [[UInt8]] {
        guard let me = try trustState().devices[device], me.keys.count > 1 else { return [] }
        var records: [[UInt8]] = []
        for k in me.keys.dropFirst().suffix(KeyRotationProof.limit) where k.from > 1 {
            guard let e = try event(origin: device, sequence: k.from - 1), case .deviceEnrolled(let p) = e.payload,
                p.device == device, p.publicKey == k.key, e.signature != nil
            else { continue }
            records.append(EventCodec.encode(e))
        }
        return records
    }
}
