import Foundation

extension LedgerWriter {
    /// The most events, and record bytes, a store keeps aside from relay blobs.
    public static let relayParkLimit = (events: 65_536, bytes: 32 << 20)

    /// Applies a blob downloaded from a relay, with every check of ``apply(_:from:)``, in this
    /// transaction; returns what it did and `token` (nil: a relay that holds nothing) moved past
    /// what the relay now holds as far as this store knows.
    ///
    /// Blobs may come in any order, twice, or late. Events that wait for a predecessor of their
    /// origin, or for an enrolment, that has not arrived yet are named in
    /// ``ImportResult/waiting`` and kept aside (``RelayedImport/parked``), unverified and
    /// uncounted, and offered again with a later blob that may release them (one that brings an
    /// earlier event of their origin, or an enrolment), so that the blob that brings what they
    /// wait for releases them. Events that can never verify (a fork, a broken chain, a
    /// bad signature, a malformed event, a revoked device's later events) are not kept. What is
    /// kept aside is bounded (``relayParkLimit``) and forgotten after 30 days of the store's
    /// clock.
    ///
    /// The token moves, per origin, through the events this store now holds that the blob (or
    /// an earlier blob, released now) carried, where they continue its mark: the relay holds
    /// them, so ``LedgerSnapshot/outgoing(since:limit:byteLimit:)`` does not hand them out
    /// again. Refuses a blob or a token of another ledger, changing nothing.
    public func applyRelayed(_ changeSet: ChangeSet, token: RelayToken?) throws(LedgerError) -> RelayedImport {
        try applyRelayed(changeSet, token: token, parkLimit: Self.relayParkLimit)
    }

    /// ``applyRelayed(_:token:)``, keeping at most `parkLimit` aside.
    package func applyRelayed(
        _ changeSet: ChangeSet, token: RelayToken?, parkLimit: (events: Int, bytes: Int)
    ) throws(LedgerError) -> RelayedImport {
        try store.checkSameLedger(changeSet.ledger, source: "the relay's blob")
        let token = token ?? RelayToken(ledger: store.ledgerID)
        try store.checkSameLedger(token.ledger, source: "the relay token")
        let parked = try run("reading the events kept aside from the relay in \(store.path)") { try releasable(by: changeSet) }
        // The blob first, then what it may release; a parked copy of an event the blob carries
        // is not offered twice.
        var events = changeSet.events
        var records = changeSet.records
        var fromPark = Set<Int>()
        let carried = Set(events.map { RelayParkKey($0.origin, $0.sequence) })
        for (key, event, record) in parked where !carried.contains(key) {
            fromPark.insert(events.count)
            events.append(event)
            records.append(record)
        }
        let result = try importEvents(events, records: records, from: "the relay", unreadable: [])
        return try run("keeping relay events aside in \(store.path)") {
            try settle(
                events, records: records, fromPark: fromPark, parkedKeys: Set(parked.map(\.key)), result: result, token: token,
                limit: parkLimit)
        }
    }

    /// The records kept aside that `changeSet` may release, decoded: those of an origin whose
    /// first one's predecessor the blob carries, or this store holds (brought by another
    /// path, or waiting for more than its predecessor); all of them when an enrolment,
    /// rotation or revocation is among the blob or those records. Offering only these keeps an
    /// apply's cost to the blob and what it releases, whatever is kept aside.
    private func releasable(by changeSet: ChangeSet) throws -> [(key: RelayParkKey, event: Event, record: [UInt8])] {
        let firsts = try parkedFirsts()
        guard !firsts.isEmpty else { return [] }
        let heads = try txn.originHeads()
        // Per origin, the lowest and highest sequence the blob carries.
        var carried: [String: (low: UInt64, high: UInt64)] = [:]
        for e in changeSet.events {
            let r = carried[e.origin] ?? (e.sequence, e.sequence)
            carried[e.origin] = (min(r.low, e.sequence), max(r.high, e.sequence))
        }
        let chosen = Set(
            firsts.filter { origin, first in
                (carried[origin].map { $0.low < first && $0.high + 1 >= first } ?? false)
                    || (heads[origin].map { $0 > 0 && first <= $0 + 1 } ?? false)
            }.keys)
        if changeSet.events.contains(where: { $0.trustChange != nil }) { return try parkedRecords(of: Set(firsts.keys)) }
        let some = try parkedRecords(of: chosen)
        // What they release may enrol a device whose events are kept aside too.
        if some.contains(where: { $0.event.trustChange != nil }) && chosen.count < firsts.count {
            return try parkedRecords(of: Set(firsts.keys))
        }
        return some
    }

