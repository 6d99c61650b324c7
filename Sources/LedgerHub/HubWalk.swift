import Foundation
import GoalLedger
import PostgreSQL

/// A hub's events of one ledger as a ``PageWalk`` reads them: each origin by its primary key
/// in chunks (`SELECT … ORDER BY sequence LIMIT`), from the first sequence the pull wants
/// through the hub's head read at its start.
///
/// A record that is damaged, or that contradicts the columns the hub files it under, ends its
/// origin's read: it and the rest of its origin are named in the page's `unreadable`.
struct HubSource: RangedPageSource {
    let hub: Hub
    let ledger: UUID
    /// Each origin's range: the first sequence wanted, the next to read, and the last.
    var ranges = SequenceRanges()

    init(hub: Hub, ledger: UUID) {
        self.hub = hub
        self.ledger = ledger
    }

    mutating func read(_ origin: String, count chunk: Int) throws(LedgerError) -> PageChunk {
        var s = PageChunk()
        guard let (next, last) = ranges.unread(origin) else {
            s.ended = true
            return s
        }
        let rows = try hub.run { () throws(PostgreSQLError) in
            try hub.connection.query(
                """
                SELECT sequence, event_id, hlc, record FROM hub.events
                WHERE ledger = $1 AND origin = $2 AND sequence >= $3 AND sequence <= $4 ORDER BY sequence LIMIT $5
                """,
                [.uuid(ledger), .text(origin), .int64(Int64(clamping: next)), .int64(Int64(clamping: last)), .int64(Int64(chunk))])
        }
        s.events.reserveCapacity(rows.rowCount)
        s.records.reserveCapacity(rows.rowCount)
        if rows.rowCount == 0 { s.ended = true }
        for r in 0..<rows.rowCount {
            let sequence = UInt64(bitPattern: rows.int64(r, 0))
            let id = rows.uuid(r, 1) ?? UUID()
            let hlc = rows.int64(r, 2)
            do throws(LedgerError) {
                try rows.withBytes(r, 3) { (b) throws(LedgerError) in
                    s.events.append(try hub.decode(b, origin: origin, sequence: sequence, id: id, hlc: hlc))
                    s.records.append(Array(b))
                }
                ranges.read(origin, through: sequence)
            } catch {
                let rest = sequence > last ? 1 : Int(clamping: last - sequence + 1)
                s.unreadable = WaitingEvents(origin: origin, sequence: sequence, count: rest, cause: .malformed, reason: error.message)
                s.ended = true
                break
            }
        }
        if ranges.unread(origin) == nil { s.ended = true }
        return s
    }
}

extension PageWalk where Source == HubSource {
    /// A walk of the hub's events of `ledger`, `pageEvents` a page.
    init(hub: Hub, ledger: UUID, pageEvents: Int) {
        self.init(ledger: ledger, source: HubSource(hub: hub, ledger: ledger), pageEvents: pageEvents)
    }
}
