import Foundation

extension LedgerStore {
    /// Trust re-derived from the log: the founder from the signatures (else `recorded`, the
    /// founder the store recorded, as ``recordedFounder(_:)`` reads it), then the fold of the
    /// trust events, each with the signature that covers it, then each origin's cutoff.
    func deriveTrust(_ log: LogScan, heads: [String: UInt64], recorded: (name: String, key: [UInt8])?) -> DerivedTrust {
        let chains = log.chains
        var fold = TrustFold()
        if isSignedLedger {
            search: for (origin, chain) in chains {
                for link in chain {
                    if let s = link?.signer, link?.signature != nil, isFounder(origin, s) {
                        fold.founder = (origin, s)
                        break search
                    }
                }
            }
            fold.founder = fold.founder ?? recorded
        }
        var inputs: [TrustFold.Input] = []
        // For each origin with a trust event, where its next signed link is from each link on
        // (one pass from its end): a log of many trust events far from any signature costs no
        // more than its length.
        var nextSigned: [String: [Int]] = [:]
        for origin in Set(log.trustEvents.map(\.origin)) {
            let chain = chains[origin] ?? []
            var next = [Int](repeating: chain.count, count: chain.count)
            var after = chain.count
            for i in chain.indices.reversed() {
                if let link = chain[i], link.signer != nil, link.signature != nil { after = i }
                next[i] = after
            }
            nextSigned[origin] = next
        }
        for t in log.trustEvents {
            let chain = chains[t.origin] ?? []
            var covering: TrustFold.Signature?
            // The sequence comes from the file: compared before it becomes an index.
            let i = t.sequence >= 1 && t.sequence <= UInt64(chain.count) ? Int(t.sequence) - 1 : -1
            if i >= 0, chain[i]?.previousHash != nil, let j = nextSigned[t.origin]?[i], j < chain.count,
                let link = chain[j], let s = link.signer
            {
                covering = TrustFold.Signature(sequence: UInt64(j + 1), signer: s)
            }
            inputs.append(TrustFold.Input(origin: t.origin, sequence: t.sequence, key: t.key, covering: covering, change: t.change))
        }
        if !isSignedLedger {
            for (origin, chain) in chains {
                if let first = chain.firstIndex(where: { $0?.previousHash != nil }) { fold.firstChained[origin] = UInt64(first + 1) }
            }
        }
        let trust = isSignedLedger && fold.founder == nil ? TrustState() : fold.fold(inputs)
        var cutoffs: [String: UInt64] = [:]
        for (origin, head) in heads {
            var walk = TrustState.CutoffWalk(origin, trust, signedLedger: isSignedLedger)
            for (i, link) in (chains[origin] ?? []).enumerated() {
                guard let link,
                    walk.step(UInt64(i + 1), chained: link.previousHash != nil, signer: link.signature == nil ? nil : link.signer)
                else { break }
            }
            if let c = walk.cut, c < head { cutoffs[origin] = c }
        }
        for (name, d) in trust.devices where heads[name] == nil { if let r = d.revokedAfter { cutoffs[name] = r } }
        return DerivedTrust(state: trust, cutoffs: cutoffs)
    }

    /// The founder this store recorded when it created or first met the ledger, when the
    /// ledger's id is made from that device's name and key (it is, by construction, for the
    /// founding store): the founder of a log that holds none of its signatures yet (a store just
    /// created, nothing appended). Nil otherwise. The only way the store reads the row, so that
    /// a damaged or altered one lends its name and key nothing.
    func recordedFounder(_ txn: borrowing StoreTransaction) throws -> (name: String, key: [UInt8])? {
        guard let recorded = try txn.founder(), isFounder(recorded.name, recorded.key) else { return nil }
        return recorded
    }

    /// The ``VerificationCheck/trust`` check: the trust table (each device's keys, parent and
    /// revocation, and the sequence its events count through) equals `derived`, trust
    /// re-derived from the log.
    /// With `damaged` records in the log, the log's trust is incomplete: a difference would only
    /// repeat the damage, and nothing is reported.
    func verifyTrust(_ txn: borrowing StoreTransaction, damaged: Int, _ derived: DerivedTrust) throws -> [VerificationProblem] {
        var found = ProblemList(.trust)
        let storedTrust = try txn.trustState()
        let storedCutoffs = try txn.revocations()
        guard damaged == 0 else { return [] }
        let trust = derived.state
        func keys(_ d: TrustState.Device?) -> String {
            d.map { $0.keys.map { "\(EventChain.fingerprint($0.key)) from \($0.from)" }.joined(separator: ", ") } ?? "none"
        }
        func describe(_ d: TrustState.Device?) -> String {
            guard let d else { return "unknown" }
            return "enrolled by \(d.parent ?? "nobody (a root)")" + (d.revokedAfter.map { ", revoked after \($0)" } ?? "")
        }
        for name in Set(trust.devices.keys).union(storedTrust.devices.keys).sorted(by: String.bytesPrecede) {
            let want = trust.devices[name]
            let have = storedTrust.devices[name]
            if want?.keys != have?.keys {
                found.add("trust: the keys of \(name) are \(keys(have)) in the table, \(keys(want)) by the log", origin: name)
            }
            if want?.revokedAfter != have?.revokedAfter || want?.parent != have?.parent {
                found.add("trust: \(name) is \(describe(have)) in the table, \(describe(want)) by the log", origin: name)
            }
        }
        let derivedCutoffs = derived.cutoffs
        for name in Set(derivedCutoffs.keys).union(storedCutoffs.keys).sorted(by: String.bytesPrecede) {
            if derivedCutoffs[name] != storedCutoffs[name] {
                found.add(
                    "trust: \(name)'s events count through \(storedCutoffs[name].map(String.init) ?? "its head") in the table, \(derivedCutoffs[name].map(String.init) ?? "its head") by the log",
                    origin: name)
            }
        }
        return found.problems
    }
}
