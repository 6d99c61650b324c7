import Foundation
import LMDB
import Sodium

/// What `append` did with one submitted event.
public struct AppendResult: Equatable, Sendable {
    /// The event's id: the draft's, or the one the ledger made.
    public var id: UUID
    /// The event's position in the store's log (for a duplicate, the original's).
    public var position: UInt64
    /// The event's clock reading (for a duplicate, the original's).
    public var hlc: HLC
    /// True when an event with this id was already in the store (nothing was written for it).
    public var duplicate: Bool

    /// `{"id","position","hlc","duplicate"}`, the clock as 16 hex digits.
    public var json: JSONValue {
        .object([
            ("id", .string(id.uuidString)), ("position", .number(Double(position))),
            ("hlc", .string(hlc.description)), ("duplicate", .bool(duplicate)),
        ])
    }
}

extension LedgerWriter {
    /// Appends `drafts` as one atomic batch authored by the local device.
    ///
    /// - An event whose id is already stored (or earlier in the batch) is not written again; its
    ///   result reports the original position with `duplicate` set.
    /// - Every draft passes the gate (`EventDraft.checkWellFormed()`), then the store's rules.
    ///   Any invalid event refuses the whole batch: nothing is written. Errors name the event by
    ///   its number in `lines` when given, else by the line it was read from
    ///   (`EventDraft.line`), else by its place in the batch ("event 2 of the batch").
    /// - `expectedVersion`: the batch must be about exactly one goal, whose version (the number of
    ///   events about it in this store) must equal this value before the batch; 0 means the goal
    ///   does not exist yet. A mismatch throws `versionConflict`.
    /// - `now` is the wall time of events that carry no `at`.
    ///
    /// A refused batch ends the write: nothing of the write is committed (see ``LedgerWriter``).
    @discardableResult
    public func append(
        _ drafts: [EventDraft], lines: [Int]? = nil, expectedVersion: Int? = nil, now: Instant
    ) throws(LedgerError) -> [AppendResult] {
        try append(drafts, lines: lines, expectedVersion: expectedVersion, now: now, enrolling: false, signingKey: nil)
    }

    /// `append`, also for the store's own enrolments (`enrolling`), signed with `signingKey`
    /// when given (the founder's first event, before its key is enrolled), else with a key this
    /// write rotated to, else with the device's key once it is enrolled.
    func append(
        _ drafts: [EventDraft], lines: [Int]?, expectedVersion: Int?, now: Instant, enrolling: Bool, signingKey: SigningKey?
    ) throws(LedgerError) -> [AppendResult] {
        try run("appending to \(store.path)") {
            try store.append(
                drafts, lines: lines, expectedVersion: expectedVersion, now: now, enrolling: enrolling,
                signingKey: signingKey ?? effects.rotatedKey, schema: schema, txn)
        }
    }
}

extension LedgerStore {
    /// The longest run of a device's events one signature closes: a batch longer than this is
    /// signed every this many events too (a signature costs about 43 µs).
    package static let signedRunLength = 4_096

