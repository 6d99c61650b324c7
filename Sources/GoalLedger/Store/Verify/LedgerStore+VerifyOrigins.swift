import Foundation

extension LedgerStore {
    /// The ``VerificationCheck/origins`` check: each origin's sequences run 1, 2, 3, … without
    /// gaps, and the recorded heads (`heads`) agree with the log.
    func verifyOrigins(_ log: LogScan, heads: [String: UInt64]) -> [VerificationProblem] {
        var found = ProblemList(.origins)
        for (origin, seqs) in log.sequences.sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
            let sorted = seqs.sorted()
            if sorted != Array(1...UInt64(sorted.count)) {
                let missing = Self.firstMissing(sorted, upTo: 5)
                found.add(
                    "origin \(origin): sequences are not gapless (missing \(missing.map(String.init).joined(separator: ", ")))",
                    origin: origin, sequence: missing.first)
            }
            if heads[origin] != sorted.last {
                found.add(
                    "originHeads: \(origin) is at \(heads[origin].map(String.init) ?? "nothing"), the log at \(sorted.last ?? 0)",
                    origin: origin)
            }
        }
        // In the order of the names' bytes, so that a report reads the same every time.
        for origin in heads.keys.sorted(by: String.bytesPrecede) where log.sequences[origin] == nil {
            found.add("originHeads: \(origin) has no events", origin: origin)
        }
        return found.problems
    }

    /// The first `limit` sequences from 1 on that `sorted` (ascending) lacks, found by a walk of
    /// it: a damaged sequence near `UInt64.max` costs no more than a small one.
    static func firstMissing(_ sorted: [UInt64], upTo limit: Int) -> [UInt64] {
        var missing: [UInt64] = []
        var next: UInt64 = 1
        for s in sorted {
            while next < s, missing.count < limit {
                missing.append(next)
                next += 1
            }
            guard missing.count < limit, s < .max else { break }
            next = max(next, s + 1)
        }
        return missing
    }
}
