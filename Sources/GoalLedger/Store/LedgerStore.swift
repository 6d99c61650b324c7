import Dispatch
import Foundation
import LMDB
import Sodium
import Synchronization

/// One device's copy of the ledger: an LMDB environment holding the event log and its indexes.
///
/// Every write is one LMDB write transaction: the events, every index, the projection and the
/// clock are written together or not at all, so a crash leaves either the whole write or none
/// of it.
public final class LedgerStore: @unchecked Sendable {
    /// The store format this code writes; stores with a newer one are refused, and those with an
    /// older one are brought to it when opened, in one write transaction that leaves the log as
    /// it is (format 1 kept a row of the origin index per event; format 2 keeps one per run of
    /// an origin's consecutive sequences at consecutive positions; format 3 keys the id index by
    /// the first half of an id, with positions of a few bytes; format 4 keeps a goal's
    /// positions as rows of distances; format 5 keys the device index by position alone;
    /// format 6 keeps the id index's newest rows in a small table of their own, moved into the
    /// large one in bulk).
    public static let format: UInt64 = 6
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
    let env: Environment

    let layout: StoreLayout
    /// See ``verifyProgress``. The closure is held in a box: a function value held directly as
    /// the mutex's value is re-abstracted on every `withLock` (its `inout` is written back), so
    /// each read would wrap it in two more thunks and its calls would grow deeper with the log.
    let progressHook = Mutex<ProgressHook?>(nil)
    /// The id index's keys, which the store's appends check their new ids against first
    /// (see `StoredIDFilter`: it knows when they may).
    let idFilter = Mutex(StoredIDFilter())
    /// Where the `async` writes of this store run, one after another, off the callers' actors.
    let writer = DispatchQueue(label: "goal-ledger.writer", qos: .userInitiated)

