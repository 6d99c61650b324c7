import Foundation

extension StoredProjection.Batch {
    /// Every goal header as this batch sees it (rows the batch changed, goals it created), in
    /// no particular order: what a move's key is computed among. It reads every header, so a
    /// move costs the number of goals, as listing them does.
    func goals(_ txn: borrowing StoreTransaction) throws -> [GoalState] {
        var out: [GoalState] = []
        var stored = Set<UUID>()
        try txn.scan(tables.goals) { key, value in
            let id = StoredProjection.uuid(key)
            stored.insert(id)
            if let h = headers[id] {
                out.append(h)
            } else {
                out.append(
                    try StoredProjection.decoded { () throws(RecordDecodingError) in try ProjectionCodec.decodeHeader(value, id: id) })
            }
            return true
        }
        for (id, h) in headers where !stored.contains(id) { out.append(h) }
        return out
    }
}
