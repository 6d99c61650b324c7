import CLMDB
import Glibc
import Synchronization

/// One LMDB environment: a directory holding a memory-mapped B+tree file and its lock file.
///
/// LMDB's rules are kept here so that no other module has to know them:
/// - stale reader slots left by crashed processes are cleared when the environment opens;
/// - a write that runs out of map space (`MDB_MAP_FULL`) is rolled back, the map is doubled,
///   and the write is run again, so write bodies must only act through their transaction;
/// - the map is resized (grown here, or adopted after another process grew it) only while no
///   transaction of this process is open: new transactions wait at a gate meanwhile;
/// - a transaction whose commit failed is never aborted (LMDB has already freed it);
/// - transactions are scoped to a synchronous closure, so none can be held across an `await`.
public final class Environment: @unchecked Sendable {
    let env: OpaquePointer
    public let path: String
    /// How many stale reader slots were cleared when the environment opened.
    public private(set) var staleReadersCleared: Int32 = 0
    private let maximumMapSize: Int
    let gate = TransactionGate()

    public struct Options: Sendable {
        public var maxDatabases: UInt32 = 32
        public var initialMapSize: Int = 64 << 20
        public var maximumMapSize: Int = 1 << 40
        public var readOnly = false
        /// File mode of the data and lock files.
        public var fileMode: mode_t = 0o600
        public init() {}
    }

    /// The environments open in this process, by the device and inode of their data file (so
    /// that another spelling of a path is the same file).
    private static let openFiles = Mutex<[FileIdentity: Weak]>([:])

    final class Weak: @unchecked Sendable {
        weak var environment: Environment?
        init(_ e: Environment) { environment = e }
    }

    struct FileIdentity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64