    private init(
        path: String, env: Environment, layout: StoreLayout, ledgerID: UUID, device: String, keys: (any DeviceKeyStore)?
    ) {
        self.keys = keys ?? DirectoryKeyStore(directory: path)
        self.path = path
        self.env = env
        self.layout = layout
        self.ledgerID = ledgerID
        self.device = device
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
        options: StoreOptions = StoreOptions(), keys: (any DeviceKeyStore)? = nil, signed: Bool, key existingKey: SigningKey? = nil
    ) throws(LedgerError) -> LedgerStore {
        let keyStore = keys ?? DirectoryKeyStore(directory: path)
        let founding = ledger == nil && schema == currentSchema && signed
        // A recovered store keeps its device's own key (`existingKey`).
        let key: SigningKey? = schema == currentSchema && signed ? (existingKey ?? SigningKey.generate()) : nil
        let ledger = ledger ?? (founding ? EventChain.ledgerID(founder: device, publicKey: key!.publicKey) : UUID())
        guard DeviceName.isValid(device) else {
            throw LedgerError(
                .invalidArgument, "invalid device name \"\(device)\": use 1 to 64 of a-z 0-9 . _ - starting with a letter or digit")
        }
        guard (1...currentSchema).contains(schema) else {
            throw LedgerError(
                .invalidArgument, "schema \(schema) is not supported (this version creates schema 1 or \(currentSchema) stores)")
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
        return try failing({ "cannot initialize the store at \(path): \($0)" }) {
            let layout = try env.write { txn in
                let layout = try StoreLayout { name in
                    try txn.openDatabase(named: name, create: true, duplicates: StoreLayout.duplicates(of: name))
                }
                if try txn.get(layout.meta, key: MetaKey.ledger) != nil {
                    throw LedgerError("a ledger store already exists at \(path)", reason: .storeExists(path: path))
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
            let store = LedgerStore(path: path, env: env, layout: layout, ledgerID: ledger, device: device, keys: keyStore)
            if let key {
                try keyStore.save(key, ledger: ledger, device: device)
                if founding { try store.trustFounder(key.publicKey) }
            }
            return store
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
        do {
            return try open(at: path, env: env, onRebuild: onRebuild, keys: keys)
        } catch {
            // A store whose tables cannot be read may be damaged below them: said so, where.
            if error.code == .store, !error.isFileDamage,
                let d = try? DataFile(directory: path).check(limit: 1).first
            {
                throw LedgerError.storeDamaged(at: path, "\(d)")
            }
            throw error
        }
    }

    private static func open(
        at path: String, env: Environment, onRebuild: ((String) -> Void)?, keys: (any DeviceKeyStore)?
    ) throws(LedgerError) -> LedgerStore {
        let (store, format) = try failing({ "cannot open the store at \(path): \($0)" }) {
            let layout = try openTables(at: path, env)
            do {
                return try env.withReadTransaction { opened in
                    let (id, device, format) = try identity(at: path, StoreTransaction(opened, layout: layout))
                    return (LedgerStore(path: path, env: env, layout: layout, ledgerID: id, device: device, keys: keys), format)
                }
            } catch let e as LMDBError where e.isNotFound {
                throw LedgerError(.store, "\(path) is not a complete ledger store (a database is missing)")
            }
        }
        if format < Self.format { try store.upgradeFormat(from: format) }
        try store.adoptStagedKey()
        try store.ensureProjectionIsCurrent(onRebuild: onRebuild)
        return store
    }

    /// The store's tables; those a store from before a table existed lacks are created (empty
    /// projection tables: the version check then rebuilds them).
    private static func openTables(at path: String, _ env: Environment) throws -> StoreLayout {
        do {
            return try StoreLayout { name in try env.existingDatabase(named: name, duplicates: StoreLayout.duplicates(of: name)) }
        } catch let e as LMDBError where e.isNotFound {
            return try env.write { txn in
                guard try txn.get(try txn.openDatabase(named: "meta", create: false), key: MetaKey.ledger) != nil else {
                    throw LedgerError(.store, "\(path) is not a complete ledger store (its metadata is missing)")
                }
                return try StoreLayout { name in
                    try txn.openDatabase(named: name, create: true, duplicates: StoreLayout.duplicates(of: name))
                }
            }
        }
    }

    /// The ledger's id and the store's device, from its metadata; a store of a newer format,
    /// schema or migration than this code knows is refused.
    private static func identity(at path: String, _ txn: borrowing StoreTransaction) throws -> (UUID, String, UInt64) {
        let layout = txn.layout
        guard let ledger = try txn.get(layout.meta, key: MetaKey.ledger), ledger.count == 16,
            let device = try txn.get(layout.meta, key: MetaKey.device),
            let schema = try txn.get(layout.meta, key: MetaKey.schema),
            let format = try txn.get(layout.meta, key: MetaKey.format)
        else { throw LedgerError(.store, "\(path) is not a complete ledger store (its metadata is missing)") }
        let storeFormat = UInt64(bigEndianBytes: format)
        guard storeFormat <= Self.format else {
            throw LedgerError(
                .store, "the store at \(path) has format \(storeFormat), newer than this ledger (\(Self.format)); upgrade the ledger")
        }
        // Clamped: a damaged value past `Int.max` is refused below as newer, not trapped on.
        let schemaValue = Int(clamping: UInt64(bigEndianBytes: schema))
        guard schemaValue <= currentSchema else {
            throw LedgerError(
                .store,
                "the store at \(path) uses event schema \(schemaValue), newer than this ledger (\(currentSchema)); upgrade the ledger")
        }
        let known = Set(Migrator.migrations.map(\.identifier))
        if let unknown = try txn.appliedMigrations().first(where: { !known.contains($0) }) {
            throw LedgerError(
                .store,
                "the store at \(path) records migration \"\(unknown)\", which this ledger does not know: the store is newer; upgrade the ledger"
            )
        }
        let id = ledger.withUnsafeBytes { b in UUID(uuid: b.load(as: uuid_t.self)) }
        return (id, String(decoding: device, as: UTF8.self), storeFormat)
    }

    private static func openEnvironment(_ path: String, options: StoreOptions) throws(LedgerError) -> Environment {
        do {
            // One environment per store and process, as LMDB requires: a second `open` of a
            // store shares the first one's.
            return try Environment.shared(path: path, options: options.environment)
        } catch {
            if error.isDamage { throw damaged(path, error) }
            throw LedgerError(.store, "cannot open the LMDB environment at \(path): \(error.message)")
        }
    }

    /// The store at `path` is damaged where `error` says (a page of its file), or somewhere LMDB
    /// met.
    static func damaged(_ path: String, _ error: LMDBError) -> LedgerError {
        .storeDamaged(at: path, error.damage.map { "\($0)" } ?? "a page LMDB could not read (\(error.message))")
    }

    /// Runs `body` in a read transaction of the store's own upkeep, turning storage failures
    /// into store errors (the reads of the ledger go through ``read(_:)-7x66n``).
    func readTransaction<R>(_ body: (borrowing StoreTransaction) throws -> R) throws(LedgerError) -> R {
        try failing(as: "reading \(path)") { try env.withReadTransaction { txn in try body(StoreTransaction(txn, layout: layout)) } }
    }

    /// Runs `body` in a write transaction of the store's own upkeep (rebuild, migration, trust)
    /// and commits it; errors pass as they are. Like every write, `body` runs again on a grown map.
    func writeTransaction<R>(_ body: (borrowing StoreTransaction) throws -> R) throws -> R {
        try env.withWriteTransaction { txn in try body(StoreTransaction(txn, layout: layout)) }
    }

    /// ``writeTransaction(_:)``, turning storage failures into store errors that say what was
    /// being done (`doing`: "marking … as restored").
    func writeTransaction<R>(_ doing: @autoclosure () -> String, _ body: (borrowing StoreTransaction) throws -> R) throws(LedgerError) -> R {
        try failing(as: doing()) { try writeTransaction(body) }
    }

    /// Lets the system drop the pages of the file `txn` has read so far from this process's
    /// memory (they stay in the file's cache): a long read (verify, clone) then holds at most
    /// what it reads between two calls.
    func releaseMappedPages(_ txn: borrowing StoreTransaction) { env.releaseMappedPages(txn.lmdb) }

    /// Runs `body`: a `LedgerError` passes as it is, any other failure (LMDB's, the system's)
    /// becomes a store error saying what was being done ("`doing` failed: …"). The one place
    /// that turns storage failures into ledger errors.
    func failing<R>(as doing: @autoclosure () -> String, _ body: () throws -> R) throws(LedgerError) -> R {
        try Self.failing(as: doing(), body)
    }

    /// ``failing(as:_:)`` where there is no store yet.
    static func failing<R>(as doing: @autoclosure () -> String, _ body: () throws -> R) throws(LedgerError) -> R {
        try failing({ "\(doing()) failed: \($0)" }, body)
    }

    /// Runs `body`: a `LedgerError` passes as it is, any other failure becomes a store error
    /// whose message `message` makes from it (where there is no store yet: creating or opening one).
    static func failing<R>(_ message: (any Error) -> String, _ body: () throws -> R) throws(LedgerError) -> R {
        do {
            return try body()
        } catch let e as LedgerError {
            throw e
        } catch let e as LMDBError where e.isDamage {
            // LMDB met a damaged page and said so (rather than stopping the process).
            throw LedgerError("\(message(e)); the file is damaged: restore a backup or recover", reason: .fileDamaged(position: nil))
        } catch {
            throw LedgerError(.store, message(error))
        }
    }

    // MARK: Reading and writing

    /// Runs `body` with a snapshot of the store: every read of the ledger (goals and their
    /// views, entries, the log, status, verify, the reminder plan, what a peer lacks) is a call
    /// of ``LedgerSnapshot``, and everything `body` reads agrees, as of one commit.
    ///
    ///     let list = try store.read { try $0.goals(now: .systemNow, includingEntries: false) }
    ///
    /// Reads do not wait for writes. Errors are ``LedgerError``s, except what `body` throws of
    /// its own, which passes as it is. From async code, use the `async` form: a snapshot must not
    /// be held across a suspension.
    @available(*, noasync, message: "a snapshot must not cross a suspension point; use the async form of read")
    public func read<R>(_ body: (borrowing LedgerSnapshot) throws -> R) throws -> R {
        do {
            return try snapshot(body)
        } catch let e as LMDBError {
            if e.isDamage { throw Self.damaged(path, e) }
            throw LedgerError(.store, "reading \(path) failed: \(e)")
        }
    }

    /// Runs `body` with the store's writer in one write transaction and commits it: every change
    /// to the ledger (events appended or imported, a goal created, a device enrolled) is a call
    /// of ``LedgerWriter``, and what `body` writes commits together or not at all.
    ///
    ///     try store.write { try $0.recordProgress(goal, amount: try Amount(2.5), now: now) }
    ///
    /// When `body` throws, nothing is written and its error is rethrown; the store's own
    /// failures are ``LedgerError``s. Writes of the store run one at a time. `body` may run a
    /// second time when the store's file has to grow mid-transaction (the first run is rolled
    /// back), so it should only read and write the ledger. From async code, use the `async`
    /// form, which runs on the store's writer queue.
    @available(*, noasync, message: "a write transaction must not cross a suspension point; use the async form of write")
    @discardableResult
    public func write<R>(_ body: (borrowing LedgerWriter) throws -> R) throws -> R {
        do {
            return try commit(body)
        } catch let e as LMDBError {
            if e.isDamage { throw Self.damaged(path, e) }
            throw LedgerError(.store, "writing to \(path) failed: \(e)")
        }
    }

    /// ``read(_:)-7x66n`` off the caller's actor: `body` runs on a background thread, and the caller
    /// goes on while it reads (a long read, such as `verify()`, does not hold up a screen).
    public func read<R: Sendable>(_ body: @escaping @Sendable (borrowing LedgerSnapshot) throws -> R) async throws -> R {
        try await onQueue(DispatchQueue.global(qos: .userInitiated)) { store in try store.read(body) }
    }

    /// ``write(_:)-9fstg`` off the caller's actor, on the store's writer queue: the writes of one store
    /// run one after another in the order they were called, while the caller's actor (the main
    /// actor of a screen) goes on. An observer (``observe(refreshAtDayChange:otherProcesses:_:)``)
    /// sees each write once it is committed.
    ///
    ///     Button("Done") { Task { try await store.write { try $0.recordCompletion(goal) } } }
    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (borrowing LedgerWriter) throws -> R) async throws -> R {
        try await onQueue(writer) { store in try store.write(body) }
    }

    /// Runs `body` with this store on `queue` and returns its result, without blocking the caller.
    func onQueue<T: Sendable>(_ queue: DispatchQueue, _ body: @escaping @Sendable (LedgerStore) throws -> T) async throws -> T {
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { try body(self) })
            }
        }
        return try result.get()
    }

