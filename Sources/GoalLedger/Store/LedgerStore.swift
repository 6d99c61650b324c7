import Foundation
import LMDB
import Sodium

/// One device's copy of the ledger: an LMDB environment holding the event log and its indexes.
///
/// Every append is one LMDB write transaction: the events, every index and the clock are
/// written together or not at all, so a crash leaves either the whole batch or none of it.
public final class LedgerStore: @unchecked Sendable {
    /// The store format this code writes; stores with a newer one are refused.
    public static let format: UInt64 = 1
    /// The event schema of new stores.
    public static let currentSchema = 2

    /// The store's directory.
    public let path: String
    /// The ledger's id, the same in every store of the ledger.
    public let ledgerID: UUID
    /// The name of this store's device, the origin of the events it appends.
    public let device: String
    /// Where this device's secret signing key is kept (by default `device.key` in the store's
    /// directory; an app may keep it in the OS keychain).
    public let keys: any DeviceKeyStore
    /// The event schema the store accepts: 1 (legacy) until `migrate`, then 2.
    public internal(set) var schema: Int
    let env: Environment

    /// How schema-1 history writes count in this store: the old rule until migration.
    public var historyRule: HistoryRule { schema == 1 ? .lastWriteWins : .recordLevel }
    let layout: StoreLayout
    /// Where the `async` writes of this store run, one after another, off the callers' actors.
    let writer = DispatchQueue(label: "goal-ledger.writer", qos: .userInitiated)

    private init(
        path: String, env: Environment, layout: StoreLayout, ledgerID: UUID, device: String, schema: Int, keys: (any DeviceKeyStore)?
    ) {
        self.keys = keys ?? DirectoryKeyStore(directory: path)
        self.path = path
        self.env = env
        self.layout = layout
        self.ledgerID = ledgerID
        self.device = device
        self.schema = schema
    }

    // MARK: Creating and opening

    /// Creates a store for a new ledger (or, with `ledger`, for an existing one) in `path`.
    ///
    /// A new ledger of the current schema is founded signed: the device gets a key pair (its
    /// secret in `keys`) and the ledger's id is derived from its name and public key, which is
    /// how every store knows the founder's key. A store for an existing ledger gets a key pair
    /// too, which an enrolled device enrols (`clone` does). A schema-1 store behaves like the
    /// old app: unsigned until it is migrated.
    public static func create(
        at path: String, device: String, ledger: UUID? = nil, schema: Int = currentSchema,
        options: StoreOptions = StoreOptions(), keys: (any DeviceKeyStore)? = nil
    ) throws(LedgerError) -> LedgerStore {
        try create(at: path, device: device, ledger: ledger, schema: schema, options: options, keys: keys, signed: true)
    }

