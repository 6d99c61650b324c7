import Foundation
import Sodium

/// A device's proof of its own key rotations, for a peer that has not received them yet.
///
/// A rotation is a `deviceEnrolled` of a device by itself, signed by the key it replaces. A sync
/// service learns of it only when the device pushes it, yet the device signs every request with
/// its new key from the rotation on: without more, the service would refuse the pull that comes
/// before the push. So a device sends its latest rotations' records along with a request
/// (the `ledger-rotation` header of the sync service), and the service, when the key its fold
/// gives the device does not verify the request, reads them in order: each must be the device's
/// own, beyond what the service holds of it, signed by the key in effect before it (the fold's
/// current key, or for the first one of a founder the service knows nothing of, the key the
/// ledger id proves). The key the last one enrols must then verify the request. Nothing is
/// stored from a proof: the rotation reaches the service with the push, after which the fold
/// itself gives the new key and refuses the old one.
package enum KeyRotationProof {
    /// The most rotations one request carries: a device that rotated more often without
    /// syncing syncs after its next rotation reaches the service by a peer.
    package static let limit = 8
    /// The largest record of a rotation (a `deviceEnrolled` is about 150 bytes).
    package static let recordBytes = 1024

    /// The key the rotations in `records` enrol for `device`, starting from `current` (the key
    /// the verifier holds for the device now; nil when it holds none), skipping rotations at or
    /// below `held` (the device's last sequence the verifier holds). Nil when a record is not a
    /// rotation of `device` signed by the key in effect before it, or none is beyond `held`.
    /// `founderOf`, for a device the verifier holds no key of: whether a key is the one the
    /// ledger id proves for `device`.
    package static func key(
        of device: String, ledger: UUID, records: [[UInt8]], current: [UInt8]?, held: UInt64
    ) -> [UInt8]? {
        guard records.count <= limit else { return nil }
        var key = current
        var head = held
        var moved = false
        for record in records {
            guard record.count <= recordBytes, let e = try? EventCodec.decode(record) else { return nil }
            guard e.origin == device, case .deviceEnrolled(let p) = e.payload, p.device == device, p.from > e.sequence,
                p.publicKey.count == SigningKey.publicKeyBytes, let signature = e.signature, let signer = e.signer
            else { return nil }
            if e.sequence <= head { continue }
            guard (try? e.checkWellFormed()) != nil else { return nil }
            if let k = key {
                guard signer == k else { return nil }
            } else {
                // No key held: only the founder's, which the ledger id proves.
                guard EventChain.ledgerID(founder: device, publicKey: signer) == ledger else { return nil }
            }
            let message = EventChain.message(ledger: ledger, origin: device, sequence: e.sequence, hash: EventChain.hash(e))
            guard Ed25519.verify(signature: signature, message: message, publicKey: signer) else { return nil }
            key = p.publicKey
            head = e.sequence
            moved = true
        }
        return moved ? key : nil
    }
}