    // MARK: Reading

    static func decodeRecord(_ bytes: UnsafeRawBufferPointer, position: UInt64) throws(LedgerError) -> Event {
        do {
            return try EventCodec.decode(bytes)
        } catch {
            throw LedgerError(
                "the event at position \(position) is damaged: \(error.reason)", reason: .storeDamaged(position: position))
        }
    }

    /// Bytes of live data pages per table (the log, each index, each projection table), and the
    /// extent of the data file, which also holds pages freed by earlier transactions for reuse.
    /// The pages are counted by a walk of the file (`DataFile`): LMDB's own statistics leave out
    /// the pages of a key's duplicates once they outgrow it (its sub-tree), which the goal index
    /// and the entries have.
    package func storageReport() throws(LedgerError) -> (tables: [(name: String, bytes: Int)], fileBytes: Int) {
        let names = StoreLayout.names + [0, 1].flatMap { ProjectionTables.names(generation: $0) }
        let file: DataFile
        do {
            file = try DataFile(directory: path)
        } catch {
            throw LedgerError(.store, "cannot read \(path)/data.mdb: \(error.message)")
        }
        var pages: [Substring: Int] = [:]
        for label in file.pagesInUse().values {
            // "events leaf", "p0.goalEntries branch": the table, then the kind of page.
            guard let space = label.lastIndex(of: " ") else { continue }
            pages[label[..<space], default: 0] += 1
        }
        return (names.map { ($0, (pages[Substring($0)] ?? 0) * file.pageSize) }, env.usedBytes)
    }

    /// Visits the stored values of one of the store's tables (`events`, `ids`, `p0.goals`, …)
    /// with a plain cursor, in key order, undecoded: the raw-LMDB baseline of the benchmark,
    /// read through this store's own environment (LMDB forbids opening one twice in a process).
    package func scanRawValues(of table: String, _ body: (UnsafeRawBufferPointer) -> Void) throws(LedgerError) {
        let db: LMDB.Database
        do {
            db = try env.existingDatabase(named: table, duplicates: StoreLayout.duplicates(of: table))
        } catch {
            throw LedgerError(.invalidArgument, "\(path) has no table \(table): \(error.message)")
        }
        try readTransaction { txn in
            try txn.scan(db) { _, v in
                body(v)
                return true
            }
        }
    }

}