    /// `create`; with `signed: false`, a store like those made before events were signed (a
    /// random ledger id, no key): for tests and the benchmark's unsigned baseline.
    package static func create(
        at path: String, device: String, ledger: UUID? = nil, schema: Int = currentSchema,
        options: StoreOptions = StoreOptions(), keys: (any DeviceKeyStore)? = nil, signed: Bool
    ) throws(LedgerError) -> LedgerStore {
        let keyStore = keys ?? DirectoryKeyStore(directory: path)
        let founding = ledger == nil && schema == currentSchema && signed
        let key: SigningKey? = schema == currentSchema && signed ? SigningKey.generate() : nil
        let ledger = ledger ?? (founding ? EventChain.ledgerID(founder: device, publicKey: key!.publicKey) : UUID())
        guard DeviceName.isValid(device) else {
            throw LedgerError(.invalidArgument, "invalid device name \"\(device)\": use 1 to 64 of a-z 0-9 . _ - starting with a letter or digit")
        }
        guard (1...currentSchema).contains(schema) else {
            throw LedgerError(.invalidArgument, "schema \(schema) is not supported (this version creates schema 1 or \(currentSchema) stores)")
        }
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw LedgerError(.store, "\(path) exists and is not a directory") }
        } else {
            do {
                try fm.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw LedgerError(.store, "cannot create \(path): \(error.localizedDescription)")
            }
        }
        let env = try openEnvironment(path, options: options)
        do {
            let layout = try env.write { txn in
                let layout = try StoreLayout { name in
                    try txn.openDatabase(named: name, create: true, duplicates: StoreLayout.duplicates.contains(name))
                }
                if try txn.get(layout.meta, key: MetaKey.ledger) != nil {
                    throw LedgerError(.store, "a ledger store already exists at \(path)")
                }
                try txn.put(layout.meta, key: MetaKey.format, value: format.bigEndianBytes)
                try txn.put(layout.meta, key: MetaKey.ledger, value: ledger.bytes)
                try txn.put(layout.meta, key: MetaKey.device, value: Array(device.utf8))
                try txn.put(layout.meta, key: MetaKey.schema, value: UInt64(schema).bigEndianBytes)
                try txn.put(layout.meta, key: MetaKey.hlc, value: UInt64(0).bigEndianBytes)
                try txn.put(layout.meta, key: MetaKey.projectionActive, value: UInt64(0).bigEndianBytes)
                try txn.put(layout.meta, key: MetaKey.projectionVersion, value: StoredProjection.version.bigEndianBytes)
                try txn.put(layout.meta, key: MetaKey.projectionCheckpoint, value: UInt64(0).bigEndianBytes)
                // A new store of the current schema needs none of the migrations; a legacy one
                // needs them all.
                if schema == currentSchema {
                    for m in Migrator.migrations { try txn.put(layout.meta, key: Migrator.key(m.identifier), value: []) }
                }
                return layout
            }
            let store = LedgerStore(path: path, env: env, layout: layout, ledgerID: ledger, device: device, schema: schema, keys: keyStore)
            if let key {
                try keyStore.save(key, ledger: ledger, device: device)
                if founding { try store.trustFounder(key.publicKey) }
            }
            return store
        } catch let e as LedgerError {
            throw e
        } catch {
            throw LedgerError(.store, "cannot initialize the store at \(path): \(error)")
        }
    }

    /// Opens an existing store. A stored projection built by an older version of the fold is
    /// rebuilt before the store is returned (never served stale); `onRebuild` is told why.
    public static func open(
        at path: String, options: StoreOptions = StoreOptions(),
        onRebuild: ((String) -> Void)? = nil, keys: (any DeviceKeyStore)? = nil
    ) throws(LedgerError) -> LedgerStore {
        guard FileManager.default.fileExists(atPath: path + "/data.mdb") else {
            throw LedgerError.noStore(at: path)
        }
        let env = try openEnvironment(path, options: options)
        let store: LedgerStore
        do {
            let layout: StoreLayout
            do {
                layout = try StoreLayout { name in try env.existingDatabase(named: name, duplicates: StoreLayout.duplicates.contains(name))
                }
            } catch let e as LMDBError where e.isNotFound {
                // A store from before a table existed: create what is missing (empty projection
                // tables; the version check below then rebuilds them).
                layout = try env.write { txn in
                    guard try txn.get(try txn.openDatabase(named: "meta", create: false), key: MetaKey.ledger) != nil else {
                        throw LedgerError(.store, "\(path) is not a complete ledger store (its metadata is missing)")
                    }
                    return try StoreLayout { name in
                        try txn.openDatabase(named: name, create: true, duplicates: StoreLayout.duplicates.contains(name))
                    }
                }
            }
            store = try env.read { txn in
                guard let ledger = try txn.get(layout.meta, key: MetaKey.ledger), ledger.count == 16,
                    let device = try txn.get(layout.meta, key: MetaKey.device),
                    let schema = try txn.get(layout.meta, key: MetaKey.schema),
                    let format = try txn.get(layout.meta, key: MetaKey.format)
                else { throw LedgerError(.store, "\(path) is not a complete ledger store (its metadata is missing)") }
                let storeFormat = format.withUnsafeBytes { UInt64(bigEndianBytes: $0) }
                guard storeFormat <= Self.format else {
                    throw LedgerError(
                        .store,
                        "the store at \(path) has format \(storeFormat), newer than this ledger (\(Self.format)); upgrade the ledger")
                }
                let id = ledger.withUnsafeBytes { b in UUID(uuid: b.load(as: uuid_t.self)) }
                let schemaValue = Int(schema.withUnsafeBytes { UInt64(bigEndianBytes: $0) })
                guard schemaValue <= currentSchema else {
                    throw LedgerError(
                        .store,
                        "the store at \(path) uses event schema \(schemaValue), newer than this ledger (\(currentSchema)); upgrade the ledger"
                    )
                }
                let known = Set(Migrator.migrations.map(\.identifier))
                if let unknown = try Migrator.applied(txn, layout).first(where: { !known.contains($0) }) {
                    throw LedgerError(
                        .store,
                        "the store at \(path) records migration \"\(unknown)\", which this ledger does not know: the store is newer; upgrade the ledger"
                    )
                }
                return LedgerStore(
                    path: path, env: env, layout: layout, ledgerID: id,
                    device: String(decoding: device, as: UTF8.self), schema: schemaValue, keys: keys)
            }
        } catch let e as LedgerError {
            throw e
        } catch let e as LMDBError where e.isNotFound {
            throw LedgerError(.store, "\(path) is not a complete ledger store (a database is missing)")
        } catch {
            throw LedgerError(.store, "cannot open the store at \(path): \(error)")
        }
        try store.ensureProjectionIsCurrent(onRebuild: onRebuild)
        return store
    }

    private static func openEnvironment(_ path: String, options: StoreOptions) throws(LedgerError) -> Environment {
        do {
            // One environment per store and process, as LMDB requires: a second `open` of a
            // store shares the first one's.
            return try Environment.shared(path: path, options: options.environment)
        } catch {
            throw LedgerError(.store, "cannot open the LMDB environment at \(path): \(error.message)")
        }
    }

    /// Runs a read, turning storage failures into store errors.
    func read<R>(_ body: (borrowing Transaction) throws -> R) throws(LedgerError) -> R {
        try failing(as: "reading \(path)") { try env.read(body) }
    }

    /// Runs a write transaction, turning storage failures into store errors that say what was
    /// being done (`doing`: "appending to …").
    func write<R>(_ doing: @autoclosure () -> String, _ body: (borrowing Transaction) throws -> R) throws(LedgerError) -> R {
        try failing(as: doing()) { try env.write(body) }
    }

    /// Runs `body`: a `LedgerError` passes as it is, any other failure (LMDB's, the system's)
    /// becomes a store error saying what was being done ("`doing` failed: …"). The one place
    /// that turns storage failures into ledger errors.
    func failing<R>(as doing: @autoclosure () -> String, _ body: () throws -> R) throws(LedgerError) -> R {
        do {
            return try body()
        } catch let e as LedgerError {
            throw e
        } catch {
            throw LedgerError(.store, "\(doing()) failed: \(error)")
        }
    }

    // MARK: Reading

    /// The number of events (the last position).
    public func lastPosition() throws(LedgerError) -> UInt64 {
        try read { txn in try Self.lastPosition(txn, layout) }
    }

    static func lastPosition(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> UInt64 {
        guard let last = try txn.last(layout.events) else { return 0 }
        return last.key.withUnsafeBytes { UInt64(bigEndianBytes: $0) }
    }

    static func decodeRecord(_ bytes: UnsafeRawBufferPointer, position: UInt64) throws(LedgerError) -> Event {
        do {
            return try EventCodec.decode(bytes)
        } catch {
            throw LedgerError(.store, "the event at position \(position) is damaged: \(error.reason)", remedy: .verifyThenRestore, position: position)
        }
    }

    static func event(at position: UInt64, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> Event? {
        let key = position.bigEndianBytes
        var decoded: Event?
        _ = try txn.withValue(layout.events, key: key) { bytes in decoded = try decodeRecord(bytes, position: position) }
        return decoded
    }

    /// The event with id `id`, through the id index; nil when the store does not hold it.
    static func event(id: UUID, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> Event? {
        guard let position = try txn.withValue(layout.eventIds, key: id.bytes, { UInt64(bigEndianBytes: $0) }) else { return nil }
        return try event(at: position, txn, layout)
    }

    /// The event stored at `position`.
    public func event(at position: UInt64) throws(LedgerError) -> Event? {
        try read { txn in try Self.event(at: position, txn, layout) }
    }

    /// Visits events in local position order from `start`, until `body` returns false.
    public func scanEvents(from start: UInt64 = 1, _ body: (UInt64, Event) throws -> Bool) throws(LedgerError) {
        try read { txn in
            try txn.scan(layout.events, from: start.bigEndianBytes) { key, value in
                let position = UInt64(bigEndianBytes: key)
                return try body(position, try Self.decodeRecord(value, position: position))
            }
        }
    }

    /// Events about `goal` that folds read (set-aside ones are left out), in local position order.
    public func events(ofGoal goal: UUID) throws(LedgerError) -> [(position: UInt64, event: Event)] {
        try read { txn in try Self.events(ofGoal: goal, txn, layout) }
    }

    /// Local positions of the events about `goal`, in order.
    static func positions(ofGoal goal: UUID, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [UInt64] {
        var positions: [UInt64] = []
        try txn.scanDuplicates(layout.goalEvents, key: goal.bytes) { value in
            positions.append(UInt64(bigEndianBytes: value))
            return true
        }
        return positions
    }

    /// The goal's events that folds read, in position order: set-aside events are left out.
    static func events(ofGoal goal: UUID, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [(position: UInt64, event: Event)]
    {
        try positions(ofGoal: goal, txn, layout).compactMap { p in
            guard let e = try event(at: p, txn, layout) else {
                throw LedgerError.damaged("the goal index names position \(p), which holds no event", position: p)
            }
            return e.isFoldable ? (p, e) : nil
        }
    }

    /// Every event in canonical order (hybrid logical clock, then origin device), without the
    /// set-aside ones (``setAsideEvents()``).
    public func canonicalEvents(goal: UUID? = nil) throws(LedgerError) -> [(position: UInt64, event: Event)] {
        try read { txn in
            if let goal {
                return try Self.events(ofGoal: goal, txn, layout).sorted { $0.event.key < $1.event.key }
            }
            // Canonical order is sorted when asked for: it is needed for reading a whole log
            // (`ledger log`), never on the append or replay paths.
            var out: [(position: UInt64, event: Event)] = []
            try txn.scan(layout.events) { key, value in
                let p = UInt64(bigEndianBytes: key)
                let e = try Self.decodeRecord(value, position: p)
                if e.isFoldable { out.append((p, e)) }
                return true
            }
            return out.sorted { $0.event.key < $1.event.key }
        }
    }

    /// The current state of one goal, from the stored projection.
    public func goalState(_ goal: UUID) throws(LedgerError) -> GoalState {
        try read { txn in
            try StoredProjection.goal(goal, txn, try StoredProjection.active(txn, layout), layout, rule: historyRule)
                ?? GoalState(id: goal, rule: historyRule)
        }
    }

    /// What the ledger knows about a device (its latest settings and authorization), from the
    /// stored projection.
    public func deviceState(_ name: String) throws(LedgerError) -> DeviceState {
        try read { txn in try StoredProjection.device(name, txn, try StoredProjection.active(txn, layout)) }
    }

    /// Visits every created goal of the stored projection in id order (the order of
    /// `GoalProjection.existingGoals`), each with its entries, in one read transaction. Only the
    /// goal being visited is in memory, so a long history costs time, not memory.
    public func forEachGoal(_ body: (GoalState) throws -> Void) throws(LedgerError) {
        try read { txn in
            try StoredProjection.forEachGoal(txn, layout, rule: historyRule, revoked: try TrustTable.revocations(txn, layout)) { g in
                if g.exists { try body(g) }
            }
        }
    }

    /// The digest of the stored projection: the value ``GoalProjection/digest`` computes from
    /// scratch (per goal a hash of its facts, whose entries contribute through an
    /// order-independent sum; for the ledger a combination of the created goals' hashes),
    /// maintained in the transaction that changes the projection, so reading it reads one row.
    /// `verify` recomputes it. See `docs/storage-and-guarantees.md` ("The digest") for its
    /// construction; it tells honest stores that diverged apart, and is no defence against
    /// forgery.
    public func digest() throws(LedgerError) -> String { try digestAndGoalCount().digest }

    /// The digest and the number of created goals, from the digest's ledger row.
    package func digestAndGoalCount() throws(LedgerError) -> (digest: String, goals: Int) {
        let totals = try read { txn in try StoredProjection.ledgerDigest(txn, try StoredProjection.active(txn, layout)) }
        return (totals.hex, Int(clamping: totals.count))
    }

    /// The stored projection: every goal and device, as of its checkpoint.
    public func projection() throws(LedgerError) -> GoalProjection {
        try read { txn in try StoredProjection.load(txn, layout, rule: historyRule) }
    }

    /// The stored projection's generation, version and checkpoint.
    public func projectionStatus() throws(LedgerError) -> (version: UInt64, checkpoint: UInt64) {
        try read { txn in
            let s = try StoredProjection.status(txn, layout)
            return (s.version, s.checkpoint)
        }
    }

    /// Folds the log from scratch: every event, or those up to `position`, or those whose wall
    /// time `at` is at or before `asOf`.
    public func replay(through position: UInt64? = nil, asOf: Instant? = nil) throws(LedgerError) -> GoalProjection {
        var projection = GoalProjection(historyRule: historyRule)
        projection.revokedAfter = try read { txn in try TrustTable.revocations(txn, layout) }
        try scanEvents { p, e in
            if let position, p > position { return false }
            if let asOf, e.at > asOf { return true }
            projection.apply(e)
            projection.position = p
            return true
        }
        if let position { projection.position = min(position, projection.position) }
        return projection
    }

    /// For each origin device, the last origin sequence this store holds.
    public func originHeads() throws(LedgerError) -> [String: UInt64] {
        try read { txn in try Self.originHeads(txn, layout) }
    }

    static func originHeads(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [String: UInt64] {
        var heads: [String: UInt64] = [:]
        try txn.scan(layout.originHeads) { key, value in
            heads[String(decoding: key, as: UTF8.self)] = UInt64(bigEndianBytes: value)
            return true
        }
        return heads
    }

    /// Bytes of live data pages per table (the log, each index, each projection table), and the
    /// extent of the data file, which also holds pages freed by earlier transactions for reuse.
    package func storageReport() throws(LedgerError) -> (tables: [(name: String, bytes: Int)], fileBytes: Int) {
        try read { txn in
            var tables: [(String, LMDB.Database)] = [
                ("meta", layout.meta), ("events", layout.events), ("eventIds", layout.eventIds), ("origins", layout.origins),
                ("originHeads", layout.originHeads), ("goalEvents", layout.goalEvents), ("deviceEvents", layout.deviceEvents),
            ]
            for (g, t) in layout.projections.enumerated() {
                tables += Array(zip(ProjectionTables.names(generation: g), t.all))
            }
            return (
                try tables.map { name, db in
                    let (pages, size) = try txn.pages(db)
                    return (name, pages * size)
                }, env.usedBytes
            )
        }
    }

    /// Visits the stored values of one of the store's tables (`events`, `eventIds`, `p0.goals`, …)
    /// with a plain cursor, in key order, undecoded: the raw-LMDB baseline of the benchmark,
    /// read through this store's own environment (LMDB forbids opening one twice in a process).
    package func scanRawValues(of table: String, _ body: (UnsafeRawBufferPointer) -> Void) throws(LedgerError) {
        let db: LMDB.Database
        do {
            db = try env.existingDatabase(named: table, duplicates: StoreLayout.duplicates.contains(table))
        } catch {
            throw LedgerError(.invalidArgument, "\(path) has no table \(table): \(error.message)")
        }
        try read { txn in
            try txn.scan(db) { _, v in
                body(v)
                return true
            }
        }
    }

    /// The latest hybrid logical clock reading of this store.
    public func clock() throws(LedgerError) -> HLC {
        try read { txn in
            HLC(rawValue: try txn.get(layout.meta, key: MetaKey.hlc).map { $0.withUnsafeBytes { UInt64(bigEndianBytes: $0) } } ?? 0)
        }
    }
}

/// How a store sizes its memory map: the map is the most the store's file may grow to before it
/// is enlarged; it grows by doubling, by itself, while no transaction of the process is open.
public struct StoreOptions: Equatable, Sendable {
    /// The map's size when the store opens (64 MiB by default): the first doubling happens when
    /// the data outgrows it.
    public var initialMapSize = 64 << 20
    /// The largest the map may grow to (1 TiB of address space by default, not of disk).
    public var maximumMapSize = 1 << 40

    /// The defaults.
    public init() {}

    var environment: Environment.Options {
        var o = Environment.Options()
        o.initialMapSize = initialMapSize
        o.maximumMapSize = maximumMapSize
        // The log's tables, two generations of projection tables and the obsolete ones a
        // rebuild drops, with room to grow.
        o.maxDatabases = 64
        return o
    }
}
