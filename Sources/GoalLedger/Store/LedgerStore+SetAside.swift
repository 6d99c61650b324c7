import Foundation
import LMDB

extension LedgerStore {

    static func setAsideEvents(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [SetAsideEvent] {
        let tables = try StoredProjection.active(txn, layout)
        var out: [SetAsideEvent] = []
        try txn.scan(tables.setAside) { key, value in
            let position = UInt64(bigEndianBytes: key)
            guard let e = try event(at: position, txn, layout) else {
                throw LedgerError.damaged("the set-aside table names position \(position), which holds no event", position: position)
            }
            out.append(
                SetAsideEvent(
                    position: position, id: e.id, origin: e.origin, sequence: e.sequence, reason: String(decoding: value, as: UTF8.self)))
            return true
        }
        return out
    }
}