        init?(dataFileIn directory: String) {
            var s = stat()
            guard stat(directory + "/data.mdb", &s) == 0 else { return nil }
            device = UInt64(s.st_dev)
            inode = UInt64(s.st_ino)
        }
    }

    private var identity: FileIdentity?

    /// Opens (or creates the files of) the environment in the existing directory `path`.
    /// Refuses (``LMDBError/alreadyOpen``) an environment this process holds open already: LMDB
    /// allows one, since closing a second would drop the first one's locks.
    public convenience init(path: String, options: Options = Options()) throws(LMDBError) {
        try self.init(path: path, options: options, registered: true)
    }

    /// The environment in `path` as this process holds it: the one already open (whatever
    /// options it was opened with), else a new one. Every user of one environment in a process
    /// shares it, as LMDB requires.
    public static func shared(path: String, options: Options = Options()) throws(LMDBError) -> Environment {
        let result: Result<Environment, LMDBError> = openFiles.withLock { open in
            if let id = FileIdentity(dataFileIn: path), let existing = open[id]?.environment { return .success(existing) }
            do throws(LMDBError) {
                let e = try Environment(path: path, options: options, registered: false)
                if let id = e.identity { open[id] = Weak(e) }
                return .success(e)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private init(path: String, options: Options, registered: Bool) throws(LMDBError) {
        if registered, let existing = FileIdentity(dataFileIn: path), Self.openFiles.withLock({ $0[existing]?.environment != nil }) {
            throw LMDBError.alreadyOpen
        }
        // LMDB trusts its file: a damaged meta page or a file cut short would stop the process
        // (an assertion, SIGSEGV, SIGBUS) rather than fail. Checked before it maps the file.
        try DataFile.checkBeforeOpening(directory: path)
        var handle: OpaquePointer?
        var cleared: Int32 = 0
        try LMDBError.check(mdb_env_create(&handle))
        guard let handle else { throw LMDBError(code: EINVAL) }
        do throws(LMDBError) {
            try LMDBError.check(mdb_env_set_maxdbs(handle, options.maxDatabases))
            try LMDBError.check(mdb_env_set_mapsize(handle, Self.openingMapSize(directory: path, options)))
            var flags = UInt32(MDB_NOTLS)
            if options.readOnly { flags |= UInt32(MDB_RDONLY) }
            try LMDBError.check(mdb_env_open(handle, path, flags, options.fileMode))
            var dead: Int32 = 0
            try LMDBError.check(mdb_reader_check(handle, &dead))
            cleared = dead
        } catch {
            mdb_env_close(handle)
            throw error
        }
        self.env = handle
        self.path = path
        self.maximumMapSize = options.maximumMapSize
        self.staleReadersCleared = cleared
        identity = FileIdentity(dataFileIn: path)
        if registered, let id = identity {
            let fresh = Self.openFiles.withLock { open in
                guard open[id]?.environment == nil else { return false }
                open[id] = Weak(self)
                return true
            }
            // Two opens of a new environment raced in this process: keep the first (this one is
            // closed by `deinit`, which runs when an initializer throws after setting every
            // property; it does not remove the first one's entry).
            guard fresh else { throw LMDBError.alreadyOpen }
        }
    }

    deinit {
        // Closed under the registry's lock: no open of the same files can start meanwhile.
        Self.openFiles.withLock { open in
            mdb_env_close(env)
            if let identity, open[identity]?.environment == nil || open[identity]?.environment === self { open[identity] = nil }
        }
    }

    /// The current size of the memory map in bytes.
    public var mapSize: Int {
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        return info.me_mapsize
    }

    /// Bytes of the data file in use (pages up to the last one written), whatever the map size.
    public var usedBytes: Int {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        mdb_env_info(env, &info)
        mdb_env_stat(env, &stat)
        return (info.me_last_pgno + 1) * Int(stat.ms_psize)
    }

    /// Opens a named database, creating it when `create` is set (which needs a writable environment).
    public func database(named name: String, create: Bool) throws -> Database {
        try write { txn throws(LMDBError) in
            try txn.openDatabase(named: name, create: create)
        }
    }

    /// Opens an existing named database inside a read transaction, so that opening never waits for a writer.
    public func existingDatabase(named name: String, duplicates: DuplicateValues = .none) throws(LMDBError) -> Database {
        let txn = try begin(readOnly: true)
        defer { gate.leave() }
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, name, duplicates.flags, &dbi)
        if rc != 0 {
            mdb_txn_abort(txn)
            throw LMDBError(code: rc)
        }
        // Committing a read transaction keeps the handle open for the environment.
        try LMDBError.check(mdb_txn_commit(txn))
        return Database(dbi: dbi)
    }

    /// Runs `body` in a read-only snapshot of the store. Not from async code: a transaction
    /// belongs to its thread and must not be held across a suspension.
    @available(*, noasync, message: "LMDB transactions must not cross a suspension point; read from synchronous code")
    public func read<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        try withReadTransaction { txn in try body(txn) }
    }

    /// `read`, handing `body` the transaction to own: for a value that wraps the transaction
    /// (a snapshot type of a store), which `body` must not let escape.
    @available(*, noasync, message: "LMDB transactions must not cross a suspension point; read from synchronous code")
    public func withReadTransaction<R>(_ body: (consuming Transaction) throws -> R) throws -> R {
        let txn = try begin(readOnly: true)
        defer {
            mdb_txn_abort(txn)
            gate.leave()
        }
        return try body(Transaction(txn: txn, writable: false))
    }

    /// `withReadTransaction` for a helper thread whose work another thread, holding a
    /// transaction of its own, waits for (a part of a long read): nil, without waiting, while the
    /// map is being resized or must be (another process grew it), since the resize would wait for
    /// that other thread's transaction, and that thread for this one. The caller then does
    /// without the help.
    @available(*, noasync, message: "LMDB transactions must not cross a suspension point; read from synchronous code")
    public func withReadTransactionIfAvailable<R>(_ body: (consuming Transaction) throws -> R) throws -> R? {
        guard gate.tryEnter() else { return nil }
        var txn: OpaquePointer?
        let rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn)
        guard rc == 0, let txn else {
            gate.leave()
            if rc == MDB_MAP_RESIZED { return nil }
            throw LMDBError(code: rc)
        }
        defer {
            mdb_txn_abort(txn)
            gate.leave()
        }
        return try body(Transaction(txn: txn, writable: false))
    }

    /// Runs `body` in the single write transaction and commits it; any error thrown by `body`
    /// rolls everything back. When the map is full the write is retried on a larger map.
    @available(*, noasync, message: "LMDB transactions must not cross a suspension point; write from synchronous code")
    public func write<R, E: Error>(_ body: (borrowing Transaction) throws(E) -> R) throws -> R {
        try withWriteTransaction { (txn) throws(E) in try body(txn) }
    }

    /// `write`, handing `body` the transaction to own: for a value that wraps the transaction
    /// (a writer type of a store), which `body` must not let escape.
    @available(*, noasync, message: "LMDB transactions must not cross a suspension point; write from synchronous code")
    public func withWriteTransaction<R, E: Error>(_ body: (consuming Transaction) throws(E) -> R) throws -> R {
        while true {
            let txn = try begin(readOnly: false)
            let result: R
            do {
                result = try body(Transaction(txn: txn, writable: true))
            } catch let error as LMDBError where error.isMapFull {
                mdb_txn_abort(txn)
                gate.leave()
                try grow()
                continue
            } catch {
                mdb_txn_abort(txn)
                gate.leave()
                throw error
            }
            // mdb_txn_commit frees the transaction whether or not it succeeds.
            let rc = mdb_txn_commit(txn)
            gate.leave()
            if rc == MDB_MAP_FULL {
                try grow()
                continue
            }
            try LMDBError.check(rc)
            commits.signal()
            return result
        }
    }

    /// Woken after every write this process commits in the environment (whichever user of the
    /// environment wrote): what observers in the process wait on instead of a timer.
    public let commits = CommitSignal()

    /// Subscribers told of each commit: each gets a call per commit (from the committing thread;
    /// keep it short, such as yielding into an `AsyncStream` that keeps only the newest).
    public final class CommitSignal: Sendable {
        private let subscribers = Mutex<[UInt64: @Sendable () -> Void]>([:])
        private let nextID = Atomic<UInt64>(0)

        /// Calls `body` after every commit until `cancel` is called with the returned token.
        public func subscribe(_ body: @escaping @Sendable () -> Void) -> UInt64 {
            let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
            subscribers.withLock { $0[id] = body }
            return id
        }

        /// Ends the subscription `token`.
        public func cancel(_ token: UInt64) { _ = subscribers.withLock { $0.removeValue(forKey: token) } }

        func signal() {
            let bodies = subscribers.withLock { Array($0.values) }
            for body in bodies { body() }
        }
    }

    /// Writes a consistent copy of the environment into the existing directory `path`.
    public func copy(to path: String, compacting: Bool) throws(LMDBError) {
        try LMDBError.check(mdb_env_copy2(env, path, compacting ? UInt32(MDB_CP_COMPACT) : 0))
    }

    /// Writes a consistent copy of the environment's data into the new file `file`, created with
    /// exactly `mode` (whatever the umask) before a byte is written, and flushed to disk. An
    /// existing file is refused (`EEXIST`); a failed copy leaves the partial file to the caller.
    public func copy(toFile file: String, compacting: Bool, mode: mode_t = 0o600) throws(LMDBError) {
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw LMDBError(code: errno) }
        var rc: Int32 = fchmod(fd, mode) == 0 ? 0 : errno
        if rc == 0 { rc = mdb_env_copyfd2(env, fd, compacting ? UInt32(MDB_CP_COMPACT) : 0) }
        if rc == 0 && fsync(fd) != 0 { rc = errno }
        if close(fd) != 0 && rc == 0 { rc = errno }
        try LMDBError.check(rc)
    }

    /// Begins a transaction, having passed the gate; the caller leaves the gate when it ends.
    private func begin(readOnly: Bool) throws(LMDBError) -> OpaquePointer {
        var attempts = 0
        while true {
            gate.enter()
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
            if rc == 0, let txn { return txn }
            gate.leave()
            if rc == MDB_MAP_RESIZED && attempts < 8 {
                // Another process grew the map: adopt its size (with no transaction open) and try again.
                attempts += 1
                try resize { () throws(LMDBError) in try LMDBError.check(mdb_env_set_mapsize(self.env, 0)) }
                continue
            }
            throw LMDBError(code: rc)
        }
    }

    /// The map an environment opens with: `initialMapSize`, or for a writer, twice its data file
    /// (up to the maximum) when that is more. LMDB would map just the file, so the first write
    /// that grows it (a rebuild writes a whole generation of tables) would fill the map, be
    /// rolled back and run again on a doubled one; the room costs address space, not memory.
    static func openingMapSize(directory: String, _ options: Options) -> Int {
        var s = stat()
        guard !options.readOnly, stat(directory + "/data.mdb", &s) == 0, s.st_size > 0 else { return options.initialMapSize }
        let (twice, overflow) = Int(s.st_size).multipliedReportingOverflow(by: 2)
        let mib = 1 << 20
        let room = overflow ? options.maximumMapSize : (twice + mib - 1) / mib * mib
        return max(options.initialMapSize, min(room, options.maximumMapSize))
    }

    /// Doubles the map, up to the maximum.
    /// Grows the map, by doublings, until `bytes` more than the file uses fit in it, before a
    /// write known to be that large: a write that fills the map is run again from its start on
    /// a map twice the size, so a large write would otherwise run several times. Like a write
    /// that fills the map, it waits for the other threads' transactions to end. A map at its
    /// largest is left as it is; so is the map when the calling thread holds a transaction of
    /// this environment (false: the write then grows the map as it fills it).
    @discardableResult
    public func reserve(_ bytes: Int) throws(LMDBError) -> Bool {
        let needed = usedBytes.addingReportingOverflow(max(0, bytes))
        guard !needed.overflow, mapSize < needed.partialValue, mapSize < maximumMapSize else { return true }
        return try gate.exclusively { () throws(LMDBError) in
            var size = self.mapSize
            while size < needed.partialValue && size < self.maximumMapSize { size = min(size * 2, self.maximumMapSize) }
            if size > self.mapSize { try LMDBError.check(mdb_env_set_mapsize(self.env, size)) }
        }
    }

    private func grow() throws(LMDBError) {
        try resize { () throws(LMDBError) in
            let current = self.mapSize
            guard current < self.maximumMapSize else { throw LMDBError(code: MDB_MAP_FULL) }
            try LMDBError.check(mdb_env_set_mapsize(self.env, min(current * 2, self.maximumMapSize)))
        }
    }

    /// Runs a change of the map size once no transaction of this process is open.
    private func resize(_ change: () throws(LMDBError) -> Void) throws(LMDBError) {
        // A thread holding a transaction of its own would wait for itself: refuse instead.
        guard try gate.exclusively(change) else { throw LMDBError(code: MDB_MAP_FULL) }
    }

    /// Lets the kernel take back the pages of this environment's memory map that the process
    /// has read: they stay in the file cache and are read from it again when touched, so a walk
    /// over a large store keeps resident only what it touched since the last call, not the whole
    /// file. `txn`, open, proves the map cannot move meanwhile (a resize waits for every
    /// transaction); pages a write transaction changes are not in the map until it commits.
    public func releaseMappedPages(_ txn: borrowing Transaction) {
        guard let file = realpath(path + "/data.mdb", nil) else { return }
        let name = String(cString: file)
        free(file)
        for range in Self.mappings(of: name) {
            _ = madvise(UnsafeMutableRawPointer(bitPattern: range.lowerBound), Int(range.upperBound - range.lowerBound), MADV_DONTNEED)
        }
    }

    /// The address ranges at which this process maps the file `name` (from `/proc/self/maps`).
    static func mappings(of name: String) -> [Range<UInt>] {
        let fd = open("/proc/self/maps", O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            bytes += chunk[..<n]
        }
        var out: [Range<UInt>] = []
        // "start-end perms offset dev inode   path"
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, String(decoding: fields[5], as: UTF8.self).trimmingSpaces == name else { continue }
            let bounds = fields[0].split(separator: UInt8(ascii: "-"))
            guard bounds.count == 2, let lo = UInt(String(decoding: bounds[0], as: UTF8.self), radix: 16),
                let hi = UInt(String(decoding: bounds[1], as: UTF8.self), radix: 16), lo < hi
            else { continue }
            out.append(lo..<hi)
        }
        return out
    }

    /// How many times this process resized the map.
    public var resizes: Int { gate.resizes }
}

/// A handle on a named database inside an environment.
public struct Database: Sendable, Hashable {
    let dbi: MDB_dbi
}

extension String {
    /// The text without leading spaces.
    fileprivate var trimmingSpaces: String { String(drop { $0 == " " }) }
}
