import Foundation
import LMDB
import Sodium

extension LedgerStore {
    /// Walks every page of the store's file at `path` (`data.mdb`) without LMDB, reading with
    /// `pread`, and returns where it is damaged: meta pages, a file shorter than its pages, a
    /// page whose header, bounds, entries or key order are wrong, a page reached twice, an
    /// overflow run out of range. An empty result means LMDB can read every page in use; the
    /// ledger's own checks (``LedgerSnapshot/verify()``) look at what the pages hold.
    ///
    /// This is what an app runs before LMDB when it suspects damage: LMDB trusts its file, and
    /// a damaged page can stop the process inside LMDB (an assertion, an invalid access),
    /// which no `catch` can handle. Damage on a free page is not found (nothing reads it).
    public static func checkPages(at path: String, limit: Int = 100) throws(LedgerError) -> [StoreDamage] {
        do {
            return try DataFile(directory: path).check(limit: limit).map(StoreDamage.init)
        } catch {
            if let d = error.damage { return [StoreDamage(d)] }
            if error.code == ENOENT { throw LedgerError.noStore(at: path) }
            throw LedgerError(.store, "cannot read \(path)/data.mdb: \(error.message)")
        }
    }

    /// The checks every open of the store at `path` makes before LMDB maps its file (its meta
    /// pages, its size, its free list's pages), without opening it: for the `data-file` fuzz
    /// target, which must never hand LMDB a file.
    package static func checkBeforeOpening(at path: String) throws(LedgerError) {
        do {
            try DataFile.checkBeforeOpening(directory: path)
        } catch {
            throw LedgerError(.store, "cannot open \(path)/data.mdb: \(error.message)")
        }
    }

    /// Every page of the store's file in use, with what it holds (`events leaf`, `goalPositions
    /// branch`, …), read without LMDB: for tests that damage chosen pages.
    package static func pagesInUse(at path: String) throws(LedgerError) -> [Int: String] {
        do {
            return try DataFile(directory: path).pagesInUse()
        } catch {
            throw LedgerError(.store, "cannot read \(path)/data.mdb: \(error.message)")
        }
    }

    /// Reads what a damaged store still holds, without LMDB (nothing in the store is changed):
    /// its metadata, every event of its log whose page and record are whole, walking the log's
    /// tree past damaged pages, then every other page of the file that reads as a whole leaf
    /// page (older copies of pages, pages below a damaged branch page) for events the tree did
    /// not give. Each record's checksum is verified; a record that fails it is named.
    public static func salvage(at path: String) throws(LedgerError) -> SalvagedStore {
        let file: DataFile
        do {
            file = try DataFile(directory: path)
        } catch {
            if error.code == ENOENT { throw LedgerError.noStore(at: path) }
            throw LedgerError.storeDamaged(
                at: path, error.damage.map { "\($0)" } ?? error.message + "; no meta page is whole, nothing can be read")
        }
        var s = SalvagedStore(path: path)
        var damage: [DataFile.Damage] = []
        if let d = file.otherMetaDamage { damage.append(d) }
        damage += file.salvage(table: "meta") { key, value in
            switch key {
            case MetaKey.ledger where value.count == 16:
                s.ledgerID = value.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            case MetaKey.device: s.device = String(decoding: value, as: UTF8.self)
            case MetaKey.schema where value.count == 8: s.schema = Int(clamping: UInt64(bigEndianBytes: value))
            default: break
            }
        }
        damage += file.salvage(table: "originHeads") { key, value in
            if value.count == 8 { s.originHeads[String(decoding: key, as: UTF8.self)] = UInt64(bigEndianBytes: value) }
        }
        var found: [UInt64: (Event, [UInt8])] = [:]
        var ids = Set<UUID>()
        var damagedRecords = Set<UInt64>()
        // No file holds more records than it has 16-byte pieces: a larger position is a damaged
        // key (a bit flipped in a whole page), not a place in the log. Without this bound, one
        // such key would make the positions missing below it uncountable.
        let credible = UInt64(max(file.fileSize, 0) / 16)
        damage += file.salvage(table: "events") { key, value in
            guard key.count == 8 else { return }
            let position = UInt64(bigEndianBytes: key)
            guard (1...max(credible, 1)).contains(position) else { return }
            guard let e = try? EventCodec.decode(value) else {
                damagedRecords.insert(position)
                return
            }
            found[position] = (e, value)
            ids.insert(e.id)
        }
        // Pages no tree reaches: leaf entries keyed by a position whose value is a whole record.
        file.scanLeafPages { _, key, value in
            guard key.count == 8, let e = try? EventCodec.decode(value), !ids.contains(e.id) else { return }
            let position = UInt64(bigEndianBytes: key)
            guard (1...max(credible, 1)).contains(position), found[position] == nil else { return }
            found[position] = (e, value)
            ids.insert(e.id)
            damagedRecords.remove(position)
            s.fromOtherPages += 1
        }
        for position in found.keys.sorted() {
            let (e, record) = found[position]!
            s.positions.append(position)
            s.events.append(e)
            s.records.append(record)
        }
        if let last = s.positions.last {
            let held = Set(s.positions)
            s.missingPositions = (1...last).filter { !held.contains($0) && !damagedRecords.contains($0) }
        }
        s.damagedRecords = damagedRecords.sorted()
        s.damage = damage.map(StoreDamage.init)
        return s
    }

