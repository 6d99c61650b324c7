import Foundation
import Sodium

extension LedgerStore {
    /// The ``VerificationCheck/chains`` check: every origin's hash chain links, and every
    /// signature verifies with the key it names; those within what counts were made by the key
    /// `derived` trust gives the origin. Also counts the events no signature covers.
    func verifyChains(_ log: LogScan, _ derived: DerivedTrust, heads: [String: UInt64]) -> (
        problems: [VerificationProblem], unsignedEvents: Int
    ) {
        // With a damaged record, a chain breaks at it: the break would only repeat the damage.
        guard log.damaged == 0 else { return ([], 0) }
        var found = ProblemList(.chains)
        var unsignedEvents = 0
        let trust = derived.state
        for (origin, head) in heads.sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
            var previous = Hash32(EventChain.genesis)
            var signedEvents = 0
            let chain = log.chains[origin] ?? []
            let cutoff = derived.cutoffs[origin] ?? head
            for sequence in 1...max(head, 1) where head > 0 {
                guard sequence <= UInt64(chain.count), let e = chain[Int(sequence) - 1] else { break }
                func problem(_ message: String) { found.add(message, position: e.position, origin: origin, sequence: sequence) }
                if let h = e.previousHash {
                    if h != previous { problem("chain: \(origin)/\(sequence) does not follow \(origin)/\(sequence - 1)") }
                    signedEvents += 1
                } else if sequence <= cutoff, isSignedLedger || trust.key(origin, at: sequence) != nil {
                    problem("chain: \(origin)/\(sequence) is not signed")
                }
                previous = e.hash
                if let signature = e.signature, let signer = e.signer {
                    let trusted = sequence > cutoff || trust.key(origin, at: sequence) == signer
                    let message = EventChain.message(ledger: ledgerID, origin: origin, sequence: sequence, hash: previous.bytes)
                    if !trusted {
                        problem("signature: \(origin)/\(sequence) is signed by a key not enrolled for \(origin)")
                    } else if !Ed25519.verify(signature: signature, message: message, publicKey: signer) {
                        problem("signature: \(origin)/\(sequence) does not verify")
                    }
                }
            }
            // Saturating: a damaged head of any size is counted, never trapped on.
            let (sum, overflow) = unsignedEvents.addingReportingOverflow(Int(clamping: head) - signedEvents)
            unsignedEvents = overflow ? .max : sum
        }
        return (found.problems, unsignedEvents)
    }
}