    /// Per origin kept aside, its first sequence; an entry that is not well formed, or that
    /// aged past the waiting lifetime by the store's clock, is forgotten.
    private func parkedFirsts() throws -> [String: UInt64] {
        let wall = try txn.clock().milliseconds
        var firsts: [String: UInt64] = [:]
        var forget: [[UInt8]] = []
        try txn.scan(layout.meta, from: MetaKey.relayParked) { key, value in
            guard key.starts(with: MetaKey.relayParked) else { return false }
            guard value.count > 8, let parkKey = RelayParkKey(stored: Array(key)) else {
                forget.append(Array(key))
                return true
            }
            let since = Int64(clamping: UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: value[0..<8])))
            if wall > LedgerStore.waitingLifetime && since < wall - LedgerStore.waitingLifetime {
                forget.append(Array(key))
            } else if firsts[parkKey.origin] == nil {
                // Keys are in sequence order within an origin: the first seen is the lowest.
                firsts[parkKey.origin] = parkKey.sequence
            }
            return true
        }
        for key in forget { _ = try txn.delete(layout.meta, key: key) }
        return firsts
    }

    /// The records kept aside of `origins`, decoded; one that no longer decodes is forgotten.
    private func parkedRecords(of origins: Set<String>) throws -> [(key: RelayParkKey, event: Event, record: [UInt8])] {
        var out: [(RelayParkKey, Event, [UInt8])] = []
        var forget: [[UInt8]] = []
        for origin in origins.sorted(by: String.bytesPrecede) {
            let prefix = MetaKey.relayParked + Array(origin.utf8) + [0]
            try txn.scan(layout.meta, from: prefix) { key, value in
                guard key.starts(with: prefix) else { return false }
                guard value.count > 8, let parkKey = RelayParkKey(stored: Array(key)), parkKey.origin == origin else { return true }
                let record = Array(value[8...])
                let decoded: Event? = record.withUnsafeBytes { try? EventCodec.decode($0) }
                if let e = decoded, e.origin == origin, e.sequence == parkKey.sequence {
                    out.append((parkKey, e, record))
                } else {
                    forget.append(Array(key))
                }
                return true
            }
        }
        for key in forget { _ = try txn.delete(layout.meta, key: key) }
        return out
    }

    /// After the import: which offered events the store now holds (they move the token and
    /// leave the park), which wait and are kept aside, which are let go.
    private func settle(
        _ events: [Event], records: [[UInt8]], fromPark: Set<Int>, parkedKeys: Set<RelayParkKey>, result: ImportResult, token: RelayToken,
        limit: (events: Int, bytes: Int)
    ) throws -> RelayedImport {
        let heads = try txn.originHeads()
        let waiting = Dictionary(result.waiting.map { ($0.origin, $0.cause) }, uniquingKeysWith: { a, _ in a })
        let revoked = Dictionary(result.revoked.map { ($0.origin, $0.after) }, uniquingKeysWith: { a, _ in a })
        let hopeless: Set<WaitingEvents.Cause> = [.fork, .brokenChain, .badSignature, .malformed]
        var heldSequences: [String: Set<UInt64>] = [:]
        var keep: [Int] = []
        var letGo: [RelayParkKey] = []
        for (i, e) in events.enumerated() {
            let key = RelayParkKey(e.origin, e.sequence)
            if e.sequence <= heads[e.origin] ?? 0 {
                // Held, or contradicting what is held: either way it waits no more.
                if try txn.event(origin: e.origin, sequence: e.sequence) == e {
                    heldSequences[e.origin, default: []].insert(e.sequence)
                }
                letGo.append(key)
            } else if let after = revoked[e.origin], e.sequence > after {
                letGo.append(key)
            } else if let cause = waiting[e.origin], hopeless.contains(cause) {
                letGo.append(key)
            } else if !DeviceName.isValid(e.origin) {
                letGo.append(key)
            } else if !fromPark.contains(i) {
                keep.append(i)
            }
        }
        for key in letGo where parkedKeys.contains(key) { _ = try txn.delete(layout.meta, key: key.stored) }
        // Room left in the park, counted over what stays in it.
        var (count, bytes) = (0, 0)
        try txn.scan(layout.meta, from: MetaKey.relayParked) { key, value in
            guard key.starts(with: MetaKey.relayParked) else { return false }
            count += 1
            bytes += value.count
            return true
        }
        let wall = UInt64(max(0, try txn.clock().milliseconds))
        var notKept = 0
        for i in keep {
            let key = RelayParkKey(events[i].origin, events[i].sequence)
            if try txn.get(layout.meta, key: key.stored) != nil { continue }
            let value = wall.bigEndianBytes + records[i]
            guard count < limit.events, bytes + value.count <= limit.bytes else {
                notKept += 1
                continue
            }
            try txn.put(layout.meta, key: key.stored, value: value)
            count += 1
            bytes += value.count
        }
        var next = token
        for (origin, held) in heldSequences {
            var mark = token.mark(of: origin)
            while held.contains(mark + 1) { mark += 1 }
            next.advance(origin, to: mark)
        }
        return RelayedImport(result: result, token: next, parked: count, notKept: notKept)
    }
}
