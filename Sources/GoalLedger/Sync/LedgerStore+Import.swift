import Foundation

extension LedgerStore {
    /// The most origins whose waiting events a store names (`status`, ``LedgerSnapshot/waitingEvents()``).
    package static let waitingEntries = 256
    /// How long, in milliseconds of the store's clock, a waiting entry that no exchange renews
    /// is kept: 30 days.
    package static let waitingLifetime: Int64 = 30 * 86_400_000

    /// The body of ``LedgerWriter/importEvents(_:from:)`` in the write transaction `txn`; whether
    /// the projection is to be rebuilt after the commit. The steps: the offer is checked against
    /// what the store holds (chains, signatures, trust, duplicates); what waits is named; the
    /// accepted events are written in canonical order and folded.
    func importEvents(
        _ incoming: [Event], records incomingRecords: [[UInt8]]?, unreadable: [WaitingEvents],
        beforeCommit: (() throws(LedgerError) -> Void)?, recovering: Bool = false, _ txn: borrowing StoreTransaction
    ) throws -> (ImportResult, Bool) {
        try checkBeforeWriting(txn)
        let heads = try txn.originHeads()
        var waiting: [String: WaitingEvents] = [:]
        for w in unreadable { waiting[w.origin] = w }
        // What follows an unreadable record of its origin waits behind it.
        let offer = Offer(incoming, records: incomingRecords, waiting: waiting)
        let outcome = try checkOffer(offer, heads: heads, waiting: waiting, recovering: recovering, txn)
        if let (name, key) = outcome.founder { try txn.recordFounder(name, key) }
        var result = ImportResult()
        waiting = try droppingUnknownOrigins(outcome.waiting, counting: &result, txn)
        result.alreadyPresent = outcome.alreadyPresent
        result.revoked = outcome.revoked
        result.waiting = waiting.values.sorted { String.bytesPrecede($0.origin, $1.origin) }
        try nameWaiting(waiting, offered: offer.byOrigin.keys, txn)
        // Any completed exchange ends a restored store's wait: it has what the peer had.
        try txn.delete(layout.meta, key: MetaKey.restored)
        // The accepted events, in canonical order (new events take local positions in it).
        let accepted = outcome.accepted(incoming)
        guard !accepted.isEmpty else {
            try beforeCommit?()
            return (result, false)
        }
        let (setAside, rebuildAfter) = try writeAccepted(accepted, of: incoming, records: offer.records, outcome, heads: heads, txn)
        result.setAside = setAside
        result.imported = accepted.count
        try beforeCommit?()
        return (result, rebuildAfter)
    }

    /// The offer checked against what the store holds: each origin's chain from its head, the
    /// signatures by the keys trust gives (the offer's own trust events included), revocations
    /// and duplicates.
    private func checkOffer(
        _ offer: Offer, heads: [String: UInt64], waiting: [String: WaitingEvents], recovering: Bool, _ txn: borrowing StoreTransaction
    ) throws -> OfferedEvents.Outcome {
        var history = HeldHistory(heads: heads)
        history.ownDevice = device
        // A device that signs may receive its own later events back (restored from a backup):
        // their signatures prove they are its own. A recovery offers the device's own events
        // read back from its damaged store: like every other event, they are taken only where
        // their chains and signatures verify.
        history.signsOwnEvents = try recovering || !txn.keys(of: device).isEmpty
        let stored = try trustInputs(txn)
        history.trustInputs = stored.inputs
        history.firstChained = stored.firstChained
        history.founder = try discoverFounder(txn)
        return try OfferedEvents.check(
            offer, history: history, ledger: ledgerID, signed: isSignedLedger, waiting: waiting,
            event: { origin, sequence in try txn.event(origin: origin, sequence: sequence) },
            idExists: { id in try txn.position(of: id) != nil })
    }

