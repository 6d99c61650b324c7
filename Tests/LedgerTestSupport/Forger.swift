import Foundation
import GoalLedger
import Sodium

/// A test-only forger: events built with the ledger's own codec and chain, signed by a key of
/// the attacker's choice, as a stolen device, a hostile hub or a copied store could make them.
public enum Forger {
    /// `payload` as the next event of `origin` after what `store` holds of it, signed by `key`.
    public static func next(_ payload: Payload, origin: String, after store: LedgerStore, key: SigningKey, clock: UInt64 = 1_000) throws -> Event {
        let head = try store.originHeads()[origin] ?? 0
        let last = head > 0 ? try store.event(origin: origin, sequence: head) : nil
        var e = Event(
            id: UUID(), origin: origin, sequence: head + 1, hlc: HLC(rawValue: (last?.hlc.rawValue ?? 0) + clock),
            at: last?.at ?? Instant(milliseconds: 1_793_000_000_000), schema: 2, payload: payload)
        e.previousHash = last.map(EventChain.hash) ?? EventChain.genesis
        e.signer = key.publicKey
        e.signature = key.sign(EventChain.message(ledger: store.ledgerID, origin: origin, sequence: e.sequence, hash: EventChain.hash(e)))
        return e
    }
}