    /// The body of ``LedgerWriter/append(_:lines:expectedVersion:now:)`` in the write
    /// transaction `txn`, for a store on `schema`.
    func append(
        _ drafts: [EventDraft], lines: [Int]?, expectedVersion: Int?, now: Instant, enrolling: Bool, signingKey: SigningKey?,
        schema: Int, _ txn: borrowing Transaction
    ) throws -> [AppendResult] {
        let device = self.device
        let rule = HistoryRule(schema: schema)
        try self.checkBeforeWriting(txn, layout)
        var clock = try Self.clock(txn, layout)
        var sequence =
            try StoredProjection.u64(txn, layout.originHeads, Array(device.utf8)) ?? 0
        var position = try Self.lastPosition(txn, layout)
        let tables = try StoredProjection.active(txn, layout)
        let heads = try Self.originHeads(txn, layout)
        let signer = try signingKey ?? self.signer(txn)
        // The chain continues from this device's last event.
        var previous = try signer.map { _ in try Self.chainHash(device, sequence, txn, layout) }
        // The batch's new events, indexed together after the loop (each index in its key
        // order); what the rules look up among them is found here first.
        var newEvents: [Event] = []
        var newRecords: [[UInt8]] = []
        newEvents.reserveCapacity(drafts.count)
        newRecords.reserveCapacity(drafts.count)
        let firstNew = position + 1
        var newGoalEvents: [UUID: Int] = [:]
        func batchEvent(_ id: UUID) -> Event? {
            guard let p = seen[id]?.position, p >= firstNew, !seen[id]!.duplicate else { return nil }
            return newEvents[Int(p - firstNew)]
        }
        var seen: [UUID: AppendResult] = [:]
        seen.reserveCapacity(drafts.count)
        var results: [AppendResult] = []
        results.reserveCapacity(drafts.count)

        var batch = StoredProjection.Batch(tables: tables, layout: layout)
        let wroteTrust = drafts.contains { $0.payload.trustChange != nil || $0.payload.type == .deviceRevoked }
        // A revocation's rules read the ledger's trust.
        let trust = drafts.contains { $0.payload.type == .deviceRevoked } ? try TrustTable.load(txn, layout) : TrustState()

        /// What the rules need of the goal's stored state: for progress, only whether it
        /// exists, is deleted and its kind (no header decode); for a removal, that one
        /// entry; otherwise the registers and tags. A goal with a long history costs no
        /// more to append to.
        func goalState(_ id: UUID, for payload: Payload, _ txn: borrowing Transaction) throws -> GoalState {
            switch payload {
            case .progressRecorded:
                return try batch.status(id, txn)
            case .goalCreated:
                // The id must be new: no event at all may name it yet.
                var s = try batch.header(id, txn)
                s.version = try StoredProjection.version(of: id, txn, layout) + newGoalEvents[id, default: 0]
                return s
            case .progressRemoved(let p):
                var s = try batch.header(id, txn)
                let inBatch: ProgressEntry? = batchEvent(p.entry).flatMap { e in
                    guard case .progressRecorded(let r) = e.payload, r.goal == id else { return nil }
                    return ProgressEntry(e, r)
                }
                if let entry = try inBatch ?? StoredProjection.entry(p.entry, of: id, txn, layout) {
                    s.recordedEntries[p.entry] = entry
                    if try txn.get(tables.removed, key: id.bytes + p.entry.bytes) != nil { s.removedEntries.insert(p.entry) }
                    return s
                }
                // Not a progressRecorded: perhaps an entry of a migrated schema-1 history.
                return try StoredProjection.withEntries(s, txn, tables, layout, rule: rule)
            case .progressHistoryReplaced(let p):
                // The rules need the base write only: look it up by id, not the history.
                var s = try batch.header(id, txn)
                if let base = p.base, let e = try batchEvent(base) ?? Self.event(id: base, txn, layout),
                    case .progressHistoryReplaced(let b) = e.payload, b.goal == id
                {
                    s.record(e)
                }
                return s
            default:
                return try batch.header(id, txn)
            }
        }

        var renumbered: [AppendResult] = []

        /// Applies the rules to `draftPayload`, then writes it as the next event of the batch.
        func write(
            _ draftPayload: Payload, id: UUID, at: Instant, line: Int?, index: Int, _ txn: borrowing Transaction
        ) throws -> AppendResult {
            // The state is read in its own scope: holding a copy while the cached state is
            // mutated below would copy its entries on every append.
            let (payload, deletionsSeen) = try {
                let state = try draftPayload.goal.map { g in try goalState(g, for: draftPayload, txn) }
                let author = try batch.device(device, txn)
                do throws(FieldError) {
                    let payload = try LocalRules.prepare(
                        draftPayload, id: id, at: at, goal: state, author: author, schema: schema,
                        seen: heads.merging([device: sequence]) { _, b in b }, enrolling: enrolling, trust: trust)
                    return (payload, state.map(\.deletionHeads))
                } catch {
                    throw LedgerError.invalidEvent(line: line, index: index + 1, error)
                }
            }()
            clock = clock.advanced(to: at)
            guard clock.isSupported else {
                throw LedgerError.invalidEvent(
                    line: line, index: index + 1,
                    FieldError("at", "the store's clock has reached the end of 9999 (\(HLC.latest)): no later reading exists"))
            }
            sequence += 1
            position += 1
            var event = Event(
                id: id, origin: device, sequence: sequence, hlc: clock, at: at,
                schema: UInt8(schema), payload: payload, deletionsSeen: deletionsSeen)
            if let p = previous { event.previousHash = p }
            // One encoding serves the log and, while the event is unsigned, its hash.
            let record = EventCodec.encode(event)
            if previous != nil { previous = EventChain.hash(record: record) }
            try batch.apply(event, at: position, checked: true, txn)
            if let goal = event.payload.goal { newGoalEvents[goal, default: 0] += 1 }
            newEvents.append(event)
            newRecords.append(record)
            return AppendResult(id: id, position: position, hlc: clock, duplicate: false)
        }

        if let expectedVersion {
            let touched = Set(drafts.compactMap(\.payload.goal))
            guard touched.count == 1, let goal = touched.first else {
                throw LedgerError(
                    .invalidArgument, "an expected version needs a batch about exactly one goal (this one is about \(touched.count))")
            }
            let actual = try StoredProjection.version(of: goal, txn, layout)
            guard actual == expectedVersion else {
                throw LedgerError(
                    "goal \(goal.uuidString) is at version \(actual), expected \(expectedVersion); nothing was appended",
                    reason: .versionConflict(goal: goal, expected: expectedVersion, actual: actual))
            }
        }

        for (index, draft) in drafts.enumerated() {
            let line = lines.map { index < $0.count ? $0[index] : index + 1 } ?? draft.line
            do throws(FieldError) {
                if !draft.passedGate { try draft.checkWellFormed() }
            } catch {
                throw LedgerError.invalidEvent(line: line, index: index + 1, error)
            }
            if let id = draft.id {
                if let earlier = seen[id] {
                    results.append(AppendResult(id: id, position: earlier.position, hlc: earlier.hlc, duplicate: true))
                    continue
                }
                if let stored = try txn.get(layout.eventIds, key: id.bytes) {
                    let p = UInt64(bigEndianBytes: stored)
                    guard let original = try Self.event(at: p, txn, layout) else {
                        throw LedgerError.damaged("the id index names position \(p), which holds no event", position: p)
                    }
                    results.append(AppendResult(id: id, position: p, hlc: original.hlc, duplicate: true))
                    continue
                }
            }
            let id = draft.id ?? EventIDs.next()
            let at = draft.at ?? now
            var payload = draft.payload
            if case .goalMoved(var move) = payload, move.key == nil, let placement = move.placement {
                // The key is computed among the goals as the batch has left them; a move that
                // finds no room renumbers the live goals first, in the same batch.
                let goals = try batch.goals(txn)
                let plan: GoalOrder.Plan
                do throws(FieldError) {
                    try EventType.goalMoved.checkInCatalog(schema: schema)
                    plan = try GoalOrder.place(move.goal, placement, among: goals, next: clock.advanced(to: at))
                } catch {
                    throw LedgerError.invalidEvent(line: line, index: index + 1, error)
                }
                for (goal, key) in plan.renumbered {
                    let renumbering = Payload.goalMoved(GoalMoved(goal: goal, placement: nil, key: key, replaces: nil))
                    renumbered.append(try write(renumbering, id: EventIDs.next(), at: at, line: line, index: index, txn))
                }
                move.key = plan.key
                payload = .goalMoved(move)
            }
            let result = try write(payload, id: id, at: at, line: line, index: index, txn)
            seen[id] = result
            results.append(result)
        }
        // The renumbering moves a store wrote follow the drafts' results.
        results += renumbered
        // A batch of duplicates (or none) writes nothing at all.
        if results.contains(where: { !$0.duplicate }) {
            // One signature per batch, on its last event: it vouches for the chain. A long batch
            // is also signed every `signedRunLength` events, so that no run a peer must take
            // whole (a page of a pull, a part of a push) is longer than that.
            if let signer, let last = newEvents.last, let hash = previous {
                for i in stride(from: Self.signedRunLength - 1, to: newEvents.count - 1, by: Self.signedRunLength) {
                    var signed = newEvents[i]
                    signed.signature = signer.sign(
                        EventChain.message(
                            ledger: ledgerID, origin: device, sequence: signed.sequence, hash: EventChain.hash(record: newRecords[i])))
                    signed.signer = signer.publicKey
                    newRecords[i] = EventCodec.encode(signed)
                }
                var signed = last
                signed.signature = signer.sign(
                    EventChain.message(ledger: ledgerID, origin: device, sequence: last.sequence, hash: hash))
                signed.signer = signer.publicKey
                newRecords[newRecords.count - 1] = EventCodec.encode(signed)
            }
            try Self.index(newEvents, records: newRecords, order: Array(newEvents.indices), from: firstNew, txn, layout)
            try Self.finish(&batch, clock: clock, through: position, txn, layout)
            try txn.put(layout.originHeads, key: Array(device.utf8), value: sequence.bigEndianBytes)
            // An enrolment, rotation or revocation: the trust table is derived anew.
            if wroteTrust { try self.recomputeTrust(txn) }
        }
        return results
    }

