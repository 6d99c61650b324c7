import CLMDB

/// A transaction borrowed for the duration of `Environment.read` or `Environment.write`.
/// It cannot be copied or kept: LMDB transactions must not outlive their scope.
public struct Transaction: ~Copyable {
    let txn: OpaquePointer
    public let writable: Bool

    public struct PutOptions: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// The key sorts after every key already present (fast path for logs).
        public static let append = PutOptions(rawValue: UInt32(MDB_APPEND))
        /// In a database of duplicates, the value sorts after every value of its key.
        public static let appendDuplicate = PutOptions(rawValue: UInt32(MDB_APPENDDUP))
        /// Fail with `MDB_KEYEXIST` instead of replacing an existing value.
        public static let noOverwrite = PutOptions(rawValue: UInt32(MDB_NOOVERWRITE))
    }

    /// Opens (or with `create`, creates) a named database within this transaction, whose keys
    /// hold one value or, by `duplicates`, a sorted set of values.
    public func openDatabase(named name: String, create: Bool, duplicates: DuplicateValues = .none) throws(LMDBError) -> Database {
        var dbi: MDB_dbi = 0
        let flags: UInt32 = (create ? UInt32(MDB_CREATE) : 0) | duplicates.flags
        try LMDBError.check(mdb_dbi_open(txn, name, flags, &dbi))
        return Database(dbi: dbi)
    }

    /// Deletes the named database and its contents if it exists; whether it did. Its handle,
    /// if the environment holds one, must not be used again.
    @discardableResult
    public func dropDatabase(named name: String, duplicates: DuplicateValues = .none) throws(LMDBError) -> Bool {
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, name, duplicates.flags, &dbi)
        if rc == MDB_NOTFOUND { return false }
        try LMDBError.check(rc)
        try LMDBError.check(mdb_drop(txn, dbi, 1))
        return true
    }

    /// Calls `body` with the bytes stored under `key`, or returns nil when there are none.
    /// The bytes live in the memory map and are valid only inside `body`.
    public func withValue<R>(
        _ db: Database, key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        var data = MDB_val()
        let rc = withVal(key) { k in mdb_get(txn, db.dbi, &k, &data) }
        if rc == MDB_NOTFOUND { return nil }
        try LMDBError.check(rc)
        return try body(data.bytes)
    }

    /// The bytes stored under `key`, copied out of the map.
    public func get(_ db: Database, key: [UInt8]) throws -> [UInt8]? {
        try withValue(db, key: key) { Array($0) }
    }

    public func put(
        _ db: Database, key: [UInt8], value: [UInt8], options: PutOptions = []
    ) throws(LMDBError) {
        precondition(writable, "put in a read-only transaction")
        let rc = withVal(key) { k in withVal(value) { v in mdb_put(txn, db.dbi, &k, &v, options.rawValue) } }
        try LMDBError.check(rc)
    }

    /// `put` for keys and values already in memory (no arrays made for them).
    public func put(
        _ db: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, options: PutOptions = []
    ) throws(LMDBError) {
        precondition(writable, "put in a read-only transaction")
        var kv = MDB_val(key)
        var vv = MDB_val(value)
        try LMDBError.check(mdb_put(txn, db.dbi, &kv, &vv, options.rawValue))
    }

    /// Runs `body` with a cursor of `db` for a run of puts: LMDB finds each key from where the
    /// cursor's last put left it (on the same page, without a search from the root), so keys
    /// put in ascending order cost less than as many `put`s.
    public func withPutCursor<R>(_ db: Database, _ body: (inout PutCursor) throws -> R) throws -> R {
        precondition(writable, "put in a read-only transaction")
        var cursor = PutCursor(try Cursor(txn, db))
        return try body(&cursor)
    }

    /// Runs `body` with a cursor of `db` for a run of lookups: LMDB finds each key from where the
    /// cursor's last lookup left it (on the same page, without a search from the root), so keys
    /// looked up in ascending order cost less than as many `get`s.
    public func withLookupCursor<R>(_ db: Database, _ body: (inout LookupCursor) throws -> R) throws -> R {
        var cursor = LookupCursor(try Cursor(txn, db))
        return try body(&cursor)
    }

    /// Removes `key`; returns false when it was not there.
    @discardableResult
    public func delete(_ db: Database, key: [UInt8]) throws(LMDBError) -> Bool {
        precondition(writable, "delete in a read-only transaction")
        let rc = withVal(key) { k in mdb_del(txn, db.dbi, &k, nil) }
        if rc == MDB_NOTFOUND { return false }
        try LMDBError.check(rc)
        return true
    }

    /// Removes one value of `key` in a duplicates database; returns false when it was not there.
    @discardableResult
    public func delete(_ db: Database, key: [UInt8], value: [UInt8]) throws(LMDBError) -> Bool {
        precondition(writable, "delete in a read-only transaction")
        let rc = withVal(key) { k in withVal(value) { v in mdb_del(txn, db.dbi, &k, &v) } }
        if rc == MDB_NOTFOUND { return false }
        try LMDBError.check(rc)
        return true
    }

    /// Removes every entry of `db` (the database itself stays).
    public func clear(_ db: Database) throws(LMDBError) {
        precondition(writable, "clear in a read-only transaction")
        try LMDBError.check(mdb_drop(txn, db.dbi, 0))
    }

    /// Pages (branch, leaf and overflow) holding `db`'s data, and its page size.
    public func pages(_ db: Database) throws(LMDBError) -> (pages: Int, pageSize: Int) {
        var stat = MDB_stat()
        try LMDBError.check(mdb_stat(txn, db.dbi, &stat))
        return (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages, Int(stat.ms_psize))
    }

    /// The number of entries in `db`.
    public func count(_ db: Database) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try LMDBError.check(mdb_stat(txn, db.dbi, &stat))
        return stat.ms_entries
    }

    /// Visits entries in key order, starting at the first key ≥ `start` (or the first key),
    /// until `body` returns false. Keys and values are valid only inside `body`.
    public func scan(
        _ db: Database, from start: [UInt8]? = nil,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor = try Cursor(txn, db)
        var entry =
            try start.map { s throws(LMDBError) in try withVal(s) { k throws(LMDBError) in try cursor.get(MDB_SET_RANGE, key: &k) } }
            ?? cursor.get(MDB_FIRST)
        while let (k, v) = entry {
            if try !body(k, v) { return }
            entry = try cursor.get(MDB_NEXT)
        }
    }

    /// Visits entries in key order, starting at the last key ≤ `start` (its floor; the first key
    /// when every key is greater), until `body` returns false: a table of runs keyed by each
    /// run's first key is read from the run that holds `start`.
    public func scan(
        _ db: Database, fromFloor start: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor = try Cursor(txn, db)
        var entry: (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?
        if let above = try withVal(start, { k throws(LMDBError) in try cursor.get(MDB_SET_RANGE, key: &k) }) {
            if above.key.elementsEqual(start) {
                entry = above
            } else {
                entry = try cursor.get(MDB_PREV) ?? cursor.get(MDB_FIRST)
            }
        } else {
            entry = try cursor.get(MDB_LAST)
        }
        while let (k, v) = entry {
            if try !body(k, v) { return }
            entry = try cursor.get(MDB_NEXT)
        }
    }

    /// The snapshot the transaction reads: the id of the last transaction committed when it
    /// began (two read transactions with the same id read the same data).
    public var snapshotID: Int { Int(mdb_txn_id(txn)) }

    /// Visits each key of `db` once, in key order (a duplicates database's further values
    /// under a key are passed over), until `body` returns false.
    public func scanKeys(_ db: Database, _ body: (_ key: UnsafeRawBufferPointer) throws -> Bool) throws {
        var cursor = try Cursor(txn, db)
        var entry = try cursor.get(MDB_FIRST)
        while let (k, _) = entry {
            if try !body(k) { return }
            entry = try cursor.get(MDB_NEXT_NODUP)
        }
    }

    /// Visits the values stored under `key` in a duplicates database, in order, starting at the
    /// first value ≥ `from` (or the first value), until `body` returns false.
    public func scanDuplicates(
        _ db: Database, key: [UInt8], from start: [UInt8]? = nil, _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor = try Cursor(txn, db)
        var entry = try withVal(key) { k throws(LMDBError) in
            guard let start else { return try cursor.get(MDB_SET_KEY, key: &k) }
            return try withVal(start) { v throws(LMDBError) in try cursor.get(MDB_GET_BOTH_RANGE, key: &k, value: &v) }
        }
        while let (_, v) = entry {
            if try !body(v) { return }
            entry = try cursor.get(MDB_NEXT_DUP)
        }
    }

    /// Runs `body` on the last value stored under `key` in a duplicates database (the bytes are
    /// valid only inside `body`); nil when `key` holds none.
    public func withLastDuplicate<R>(_ db: Database, key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        var cursor = try Cursor(txn, db)
        guard try withVal(key, { k throws(LMDBError) in try cursor.get(MDB_SET_KEY, key: &k) }) != nil,
            let last = try cursor.get(MDB_LAST_DUP)
        else { return nil }
        return try body(last.value)
    }

    /// How many values `key` holds in a duplicates database (0 when it is absent), without
    /// visiting them.
    public func duplicateCount(_ db: Database, key: [UInt8]) throws(LMDBError) -> Int {
        var cursor = try Cursor(txn, db)
        let found = try withVal(key) { k throws(LMDBError) in try cursor.get(MDB_SET_KEY, key: &k) != nil }
        return found ? try cursor.count() : 0
    }

    /// Whether `key` holds `value` in a duplicates database.
    public func contains(_ db: Database, key: [UInt8], value: [UInt8]) throws -> Bool {
        var cursor = try Cursor(txn, db)
        return try withVal(key) { k throws(LMDBError) in
            try withVal(value) { v throws(LMDBError) in try cursor.get(MDB_GET_BOTH, key: &k, value: &v) != nil }
        }
    }

    /// Whether `key` sorts after every key of `db` (in LMDB's byte order): then keys from it on,
    /// put in ascending order, may be put with `.append`.
    public func sortsAfterLast(_ db: Database, _ key: [UInt8]) throws -> Bool {
        var cursor = try Cursor(txn, db)
        guard let last = try cursor.get(MDB_LAST) else { return true }
        return last.key.lexicographicallyPrecedes(key)
    }

    /// The options for putting keys into `db` in ascending order from `firstKey`: `base`, with
    /// `.append` when `firstKey` sorts after every key already there (LMDB then fills the last
    /// page instead of searching for each key).
    public func orderedPutOptions(_ db: Database, from firstKey: [UInt8], _ base: PutOptions = []) throws -> PutOptions {
        try sortsAfterLast(db, firstKey) ? base.union(.append) : base
    }

    /// The last entry of `db` in key order, copied out of the map.
    public func last(_ db: Database) throws -> (key: [UInt8], value: [UInt8])? {
        var cursor = try Cursor(txn, db)
        return try cursor.get(MDB_LAST).map { (Array($0.key), Array($0.value)) }
    }
}

