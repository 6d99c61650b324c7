import Foundation
import Sodium

/// One batch of the store device's own new events, in the write transaction that appends them:
/// the drafts pass the gate and the store's rules one by one, each becoming the next event of
/// the device's chain (folded into the projection as it comes), then `commit` signs the runs,
/// writes the log and its indexes and flushes the projection. A step that throws ends the
/// write, so nothing of a refused batch is committed.
struct LocalBatch {
    private let store: LedgerStore
    private let layout: StoreLayout
    private let device: String
    private let schema: Int
    private let rule: HistoryRule
    private let enrolling: Bool
    private let tables: ProjectionTables
    /// Every origin's last sequence before the batch (what a revocation records as seen).
    private let heads: [String: UInt64]
    private let signer: SigningKey?
    /// The ledger's trust, read only when the batch revokes (a revocation's rules read it).
    private let trust: TrustState
    /// Whether the batch enrols, rotates or revokes: the trust table is derived anew.
    private let writesTrust: Bool

    private var clock: HLC
    private var sequence: UInt64
    private var position: UInt64
    private let firstNew: UInt64
    /// The chain hash of the device's last event, written or new (nil: the store does not sign).
    private var previous: [UInt8]?
    /// The new events and their records, indexed together by `commit`; what the rules look up
    /// among them is found here first.
    private var newEvents: [Event] = []
    private var newRecords: [[UInt8]] = []
    /// A long batch of a signing device encodes its events and links their chain on a thread
    /// of its own (`ChainEncoder`), its records and hashes taken at the commit; nil: here, as
    /// each event is written.
    private var chain: ChainEncoder?
    /// How many of `newEvents` are about each goal, for the rule that a goal is created once:
    /// counted when the batch first prepares a creation, and extended on later ones, so a batch
    /// that creates no goal counts none.
    private var newGoalEvents: [UUID: Int] = [:]
    private var countedGoalEvents = 0
    /// The position of each of `newEvents` by its id, for what looks up an event of the batch
    /// (a removal, a history's base, a draft that names an id again): filled on the first such
    /// lookup and extended on later ones, so a batch that never asks builds none.
    private var newEventIndex: [UUID: UInt64] = [:]
    private var indexedEvents = 0
    /// The days of the author's time zone as its device state has it, kept until the batch
    /// writes an event that is not about a goal (a device's settings among them).
    private var authorDays: ZoneDays?
    /// The drafts' own ids that the store held when the batch began, with their positions, and
    /// those that more than one draft names (looked up together).
    private let stored: [UUID: UInt64]
    private let repeated: Set<UUID>
    /// The drafts' indices in the order of their ids' keys, when every draft has an id (nil
    /// otherwise): while each draft is one new event, in order, the batch's id rows are put in
    /// key order by it, without a sort.
    private let idOrder: [Int]?
    private var results: [AppendResult] = []
    /// The renumbering moves the store wrote, reported after the drafts' results.
    private var renumbered: [AppendResult] = []
    private var projection: StoredProjection.Batch
    /// Whether the batch goes on from the rows of batches before it (`init(projection:)`),
    /// which its commit writes even when it has no event of its own.
    private let carriesRows: Bool
    /// The id index's rows of the batches before it and its own, held until the projection's
    /// rows are written (`init(heldIDs:)`); nil: the batch puts its rows at its commit.
    private var heldIDs: HeldIDRows?

