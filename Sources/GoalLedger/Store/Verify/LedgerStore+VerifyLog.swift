import Foundation

/// What one read of the log gathers: the log check's problems, and what the checks after it
/// compare the rest of the store with.
struct LogScan {
    /// The `log` check's problems, each at the record it was found at.
    var problems = ProblemList(.log)
    /// The records read.
    var events: UInt64 = 0
    /// The records that do not decode.
    var damaged = 0
    /// Each decoded event's entries in the origin and device indexes, in the order the records
    /// were read.
    var indexEntries: [IndexEntry] = []
    /// The events' ids with their positions, in id order.
    var ids: [(key: IDWords, position: UInt64)] = []
    /// The goal events' goals with their positions, in goal then position order.
    var goals: [(key: IDWords, position: UInt64)] = []
    /// Each origin's sequences, as the log holds them.
    var sequences: [String: [UInt64]] = [:]
    /// Each origin's chain links by sequence, hashed from the records as they were read.
    var chains: [String: [ChainLink?]] = [:]
    /// The trust events, for the trust fold re-derived from the log.
    var trustEvents: [(origin: String, sequence: UInt64, key: CanonicalKey, change: TrustChange)] = []
    /// A fresh replay of the log, through its last position.
    var projection: GoalProjection
    /// The events that fail the gate, in position order, and the rows the set-aside table
    /// should hold for them.
    var setAside: [SetAsideEvent] = []
    var setAsideRows: [[UInt8]: [UInt8]] = [:]

    /// Where a decoded event should be in the origin and device indexes.
    struct IndexEntry {
        /// The record's place in the read.
        let record: Int
        let position: UInt64
        let origin: String
        let sequence: UInt64
        /// Whether it is about a goal (in the goal index) rather than the device (in the device
        /// index).
        let aboutGoal: Bool
    }

    /// The goal events, counted for the index sizes.
    var goalIndexed: Int { goals.count }
    /// The device events, counted for the index sizes.
    var deviceIndexed: Int { indexEntries.count - goals.count }

    /// Takes in the event decoded from the record at `position`, the `record`th read.
    mutating func take(_ event: Event, bytes value: UnsafeRawBufferPointer, at position: UInt64, record: Int) {
        ids.append((IDWords(event.id), position))
        if event.sequence >= 1, event.sequence <= UInt64(Int32.max) {
            // An unsigned record hashes as stored; a signed one without its signature.
            let link = ChainLink(
                hash: event.signature == nil ? EventChain.hash(record: value) : EventChain.hash(event),
                previousHash: event.previousHash, signature: event.signature, signer: event.signer, position: position)
            chains[event.origin, default: []].place(link, at: Int(event.sequence) - 1)
        }
        let goal = event.payload.goal
        indexEntries.append(
            IndexEntry(record: record, position: position, origin: event.origin, sequence: event.sequence, aboutGoal: goal != nil))
        if let goal { goals.append((IDWords(goal), position)) }
        sequences[event.origin, default: []].append(event.sequence)
        if let change = event.trustChange { trustEvents.append((event.origin, event.sequence, event.key, change)) }
        do throws(FieldError) {
            try event.checkContent()
            projection.fold(event)
        } catch {
            let reason = SetAsideEvent.reason(error)
            setAsideRows[position.bigEndianBytes] = Array(reason.utf8)
            setAside.append(SetAsideEvent(position: position, id: event.id, origin: event.origin, sequence: event.sequence, reason: reason))
        }
    }
}

extension LedgerStore {
    /// The ``VerificationCheck/log`` check, in the one read of the log every check uses: every
    /// key is a position, the positions are gapless, every record decodes. It folds the events
    /// into a fresh replay and gathers what the other checks compare with.
    func verifyLog(_ txn: borrowing StoreTransaction, rule: HistoryRule) throws -> LogScan {
        var scan = LogScan(projection: GoalProjection(historyRule: rule))
        // What counts is the derived trust's; a difference from the table is the trust check's.
        scan.projection.revokedAfter = try txn.revocations()
        var expected: UInt64 = 1
        var record = 0
        let progress = verifyProgress
        progress?(.log, 0)
        try txn.scan(layout.events) { key, value in
            defer { record += 1 }
            let position = UInt64(bigEndianBytes: key)
            if record & 255 == 0 { progress?(.log, position) }
            if key.count != 8 { scan.problems.add("events: a key of \(key.count) bytes is not a position", record: record) }
            if position != expected {
                scan.problems.add("events: position \(expected) is missing (next is \(position))", position: expected, record: record)
            }
            expected = position + 1
            scan.events += 1
            let event: Event
            do {
                event = try EventCodec.decode(value)
            } catch {
                scan.damaged += 1
                scan.problems.add("event at position \(position) is damaged: \(error)", position: position, record: record)
                return true
            }
            scan.take(event, bytes: value, at: position, record: record)
            return true
        }
        scan.projection.position = scan.events
        // In key order, for the walks over the id and goal indexes.
        scan.ids.sort { $0.key < $1.key }
        scan.goals.sort { $0.key != $1.key ? $0.key < $1.key : $0.position < $1.position }
        return scan
    }
}