/// What a database's keys hold: one value each, or a sorted set of values (LMDB's
/// `MDB_DUPSORT`), of one size (`MDB_DUPFIXED`, stored compactly) or of any size up to LMDB's
/// largest key.
public enum DuplicateValues: Sendable {
    case none, fixedSize, anySize

    var flags: UInt32 {
        switch self {
        case .none: 0
        case .fixedSize: UInt32(MDB_DUPSORT | MDB_DUPFIXED)
        case .anySize: UInt32(MDB_DUPSORT)
        }
    }
}

/// A cursor of a write transaction that only puts (see `Transaction.withPutCursor`).
public struct PutCursor: ~Copyable {
    fileprivate var cursor: Cursor

    fileprivate init(_ cursor: consuming Cursor) { self.cursor = cursor }

    /// Puts `value` under `key`, as `Transaction.put` does.
    public mutating func put(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, options: Transaction.PutOptions = []) throws(LMDBError) {
        var kv = MDB_val(key)
        var vv = MDB_val(value)
        try LMDBError.check(mdb_cursor_put(cursor.cursor, &kv, &vv, options.rawValue))
    }
}

/// A cursor that looks keys up (see `Transaction.withLookupCursor`).
public struct LookupCursor: ~Copyable {
    fileprivate var cursor: Cursor
    /// Whether the cursor is on an entry (`value(at:steps:)` steps only from one).
    private var positioned = false