    /// A batch of `drafts`; `projection`: the rows the batches before it in this transaction
    /// folded and did not flush (`commit(_:flushing:)`), which this one goes on from;
    /// `heldIDs`: their id rows, not yet in the index, which this one holds its own with.
    init(
        store: LedgerStore, drafts: [EventDraft], schema: Int, enrolling: Bool, signingKey: SigningKey?,
        projection: StoredProjection.Batch? = nil, heldIDs: HeldIDRows? = nil, _ txn: borrowing StoreTransaction
    ) throws {
        let layout = store.layout
        self.store = store
        self.layout = layout
        device = store.device
        self.schema = schema
        rule = HistoryRule(schema: schema)
        self.enrolling = enrolling
        clock = try txn.clock()
        sequence = try txn.ownHead(device)
        position = try txn.lastPosition()
        firstNew = position + 1
        tables = try txn.activeProjection()
        heads = try txn.originHeads()
        signer = try signingKey ?? store.signer(txn)
        // The chain continues from this device's last event.
        previous = try signer.map { [device, sequence] _ in try txn.chainHash(device, sequence) }
        if let previous, ChainEncoder.pays(for: drafts.count) { chain = ChainEncoder(after: previous, events: drafts.count) }
        carriesRows = projection != nil
        self.projection = projection ?? StoredProjection.Batch(tables: tables, layout: layout)
        writesTrust = drafts.contains { $0.payload.trustChange != nil || $0.payload.type == .deviceRevoked }
        trust = drafts.contains { $0.payload.type == .deviceRevoked } ? try txn.trustState() : TrustState()
        let ids = drafts.compactMap(\.id)
        let order: [Int]
        // Most ids are new: those the store's id filter turns away are not sought in the index.
        let number = txn.number
        let rows = ids.isEmpty ? 0 : try txn.idRowCount()
        let filter = ids.isEmpty ? nil : try store.idFilter.withLock { f in try f.filter(forSeeking: ids.count, txn: number, rows: rows, txn) }
        (stored, repeated, order) = try txn.storedIDs(among: ids, held: heldIDs, filter: filter)
        idOrder = ids.count == drafts.count ? order : nil
        self.heldIDs = heldIDs
        newEvents.reserveCapacity(drafts.count)
        newRecords.reserveCapacity(drafts.count)
        results.reserveCapacity(drafts.count)
    }

    /// Refuses the batch unless it is about exactly one goal, at version `expected` (the number
    /// of events about it in the store; 0: it does not exist yet).
    func checkVersion(_ expected: Int, of drafts: [EventDraft], _ txn: borrowing StoreTransaction) throws {
        let touched = Set(drafts.compactMap(\.payload.goal))
        guard touched.count == 1, let goal = touched.first else {
            throw LedgerError(.invalidArgument, "an expected version needs a batch about exactly one goal (this one is about \(touched.count))")
        }
        let actual = try txn.version(of: goal)
        guard actual == expected else {
            throw LedgerError(
                "goal \(goal.uuidString) is at version \(actual), expected \(expected); nothing was appended",
                reason: .versionConflict(goal: goal, expected: expected, actual: actual))
        }
    }

    /// Adds the draft at `index` (read from input line `line`, when it was): a duplicate id
    /// reports the event already stored; otherwise it becomes the batch's next event.
    mutating func add(_ draft: EventDraft, index: Int, line: Int?, now: Instant, _ txn: borrowing StoreTransaction) throws {
        do throws(FieldError) {
            if !draft.passedGate { try draft.checkWellFormed() }
        } catch {
            throw LedgerError.invalidEvent(line: line, index: index + 1, error)
        }
        if let id = draft.id, let original = try duplicate(of: id, txn) {
            results.append(original)
            return
        }
        let at = draft.at ?? now
        // The id the library makes follows the clock reading the event is about to take.
        let id = draft.id ?? EventIDs.next(clock: clock.advanced(to: at))
        var payload = draft.payload
        if case .goalMoved(let move) = payload, move.key == nil, move.placement != nil {
            payload = .goalMoved(try place(move, at: at, line: line, index: index, txn))
        }
        results.append(try write(payload, id: id, at: at, line: line, index: index, txn))
    }

    /// The result of an event with id `id` that is stored already, or earlier in the batch.
    private mutating func duplicate(of id: UUID, _ txn: borrowing StoreTransaction) throws -> AppendResult? {
        if !repeated.isEmpty, repeated.contains(id), let p = batchPosition(id) {
            return AppendResult(id: id, position: p, hlc: newEvents[Int(p - firstNew)].hlc, duplicate: true)
        }
        guard !stored.isEmpty, let p = stored[id] else { return nil }
        guard let original = try txn.event(at: p) else {
            throw LedgerError.damaged("the id index names position \(p), which holds no event", position: p)
        }
        return AppendResult(id: id, position: p, hlc: original.hlc, duplicate: true)
    }

