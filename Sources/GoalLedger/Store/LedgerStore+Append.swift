import Foundation
import Sodium

extension LedgerStore {
    /// The longest run of a device's events one signature closes: a batch longer than this is
    /// signed every this many events too (a signature costs about 43 µs).
    package static let signedRunLength = 4_096

    /// The body of ``LedgerWriter/append(_:lines:expectedVersion:now:)`` in the write
    /// transaction `txn`, for a store on `schema`: each draft passes the gate and the rules and
    /// becomes the next event of one `LocalBatch`, which then signs, indexes and folds them.
    func append(
        _ drafts: [EventDraft], lines: [Int]?, expectedVersion: Int?, now: Instant, enrolling: Bool, signingKey: SigningKey?,
        schema: Int, _ txn: borrowing StoreTransaction
    ) throws -> [AppendResult] {
        try checkBeforeWriting(txn)
        var batch = try LocalBatch(store: self, drafts: drafts, schema: schema, enrolling: enrolling, signingKey: signingKey, txn)
        if let expectedVersion { try batch.checkVersion(expectedVersion, of: drafts, txn) }
        // Each draft is read in place (an iteration would copy it out of the array).
        for index in drafts.indices {
            let line = lines.map { index < $0.count ? $0[index] : index + 1 } ?? drafts[index].line
            try batch.add(drafts[index], index: index, line: line, now: now, txn)
        }
        return try batch.commit(txn)
    }

}