    /// The last step of every batch of new events, appended or imported: the projection's rows,
    /// the clock, and the projection's checkpoint at the batch's last position.
    static func finish(
        _ batch: inout StoredProjection.Batch, clock: HLC, through position: UInt64, _ txn: borrowing Transaction, _ layout: StoreLayout
    ) throws {
        try batch.flush(txn)
        try txn.put(layout.meta, key: MetaKey.hlc, value: clock.rawValue.bigEndianBytes)
        try txn.put(layout.meta, key: MetaKey.projectionCheckpoint, value: position.bigEndianBytes)
    }

    /// Writes `events[order[k]]` (stored as `records[order[k]]`) and its index entries at
    /// position `first + k`: the log appended at its end, and each index's entries written in
    /// its key order, so that a large batch visits each B-tree page once instead of at random.
    static func index(
        _ events: [Event], records: [[UInt8]], order: [Int], from first: UInt64, _ txn: borrowing Transaction, _ layout: StoreLayout
    ) throws {
        func sortKey(_ id: UUID) -> (UInt64, UInt64) {
            withUnsafeBytes(of: id.uuid) {
                ($0.loadUnaligned(as: UInt64.self).bigEndian, $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).bigEndian)
            }
        }
        var ids: [(key: (UInt64, UInt64), position: UInt64)] = []
        var goals: [(key: (UInt64, UInt64), position: UInt64)] = []
        var origins: [(at: Int, position: UInt64)] = []
        ids.reserveCapacity(order.count)
        goals.reserveCapacity(order.count)
        origins.reserveCapacity(order.count)
        var position = first
        for i in order {
            try withUnsafeBytes(of: position.bigEndian) { pos in
                try records[i].withUnsafeBytes { try txn.put(layout.events, key: pos, value: $0, options: .append) }
            }
            ids.append((sortKey(events[i].id), position))
            if let goal = events[i].payload.goal {
                goals.append((sortKey(goal), position))
            } else {
                try txn.put(layout.deviceEvents, key: StoreLayout.deviceKey(events[i].origin, position), value: [])
            }
            origins.append((i, position))
            position += 1
        }
        func bytes(_ key: (UInt64, UInt64)) -> [UInt8] { key.0.bigEndianBytes + key.1.bigEndianBytes }
        // Where every key of the batch sorts after the table's last (a store's first pull, a
        // new goal), LMDB appends them to the table's last page instead of searching for each.
        ids.sort { $0.key < $1.key }
        if let first = ids.first {
            let options = try txn.orderedPutOptions(layout.eventIds, from: bytes(first.key), .noOverwrite)
            for (key, position) in ids {
                try withUnsafeBytes(of: position.bigEndian) { pos in
                    try withUnsafeBytes(of: (key.0.bigEndian, key.1.bigEndian)) {
                        try txn.put(layout.eventIds, key: $0, value: pos, options: options)
                    }
                }
            }
        }
        goals.sort { $0.key == $1.key ? $0.position < $1.position : $0.key < $1.key }
        if let first = goals.first {
            // A goal's first position is appended as a new key, its later ones as duplicates.
            let appending = try txn.sortsAfterLast(layout.goalEvents, bytes(first.key))
            var previous: (UInt64, UInt64)?
            for (key, position) in goals {
                let options: Transaction.PutOptions = !appending ? [] : previous.map { $0 == key } == true ? .appendDuplicate : .append
                previous = key
                try withUnsafeBytes(of: position.bigEndian) { pos in
                    try withUnsafeBytes(of: (key.0.bigEndian, key.1.bigEndian)) {
                        try txn.put(layout.goalEvents, key: $0, value: pos, options: options)
                    }
                }
            }
        }
        origins.sort { a, b in
            let x = events[a.at]
            let y = events[b.at]
            return x.origin == y.origin ? x.sequence < y.sequence : String.bytesPrecede(x.origin, y.origin)
        }
        if let first = origins.first {
            let firstKey = StoreLayout.originKey(events[first.at].origin, events[first.at].sequence)
            let options = try txn.orderedPutOptions(layout.origins, from: firstKey, .noOverwrite)
            for (i, position) in origins {
                try txn.put(
                    layout.origins, key: StoreLayout.originKey(events[i].origin, events[i].sequence), value: position.bigEndianBytes,
                    options: options)
            }
        }
    }
}