    /// A move given by its anchor, with its key computed among the goals as the batch has left
    /// them; a move that finds no room renumbers the live goals first, in the same batch.
    private mutating func place(_ move: GoalMoved, at: Instant, line: Int?, index: Int, _ txn: borrowing StoreTransaction) throws -> GoalMoved {
        var move = move
        let goals = try projection.goals(txn)
        let plan: GoalOrder.Plan
        do throws(FieldError) {
            try EventType.goalMoved.checkInCatalog(schema: schema)
            plan = try GoalOrder.place(move.goal, move.placement!, among: goals, next: clock.advanced(to: at))
        } catch {
            throw LedgerError.invalidEvent(line: line, index: index + 1, error)
        }
        for (goal, key) in plan.renumbered {
            let renumbering = Payload.goalMoved(GoalMoved(goal: goal, placement: nil, key: key, replaces: nil))
            renumbered.append(try write(renumbering, id: EventIDs.next(clock: clock.advanced(to: at)), at: at, line: line, index: index, txn))
        }
        move.key = plan.key
        return move
    }

    /// Applies the rules to `draftPayload`, then writes it as the batch's next event.
    private mutating func write(
        _ draftPayload: Payload, id: UUID, at: Instant, line: Int?, index: Int, _ txn: borrowing StoreTransaction
    ) throws -> AppendResult {
        let (payload, deletionsSeen) = try prepare(draftPayload, id: id, at: at, line: line, index: index, txn)
        clock = clock.advanced(to: at)
        guard clock.isSupported else {
            throw LedgerError.invalidEvent(
                line: line, index: index + 1,
                FieldError("at", "the store's clock has reached the end of 9999 (\(HLC.latest)): no later reading exists"))
        }
        sequence += 1
        position += 1
        var event = Event(
            id: id, origin: device, sequence: sequence, hlc: clock, at: at, schema: UInt8(schema), payload: payload,
            deletionsSeen: deletionsSeen)
        if let chain {
            chain.add(event)
        } else {
            if let p = previous { event.previousHash = p }
            // One encoding serves the log and, while the event is unsigned, its hash.
            let record = EventCodec.encode(event)
            if previous != nil { previous = EventChain.hash(record: record) }
            newRecords.append(record)
        }
        // With an encoder, its thread hashes the entry for the digest, by the event's index.
        try projection.apply(event, at: position, checked: true, entryHashLater: chain == nil ? nil : newEvents.count, txn)
        if event.payload.goal == nil { authorDays = nil }
        newEvents.append(event)
        return AppendResult(id: id, position: position, hlc: clock, duplicate: false)
    }

    /// The store's rules for the device's own event: the payload with its defaults filled in,
    /// and the deletions of the goal its author had seen.
    private mutating func prepare(
        _ payload: Payload, id: UUID, at: Instant, line: Int?, index: Int, _ txn: borrowing StoreTransaction
    ) throws -> (Payload, [String: UInt64]?) {
        // Most events record progress: their rules read three facts of the goal, not its state.
        if case .progressRecorded(var p) = payload, let facts = try projection.progressFacts(p.goal, txn) {
            var days = try authorDays ?? ZoneDays(projection.device(device, txn).calendar.timeZone)
            defer { authorDays = days }
            do throws(FieldError) {
                try LocalRules.prepareProgress(&p, goal: facts, at: at, authorDays: &days, schema: schema)
            } catch {
                throw LedgerError.invalidEvent(line: line, index: index + 1, error)
            }
            // As from a state made of the header's status bytes: no deletion heads.
            return (.progressRecorded(p), [:])
        }
        // The state is read in its own scope: holding a copy while the batch's cached state
        // is mutated would copy its entries on every append.
        let state = try payload.goal.map { g in try goalState(g, for: payload, txn) }
        let author = try projection.device(device, txn)
        let deletionHeads = state?.deletionHeads
        do throws(FieldError) {
            let prepared = try LocalRules.prepare(
                payload, id: id, at: at, goal: state, author: author, schema: schema,
                seen: SeenHeads(heads: heads, own: (device, sequence)), enrolling: enrolling, trust: trust)
            return (prepared, deletionHeads)
        } catch {
            throw LedgerError.invalidEvent(line: line, index: index + 1, error)
        }
    }

