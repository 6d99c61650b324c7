import Foundation

extension LedgerStore {
    /// The most origins whose waiting events a store names (`status`, ``LedgerSnapshot/waitingEvents()``).
    package static let waitingEntries = 256
    /// How long, in milliseconds of the store's clock, a waiting entry that no exchange renews
    /// is kept: 30 days.
    package static let waitingLifetime: Int64 = 30 * 86_400_000

    /// The body of ``LedgerWriter/importEvents(_:from:)`` in the write transaction `txn`; whether
    /// the projection is to be rebuilt after the commit.
    func importEvents(
        _ incoming: [Event], records incomingRecords: [[UInt8]]?, unreadable: [WaitingEvents],
        beforeCommit: (() throws(LedgerError) -> Void)?, recovering: Bool = false, _ txn: borrowing StoreTransaction
    ) throws -> (ImportResult, Bool) {
        let layout = self.layout
        var rebuildAfter = false
        try self.checkBeforeWriting(txn, layout)
        var result = ImportResult()
        let heads = try txn.originHeads()
        var waiting: [String: WaitingEvents] = [:]
        for w in unreadable { waiting[w.origin] = w }
        // What follows an unreadable record of its origin waits behind it.
        let offer = Offer(incoming, records: incomingRecords, waiting: waiting)
        // A device that signs may receive its own later events back (restored from a
        // backup): their signatures prove they are its own.
        // A recovery offers the device's own events read back from its damaged store: like
        // every other event, they are taken only where their chains and signatures verify.
        let signsOwnEvents = try recovering || !txn.keys(of: device).isEmpty

        var history = HeldHistory(heads: heads)
        history.ownDevice = device
        history.signsOwnEvents = signsOwnEvents
        let stored = try trustInputs(txn)
        history.trustInputs = stored.inputs
        history.firstChained = stored.firstChained
        history.founder = try discoverFounder(txn)
        let outcome = try OfferedEvents.check(
            offer, history: history, ledger: ledgerID, signed: isSignedLedger, waiting: waiting,
            event: { origin, sequence in
                guard let p = try txn.get(layout.origins, key: StoreLayout.originKey(origin, sequence)) else { return nil }
                return try txn.event(at: UInt64(bigEndianBytes: p))
            },
            idExists: { id in try txn.get(layout.eventIds, key: id.bytes) != nil })
        if let (name, key) = outcome.founder { try txn.recordFounder(name, key) }
        waiting = outcome.waiting
        // In a signed ledger, what waits of an origin that holds no key is counted, not kept,
        // whatever stopped it (a made-up origin costs its sender nothing to invent).
        if isSignedLedger {
            let founder = try txn.founder()?.name
            for (origin, w) in waiting where origin != device && origin != founder {
                guard try txn.keys(of: origin).isEmpty else { continue }
                result.unknownOrigins += 1
                result.unknownOriginEvents += w.count
                waiting[origin] = nil
            }
        }
        result.alreadyPresent = outcome.alreadyPresent
        result.revoked = outcome.revoked
        result.waiting = waiting.values.sorted { String.bytesPrecede($0.origin, $1.origin) }

        // 3. The accepted events, in canonical order (new events take local positions
        //    in it).
        let accepted = outcome.accepted(incoming)
        // What waits is named until its origin moves past it.
        // At most `waitingEntries` origins are named: one more replaces none (its events are
        // offered again by the next exchange all the same). An entry not renewed for
        // `waitingLifetime` by the store's clock is forgotten.
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
        for origin in Set(offer.byOrigin.keys).union(waiting.keys).sorted(by: String.bytesPrecede) where DeviceName.isValid(origin) {
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
        // Any completed exchange ends a restored store's wait: it has what the peer had.
        try txn.delete(layout.meta, key: MetaKey.restored)
        guard !accepted.isEmpty else {
            try beforeCommit?()
            return (result, false)
        }
        var position = try txn.lastPosition()
        let firstNew = position + 1
        try txn.index(incoming, records: offer.records, order: accepted, from: firstNew)
        position += UInt64(accepted.count)
        for (origin, run) in outcome.prefixes where incoming[run.last!].sequence != (heads[origin] ?? 0) {
            try txn.put(layout.originHeads, key: Array(origin.utf8), value: incoming[run.last!].sequence.bigEndianBytes)
        }
        // Trust first, so that the fold below counts what the new trust says.
        if outcome.founder != nil || accepted.contains(where: { incoming[$0].trustChange != nil }) {
            // The events just written are walked from memory, not read back.
            rebuildAfter = try recomputeTrust(txn, written: outcome.prefixes, of: incoming)
        }
        let tables = try txn.activeProjection()
        var clock = try txn.clock()
        var batch = StoredProjection.Batch(tables: tables, layout: layout)
        position = firstNew - 1
        for i in accepted {
            position += 1
            if try !batch.apply(incoming[i], at: position, txn) { result.setAside += 1 }
            if incoming[i].hlc > clock { clock = incoming[i].hlc }
        }
        try txn.finish(&batch, clock: clock, through: position)
        result.imported = accepted.count
        try beforeCommit?()
        return (result, rebuildAfter)
    }
}