    fileprivate init(_ cursor: consuming Cursor) { self.cursor = cursor }

    /// Calls `body` with each value stored under `key` (one, or each duplicate in order in a
    /// duplicates database) until it returns false. The bytes live in the memory map and are
    /// valid only inside `body`.
    public mutating func values(at key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        var k = MDB_val(key)
        // A range seek leaves the cursor on the page where the key would be, found or not, so
        // the next lookup starts from there.
        let found = try cursor.get(MDB_SET_RANGE, key: &k)
        positioned = found != nil
        guard var entry = found, entry.key.elementsEqual(key) else { return }
        // In a database without duplicates LMDB's next duplicate is the next key: each value
        // is taken only while its key is the one asked for.
        while try body(entry.value) {
            guard let next = try cursor.get(MDB_NEXT_DUP), next.key.elementsEqual(key) else { return }
            entry = next
        }
    }

    /// The value stored under `key`, in a database without duplicates, or nil. With `steps`
    /// above zero the caller expects the key `steps` entries after the cursor's (as in a table
    /// whose keys run without gaps, a log's positions): the cursor steps there, reading the
    /// entries in between from the pages it is on, where a lookup would search from a branch
    /// page; for a few entries, a step costs a fraction of a search. Should the key found
    /// there differ (or the cursor be on no entry), it is looked up as `values(at:)` does. The
    /// bytes live in the memory map and are valid until the transaction ends or writes.
    public mutating func value(at key: UnsafeRawBufferPointer, steps: Int) throws -> UnsafeRawBufferPointer? {
        if steps > 0, positioned {
            var entry: (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?
            for _ in 0..<steps {
                entry = try cursor.get(MDB_NEXT)
                if entry == nil { break }
            }
            if let entry, entry.key.elementsEqual(key) { return entry.value }
        }
        var k = MDB_val(key)
        let entry = try cursor.get(MDB_SET_RANGE, key: &k)
        positioned = entry != nil
        guard let entry, entry.key.elementsEqual(key) else { return nil }
        return entry.value
    }
}

/// An LMDB cursor over one database, closed when it goes out of scope. It cannot be copied or
/// outlive the transaction that made it (it is only made inside `Transaction`'s methods).
struct Cursor: ~Copyable {
    fileprivate let cursor: OpaquePointer