    /// How many of the batch's new events are about `goal`.
    private mutating func newEventCount(about goal: UUID) -> Int {
        while countedGoalEvents < newEvents.count {
            if let g = newEvents[countedGoalEvents].payload.goal { newGoalEvents[g, default: 0] += 1 }
            countedGoalEvents += 1
        }
        return newGoalEvents[goal, default: 0]
    }

    /// The position of the event `id` if it is one of this batch's new events.
    private mutating func batchPosition(_ id: UUID) -> UInt64? {
        while indexedEvents < newEvents.count {
            newEventIndex[newEvents[indexedEvents].id] = firstNew + UInt64(indexedEvents)
            indexedEvents += 1
        }
        return newEventIndex[id]
    }

    /// The event `id` if it is one of this batch's new events.
    private mutating func batchEvent(_ id: UUID) -> Event? {
        batchPosition(id).map { newEvents[Int($0 - firstNew)] }
    }

    /// What the rules need of the goal's stored state: for progress on a goal ever deleted or
    /// restored, its header (other progress reads three facts, see `prepare`); for a removal,
    /// that one entry; otherwise the registers and tags. A goal with a long history costs no more to append to.
    private mutating func goalState(_ id: UUID, for payload: Payload, _ txn: borrowing StoreTransaction) throws -> GoalState {
        switch payload {
        case .progressRecorded:
            // Only a goal ever deleted or restored comes here (the rest take `progressFacts`):
            // progress records which of those its author had seen, which the header holds.
            return try projection.header(id, txn)
        case .goalCreated:
            // The id must be new: no event at all may name it yet.
            var s = try projection.header(id, txn)
            s.version = try txn.version(of: id) + newEventCount(about: id)
            return s
        case .progressRemoved(let p):
            return try removalState(id, entry: p.entry, txn)
        case .progressHistoryReplaced(let p):
            // The rules need the base write only: look it up by id, not the history.
            var s = try projection.header(id, txn)
            if let base = p.base, let e = try batchEvent(base) ?? storedEvent(base, txn),
                case .progressHistoryReplaced(let b) = e.payload, b.goal == id
            {
                s.record(e)
            }
            return s
        default:
            return try projection.header(id, txn)
        }
    }

    /// The stored event with id `id`, held rows of the id index asked first.
    private func storedEvent(_ id: UUID, _ txn: borrowing StoreTransaction) throws -> Event? {
        if let p = heldIDs?.position(of: id) { return try txn.event(at: p) }
        return try txn.event(id: id)
    }

    /// The goal's header with the one entry a removal names, and whether it is removed already.
    private mutating func removalState(_ id: UUID, entry: UUID, _ txn: borrowing StoreTransaction) throws -> GoalState {
        var s = try projection.header(id, txn)
        let recordedEntry: ProgressEntry? = try (batchEvent(entry) ?? storedEvent(entry, txn)).flatMap { e in
            guard case .progressRecorded(let r) = e.payload, r.goal == id else { return nil }
            return ProgressEntry(e, r)
        }
        if let recorded = recordedEntry {
            s.recordedEntries.record(recorded)
            if try txn.get(tables.removed, key: id.bytes + entry.bytes) != nil { s.removedEntries.insert(entry) }
            return s
        }
        // Not a progressRecorded: perhaps an entry of a migrated schema-1 history.
        return try txn.withEntries(s, in: tables, rule: rule)
    }

