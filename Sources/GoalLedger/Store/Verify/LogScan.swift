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

    /// The rows the origin index should hold: each origin's runs of consecutive sequences at
    /// consecutive positions (``OriginRun``), counted in the order the records were read.
    var originRuns: Int {
        var last: [String: (sequence: UInt64, position: UInt64)] = [:]
        var runs = 0
        for e in indexEntries {
            let goesOn = last[e.origin].map { e.sequence == $0.sequence &+ 1 && e.position == $0.position &+ 1 } ?? false
            if !goesOn { runs += 1 }
            last[e.origin] = (e.sequence, e.position)
        }
        return runs
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
