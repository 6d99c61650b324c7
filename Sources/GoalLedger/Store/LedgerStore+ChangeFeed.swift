import Foundation

extension LedgerStore {
    /// Changes after `checkpoint` up to the projection's checkpoint, and the position reached.
    func changes(after checkpoint: UInt64, limit: Int) throws(LedgerError) -> ([ProjectionChange], UInt64) {
        try readTransaction { txn in
            let committed = try txn.projectionStatus().checkpoint
            var out: [ProjectionChange] = []
            var reached = checkpoint
            guard checkpoint < committed else { return (out, max(checkpoint, committed)) }
            try txn.scan(layout.events, from: (checkpoint + 1).bigEndianBytes) { key, value in
                let position = UInt64(bigEndianBytes: key)
                guard position <= committed, out.count < limit else { return false }
                let e = try Self.decodeRecord(value, position: position)
                reached = position
                // A set-aside event changed nothing.
                guard e.isFoldable else { return true }
                out.append(
                    ProjectionChange(
                        position: position, goal: e.payload.goal, device: e.payload.goal == nil ? e.origin : nil, type: e.type))
                return true
            }
            return (out, reached)
        }
    }
}