    /// Signs, indexes and folds the batch's new events (a batch of duplicates writes nothing)
    /// and returns every draft's result, the renumbering moves last. Unless `flushing`, the
    /// projection's rows stay in the batch's fold for the next batch of the transaction to go
    /// on from (`takeHeld()`), and its checkpoint is not moved: the next batch, or the
    /// caller, flushes them before the transaction commits. A batch that holds id rows
    /// (`init(heldIDs:)`) puts them, with the ones before it, when it flushes.
    mutating func commit(_ txn: borrowing StoreTransaction, flushing: Bool = true) throws -> [AppendResult] {
        results += renumbered
        guard !newEvents.isEmpty else {
            // Only duplicates: the rows carried from the batches before are written all the same.
            if flushing && carriesRows {
                try putIDs([], txn)
                try txn.finish(&projection, clock: clock, through: position)
            }
            return results
        }
        // The indexes first: they need no record, so they are written while the chain's thread
        // finishes encoding the last events.
        let order = Array(newEvents.indices)
        var ids = try txn.indexHoldingIDs(newEvents, order: order, from: firstNew)
        // Each draft one new event, in order (none a duplicate, no goal renumbered): the rows
        // in key order are the drafts' (whatever the order, the rows are the same).
        if let idOrder, idOrder.count == ids.count, stored.isEmpty, repeated.isEmpty, renumbered.isEmpty {
            ids = idOrder.map { ids[$0] }
        }
        if flushing || heldIDs == nil {
            // Before the projection's rows: their upkeep looks events up by id.
            try putIDs(ids, txn)
        } else {
            heldIDs!.hold(ids)
        }
        if let chain {
            let linked = chain.finish()
            self.chain = nil
            // One record a new event, or nothing is written (the transaction is abandoned).
            guard linked.records.count == newEvents.count, linked.previousHashes.count == newEvents.count else {
                throw LedgerError(
                    .store,
                    "the batch's chain holds \(linked.records.count) records and \(linked.previousHashes.count) links for \(newEvents.count) events; nothing was appended"
                )
            }
            newRecords = linked.records
            previous = linked.last
            projection.supplyEntryHashes(linked.entryHashes)
            // Only the events signed below are encoded again: they alone need their link.
            sign(previousHashes: linked.previousHashes)
        } else {
            sign(previousHashes: nil)
        }
        try txn.putRecords(newRecords, order: order, from: firstNew)
        if flushing {
            try txn.finish(&projection, clock: clock, through: position)
        } else {
            try txn.putClock(clock)
        }
        try txn.put(layout.originHeads, key: Array(device.utf8), value: sequence.bigEndianBytes)
        if writesTrust { try store.recomputeTrust(txn) }
        return results
    }

    /// Puts `rows` into the id index, with every row held.
    private mutating func putIDs(_ rows: [(key: IDWords, position: UInt64)], _ txn: borrowing StoreTransaction) throws {
        var all = heldIDs?.take(adding: rows) ?? rows
        let before = try txn.idRowCount()
        try txn.putIDs(&all)
        let after = try txn.idRowCount()
        let number = txn.number
        try store.idFilter.withLock { f in try f.added(all, txn: number, before: before, after: after, txn) }
    }

    /// The batch's fold and held id rows, for the next batch of the transaction (after
    /// `commit(_:flushing:)` without flushing).
    consuming func takeHeld() -> (projection: StoredProjection.Batch, ids: HeldIDRows?) { (projection, heldIDs) }

    /// One signature per batch, on its last event: it vouches for the chain. A long batch is
    /// also signed every `signedRunLength` events, so that no run a peer must take whole (a page
    /// of a pull, a part of a push) is longer than that. `previousHashes`: each event's link,
    /// when the chain encoder made them (the events do not hold them then).
    private mutating func sign(previousHashes: [[UInt8]]?) {
        guard let signer, let last = newEvents.last, let hash = previous else { return }
        let ledger = store.ledgerID
        for i in stride(from: LedgerStore.signedRunLength - 1, to: newEvents.count - 1, by: LedgerStore.signedRunLength) {
            var signed = newEvents[i]
            if let previousHashes { signed.previousHash = previousHashes[i] }
            signed.signature = signer.sign(
                EventChain.message(ledger: ledger, origin: device, sequence: signed.sequence, hash: EventChain.hash(record: newRecords[i])))
            signed.signer = signer.publicKey
            newRecords[i] = EventCodec.encode(signed)
        }
        var signed = last
        if let previousHashes { signed.previousHash = previousHashes[previousHashes.count - 1] }
        signed.signature = signer.sign(EventChain.message(ledger: ledger, origin: device, sequence: last.sequence, hash: hash))
        signed.signer = signer.publicKey
        newRecords[newRecords.count - 1] = EventCodec.encode(signed)
    }
}