    /// `waiting` without the origins that hold no key, in a signed ledger: what waits of them is
    /// counted in `result`, not kept, whatever stopped it (a made-up origin costs its sender
    /// nothing to invent).
    private func droppingUnknownOrigins(
        _ waiting: [String: WaitingEvents], counting result: inout ImportResult, _ txn: borrowing StoreTransaction
    ) throws -> [String: WaitingEvents] {
        guard isSignedLedger else { return waiting }
        var kept = waiting
        let founder = try recordedFounder(txn)?.name
        for (origin, w) in waiting where origin != device && origin != founder {
            guard try txn.keys(of: origin).isEmpty else { continue }
            result.unknownOrigins += 1
            // A count a source gives (the rest of an origin, from a hub's head) may be any
            // number: the sum saturates.
            result.unknownOriginEvents = [result.unknownOriginEvents, w.count].saturatingSum { $0 }
            kept[origin] = nil
        }
        return kept
    }

    /// Names what waits, until its origin moves past it. At most `waitingEntries` origins are
    /// named: one more replaces none (its events are offered again by the next exchange all the
    /// same). An entry not renewed for `waitingLifetime` by the store's clock is forgotten.
    private func nameWaiting(
        _ waiting: [String: WaitingEvents], offered: Dictionary<String, [Int]>.Keys, _ txn: borrowing StoreTransaction
    ) throws {
        let wall = try txn.clock().milliseconds
        var named = 0
        var aged: [String] = []
        for w in try txn.waitingEvents() {
            let since = try txn.get(layout.meta, key: MetaKey.waitingSince + Array(w.origin.utf8)).map { UInt64(bigEndianBytes: $0) }
            if let since, wall > Self.waitingLifetime, Int64(clamping: since) < wall - Self.waitingLifetime {
                aged.append(w.origin)
            } else {
                named += 1
            }
        }
        for origin in aged {
            try txn.delete(layout.meta, key: MetaKey.waiting + Array(origin.utf8))
            try txn.delete(layout.meta, key: MetaKey.waitingSince + Array(origin.utf8))
        }
        for origin in Set(offered).union(waiting.keys).sorted(by: String.bytesPrecede) where DeviceName.isValid(origin) {
            let key = MetaKey.waiting + Array(origin.utf8)
            let since = MetaKey.waitingSince + Array(origin.utf8)
            let held = try txn.get(layout.meta, key: key) != nil
            if let w = waiting[origin] {
                guard held || named < Self.waitingEntries else { continue }
                if !held { named += 1 }
                try txn.put(layout.meta, key: key, value: w.storedValue)
                try txn.put(layout.meta, key: since, value: UInt64(max(0, wall)).bigEndianBytes)
            } else if held {
                try txn.delete(layout.meta, key: key)
                try txn.delete(layout.meta, key: since)
                named -= 1
            }
        }
    }

    /// Writes the accepted events at the log's end with their indexes and origin heads, brings
    /// trust in line first when they change it, then folds them: how many were set aside, and
    /// whether the projection is to be rebuilt after the commit.
    private func writeAccepted(
        _ accepted: [Int], of incoming: [Event], records: [[UInt8]], _ outcome: OfferedEvents.Outcome, heads: [String: UInt64],
        _ txn: borrowing StoreTransaction
    ) throws -> (setAside: Int, rebuildAfter: Bool) {
        let firstNew = try txn.lastPosition() + 1
        try txn.index(incoming, records: records, order: accepted, from: firstNew)
        for (origin, run) in outcome.prefixes where incoming[run.last!].sequence != (heads[origin] ?? 0) {
            try txn.put(layout.originHeads, key: Array(origin.utf8), value: incoming[run.last!].sequence.bigEndianBytes)
        }
        // Trust first, so that the fold below counts what the new trust says.
        var rebuildAfter = false
        if outcome.founder != nil || accepted.contains(where: { incoming[$0].trustChange != nil }) {
            // The events just written are walked from memory, not read back.
            rebuildAfter = try recomputeTrust(txn, written: outcome.prefixes, of: incoming)
        }
        var clock = try txn.clock()
        var batch = StoredProjection.Batch(tables: try txn.activeProjection(), layout: layout)
        var position = firstNew - 1
        var setAside = 0
        for i in accepted {
            position += 1
            if try !batch.apply(incoming[i], at: position, txn) { setAside += 1 }
            if incoming[i].hlc > clock { clock = incoming[i].hlc }
        }
        try txn.finish(&batch, clock: clock, through: position)
        return (setAside, rebuildAfter)
    }
}