    /// Builds a new store at `path` from a damaged store at `damaged`: every readable event of
    /// it (``salvage(at:)``) together with every event of `sources` (other stores of the ledger,
    /// export files' change sets), admitted in one transaction through the checks every import
    /// makes (chains, signatures, trust; nothing is taken for being in the damaged file). The
    /// new store is the same ledger's, for the same device, with the device's own key (`key`;
    /// by default the one in the damaged store's directory), so it goes on signing as that
    /// device. The damaged store is never changed.
    ///
    /// A source that is a sync service or a hub is synced with the returned store afterwards
    /// (the transports live in other modules); then ``LedgerWriter/admit(_:)`` offers the
    /// salvaged events again, for those that waited on a gap the service filled.
    ///
    /// When the device's own events that the damaged store recorded are neither readable nor in
    /// a source (``RecoveryReport/lostOwnEvents``), the new store is marked as restored: it
    /// appends only after it has exchanged events with another device or the hub, as a
    /// restored backup does.
    public static func recover(
        from damaged: String, to path: String, sources: [(name: String, changes: ChangeSet)] = [], ledger: UUID? = nil,
        device: String? = nil, key: SigningKey? = nil
    ) throws(LedgerError) -> (store: LedgerStore, report: RecoveryReport) {
        guard URL(fileURLWithPath: damaged).standardized.path != URL(fileURLWithPath: path).standardized.path else {
            throw LedgerError(.invalidArgument, "the recovered store must be a new directory, not the damaged store's")
        }
        let salvaged = try salvage(at: damaged)
        guard let ledgerID = ledger ?? salvaged.ledgerID ?? sources.first?.changes.ledger else {
            throw LedgerError(.store, "the ledger of \(damaged) cannot be read from its damaged metadata; name it")
        }
        // Metadata unreadable: the device is the origin whose batches its key signed.
        let keyFile = try? DirectoryKeyStore(directory: damaged).key(ledger: ledgerID, device: device ?? salvaged.device ?? "")
        let signedByKey = keyFile.flatMap { k in salvaged.events.first { $0.signer == k.publicKey }?.origin }
        guard let device = device ?? salvaged.device ?? signedByKey else {
            throw LedgerError(.store, "the device of \(damaged) cannot be read from its damaged metadata; name it")
        }
        for source in sources { try checkRecoverySource(source.changes.ledger, ledgerID, source.name) }
        let schema = salvaged.schema.map { min(max($0, 1), currentSchema) } ?? currentSchema
        var ownKey = key
        if ownKey == nil { ownKey = try DirectoryKeyStore(directory: damaged).key(ledger: ledgerID, device: device) }
        let store = try create(at: path, device: device, ledger: ledgerID, schema: schema, signed: true, key: ownKey)
        // Everything offered at once, each event once, in origin and sequence order: a gap in
        // the damaged log that a source fills lets the later readable events chain on.
        var events: [Event] = []
        var records: [[UInt8]] = []
        var ids = Set<UUID>()
        var report = RecoveryReport(salvaged: salvaged, admitted: ImportResult())
        func add(_ es: [Event], _ rs: [[UInt8]]) {
            for (e, r) in zip(es, rs) where ids.insert(e.id).inserted {
                events.append(e)
                records.append(r)
            }
        }
        add(salvaged.events, salvaged.records)
        for source in sources {
            add(source.changes.events, source.changes.records)
            report.sources.append((source.name, source.changes.count))
        }
        let order = events.indices.sorted {
            events[$0].origin != events[$1].origin
                ? String.bytesPrecede(events[$0].origin, events[$1].origin) : events[$0].sequence < events[$1].sequence
        }
        report.admitted = try store.writing { w in
            try w.importEvents(
                order.map { events[$0] }, records: order.map { records[$0] }, from: damaged, unreadable: [], recovering: true)
        }
        try store.finishRecovery(&report)
        return (store, report)
    }