    init(_ txn: OpaquePointer, _ db: Database) throws(LMDBError) {
        var c: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(txn, db.dbi, &c))
        cursor = c!
    }

    deinit { mdb_cursor_close(cursor) }

    /// The number of duplicates at the cursor's key.
    func count() throws(LMDBError) -> Int {
        var n = 0
        try LMDBError.check(mdb_cursor_count(cursor, &n))
        return n
    }

    /// Moves by `op`; the entry there, or nil at the end (`MDB_NOTFOUND`). The bytes live in the
    /// memory map and stay valid until the transaction ends or writes.
    mutating func get(_ op: MDB_cursor_op) throws(LMDBError) -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
        var k = MDB_val()
        var v = MDB_val()
        return try get(op, key: &k, value: &v)
    }

    mutating func get(_ op: MDB_cursor_op, key: inout MDB_val) throws(LMDBError) -> (
        key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer
    )? {
        var v = MDB_val()
        return try get(op, key: &key, value: &v)
    }

    mutating func get(_ op: MDB_cursor_op, key: inout MDB_val, value: inout MDB_val) throws(LMDBError) -> (
        key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer
    )? {
        let rc = mdb_cursor_get(cursor, &key, &value, op)
        if rc == MDB_NOTFOUND { return nil }
        try LMDBError.check(rc)
        return (key.bytes, value.bytes)
    }
}

/// The one place bytes become an `MDB_val` (LMDB never writes through a key or value it is
/// given, so the mutable pointer is only what its C signature asks for).
@inline(__always)
func withVal<R, E: Error>(_ bytes: [UInt8], _ body: (inout MDB_val) throws(E) -> R) throws(E) -> R {
    let result: Result<R, E> = bytes.withUnsafeBytes { raw in
        var val = MDB_val(raw)
        do throws(E) { return .success(try body(&val)) } catch { return .failure(error) }
    }
    return try result.get()
}

extension MDB_val {
    @inline(__always)
    init(_ raw: UnsafeRawBufferPointer) {
        self.init(mv_size: raw.count, mv_data: UnsafeMutableRawPointer(mutating: raw.baseAddress))
    }

    /// The bytes this value points at.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: mv_data, count: mv_size) }
}
