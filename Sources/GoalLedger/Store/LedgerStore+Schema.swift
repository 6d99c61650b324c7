import Foundation
import LMDB

extension LedgerStore {
    /// The event schema recorded in the store (1 when the record is missing, as in the oldest stores).
    static func schema(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> Int {
        Int(try StoredProjection.u64(txn, layout.meta, MetaKey.schema) ?? 1)
    }
}