    static func checkRecoverySource(_ ledger: UUID, _ expected: UUID, _ name: String) throws(LedgerError) {
        guard ledger == expected else {
            throw LedgerError(
                .store,
                "\(name) belongs to ledger \(ledger.uuidString), the damaged store to \(expected.uuidString): stores of different ledgers never exchange events"
            )
        }
    }

    /// Counts what waits and what of the device's own history is lost; marks the store as
    /// restored when some is.
    func finishRecovery(_ report: inout RecoveryReport) throws(LedgerError) {
        let heads = try reading { try $0.originHeads() }
        let held = try reading { s in Set(try s.events(missingFrom: [:]).map(\.id)) }
        let left = report.salvaged.events.indices.filter { !held.contains(report.salvaged.events[$0].id) }
        report.notAdmitted =
            left.isEmpty
            ? nil
            : ChangeSet(
                ledger: ledgerID, events: left.map { report.salvaged.events[$0] }, records: left.map { report.salvaged.records[$0] })
        let own = heads[device] ?? 0
        let recorded = max(report.salvaged.originHeads[device] ?? 0, report.salvaged.readHeads[device] ?? 0)
        report.lostOwnEvents = recorded > own ? (own + 1)...recorded : nil
        if report.lostOwnEvents != nil || report.salvaged.originHeads.isEmpty {
            // It may be behind its own device's history: no append until an exchange.
            try writeTransaction("marking \(path) as restored") { txn in try txn.put(layout.meta, key: MetaKey.restored, value: []) }
        }
    }
}

extension LedgerStore {
    /// Whether the store appends only after an exchange with another store (restored from a
    /// backup, or recovered with some of its device's own events lost).
    package var isRestoredPendingExchange: Bool {
        (try? readTransaction { txn in try txn.get(layout.meta, key: MetaKey.restored) != nil }) ?? false
    }
}

extension LedgerStore {
    /// Told where ``LedgerSnapshot/verify()`` is: each check as it starts, and the log's
    /// position every 256 records: for a process that watches a `verify` which LMDB may stop.
    package var verifyProgress: (@Sendable (VerificationCheck, UInt64) -> Void)? {
        get { progressHook.withLock { $0?.body } }
        set { progressHook.withLock { $0 = newValue.map(ProgressHook.init) } }
    }
}

/// The closure of ``LedgerStore/verifyProgress``, boxed so that reading it never changes it.
final class ProgressHook: Sendable {
    let body: @Sendable (VerificationCheck, UInt64) -> Void

    init(_ body: @escaping @Sendable (VerificationCheck, UInt64) -> Void) { self.body = body }
}
