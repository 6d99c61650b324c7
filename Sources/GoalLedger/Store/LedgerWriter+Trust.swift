import Foundation
import Sodium

extension LedgerWriter {
    /// Appends a `deviceEnrolled` for `device` (this store's own, or a new device a clone
    /// creates), signed by this device.
    @discardableResult
    func enrol(device: String, key: [UInt8], from: UInt64, signingKey: SigningKey? = nil, now: Instant = .systemNow) throws(LedgerError)
        -> AppendResult
    {
        let draft = EventDraft(payload: .deviceEnrolled(DeviceEnrolled(device: device, publicKey: key, from: from)))
        return try append([draft], lines: nil, expectedVersion: nil, now: now, enrolling: true, signingKey: signingKey)[0]
    }

    /// The trust state the table holds, as this transaction has changed it.
    func trustState() throws(LedgerError) -> TrustState {
        try run("reading \(store.path)") { try txn.trustState() }
    }

    /// Enrols another device's public key (32 bytes), signed by this device: the device may then
    /// write under `device` from its first sequence, and sits below this one in the enrolment
    /// tree. The pairing step for a device that joined from a hub; `clone` from a store does it
    /// itself. A name the ledger knows already (enrolled, revoked or writing) is refused.
    @discardableResult
    public func enrol(device other: String, publicKey: [UInt8], now: Instant) throws(LedgerError) -> AppendResult {
        guard DeviceName.isValid(other) else { throw LedgerError(.invalidInput, "invalid device name \"\(other)\"") }
        guard other != device else { throw LedgerError(.invalidInput, "device \(device) cannot enrol itself") }
        guard publicKey.count == SigningKey.publicKeyBytes else {
            throw LedgerError(.invalidInput, "a device key is 32 bytes (64 hexadecimal digits), got \(publicKey.count)")
        }
        let state = try trustState()
        if let known = state.devices[other] {
            throw LedgerError(
                .invalidInput,
                known.revokedAfter != nil
                    ? "device \(other) was revoked; a revoked name is never enrolled again: choose another name"
                    : "device \(other) is already enrolled in this ledger")
        }
        guard let me = state.devices[device], me.revokedAfter == nil else {
            throw LedgerError(
                "device \(device) is not enrolled itself, so it cannot vouch for \(other)",
                reason: .signerNotTrusted(device: device))
        }
        return try enrol(device: other, key: publicKey, from: 1, now: now)
    }

    /// Revokes a device below this one in the enrolment tree (lost, stolen or retired): its
    /// events after the last sequence this store holds of it, and those of every device it
    /// enrolled, are refused by every store that learns of the revocation. A device that has
    /// written nothing is revoked from its first event. A revoked name is never enrolled again.
    @discardableResult
    public func revoke(device other: String, now: Instant) throws(LedgerError) -> AppendResult {
        try append([EventDraft(payload: .deviceRevoked(DeviceRevoked(device: other)))], now: now)[0]
    }

    /// Replaces this device's key with a new one: the rotation is signed by the current key,
    /// and the new key signs from the next event on (later calls of this writer included). The
    /// new key is staged in the store's key store before the write commits and made current
    /// once it has; a write that rolls back leaves the current key as it was (the staged key is
    /// discarded when the store next opens).
    @discardableResult
    public func rotateKey(now: Instant) throws(LedgerError) -> AppendResult {
        let state = try trustState()
        guard let me = state.devices[device], me.revokedAfter == nil else {
            throw LedgerError(.store, "device \(device) holds no key to rotate")
        }
        let keys = store.keys
        let stored = effects.rotatedKey == nil ? try keys.key(ledger: store.ledgerID, device: device) : nil
        guard let current = effects.rotatedKey ?? stored else {
            throw LedgerError.signingKeyMissing(device: device, path: store.path)
        }
        // The key store must be able to take the new key: tried with the current one first,
        // so that a store that cannot never writes a rotation it could not follow.
        if effects.rotatedKey == nil { try keys.replace(current, ledger: store.ledgerID, device: device) }
        let next = SigningKey.generate()
        // The new key is durable before the rotation commits: a process that dies after the
        // commit leaves it staged, and the store adopts it when it opens.
        try keys.stage(next, ledger: store.ledgerID, device: device)
        let head = try run("reading \(store.path)") { try txn.ownHead(device) }
        let result = try enrol(device: device, key: next.publicKey, from: head + 2, signingKey: effects.rotatedKey, now: now)
        effects.rotatedKey = next
        return result
    }
}
