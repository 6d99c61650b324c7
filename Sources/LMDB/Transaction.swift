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
        /// Fail with `MDB_KEYEXIST` instead of replacing an existing value.
        public static let noOverwrite = PutOptions(rawValue: UInt32(MDB_NOOVERWRITE))
    }

    /// Opens (or with `create`, creates) a named database within this transaction. With
    /// `duplicates`, a key holds a sorted set of fixed-size values (MDB_DUPSORT|MDB_DUPFIXED),
    /// stored compactly under one key.
    public func openDatabase(named name: String, create: Bool, duplicates: Bool = false) throws(LMDBError) -> Database {
        var dbi: MDB_dbi = 0
        var flags: UInt32 = create ? UInt32(MDB_CREATE) : 0
        if duplicates { flags |= UInt32(MDB_DUPSORT | MDB_DUPFIXED) }
        try LMDBError.check(mdb_dbi_open(txn, name, flags, &dbi))
        return Database(dbi: dbi)
    }

    /// Calls `body` with the bytes stored under `key`, or returns nil when there are none.
    /// The bytes live in the memory map and are valid only inside `body`.
    public func withValue<R>(
        _ db: Database, key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        var data = MDB_val()
        let rc: Int32 = key.withUnsafeBytes { k in
            var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            return mdb_get(txn, db.dbi, &kv, &data)
        }
        if rc == MDB_NOTFOUND { return nil }
        try LMDBError.check(rc)
        return try body(UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
    }

    /// The bytes stored under `key`, copied out of the map.
    public func get(_ db: Database, key: [UInt8]) throws -> [UInt8]? {
        try withValue(db, key: key) { Array($0) }
    }

    public func put(
        _ db: Database, key: [UInt8], value: [UInt8], options: PutOptions = []
    ) throws(LMDBError) {
        precondition(writable, "put in a read-only transaction")
        let rc: Int32 = key.withUnsafeBytes { k in
            value.withUnsafeBytes { v in
                var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                var vv = MDB_val(mv_size: v.count, mv_data: UnsafeMutableRawPointer(mutating: v.baseAddress))
                return mdb_put(txn, db.dbi, &kv, &vv, options.rawValue)
            }
        }
        try LMDBError.check(rc)
    }

    /// `put` for keys and values already in memory (no arrays made for them).
    public func put(
        _ db: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, options: PutOptions = []
    ) throws(LMDBError) {
        precondition(writable, "put in a read-only transaction")
        var kv = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var vv = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        try LMDBError.check(mdb_put(txn, db.dbi, &kv, &vv, options.rawValue))
    }

    /// Removes `key`; returns false when it was not there.
    @discardableResult
    public func delete(_ db: Database, key: [UInt8]) throws(LMDBError) -> Bool {
        precondition(writable, "delete in a read-only transaction")
        let rc: Int32 = key.withUnsafeBytes { k in
            var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            return mdb_del(txn, db.dbi, &kv, nil)
        }
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
        var cursor: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(txn, db.dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var rc: Int32
        if let start {
            rc = start.withUnsafeBytes { s in
                key = MDB_val(mv_size: s.count, mv_data: UnsafeMutableRawPointer(mutating: s.baseAddress))
                return mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            }
        } else {
            rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        }
        while rc == 0 {
            let k = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            let v = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
            if try !body(k, v) { return }
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try LMDBError.check(rc) }
    }

    /// Visits the values stored under `key` in a duplicates database, in order, starting at the
    /// first value ≥ `from` (or the first value), until `body` returns false.
    public func scanDuplicates(
        _ db: Database, key: [UInt8], from start: [UInt8]? = nil, _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(txn, db.dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val()
        var v = MDB_val()
        var rc: Int32 = key.withUnsafeBytes { kb in
            k = MDB_val(mv_size: kb.count, mv_data: UnsafeMutableRawPointer(mutating: kb.baseAddress))
            guard let start else { return mdb_cursor_get(cursor, &k, &v, MDB_SET_KEY) }
            return start.withUnsafeBytes { sb in
                v = MDB_val(mv_size: sb.count, mv_data: UnsafeMutableRawPointer(mutating: sb.baseAddress))
                return mdb_cursor_get(cursor, &k, &v, MDB_GET_BOTH_RANGE)
            }
        }
        while rc == 0 {
            if try !body(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)) { return }
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT_DUP)
        }
        if rc != MDB_NOTFOUND { try LMDBError.check(rc) }
    }

    /// Whether `key` holds `value` in a duplicates database.
    public func contains(_ db: Database, key: [UInt8], value: [UInt8]) throws -> Bool {
        var cursor: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(txn, db.dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        let rc: Int32 = key.withUnsafeBytes { kb in
            value.withUnsafeBytes { vb in
                var k = MDB_val(mv_size: kb.count, mv_data: UnsafeMutableRawPointer(mutating: kb.baseAddress))
                var v = MDB_val(mv_size: vb.count, mv_data: UnsafeMutableRawPointer(mutating: vb.baseAddress))
                return mdb_cursor_get(cursor, &k, &v, MDB_GET_BOTH)
            }
        }
        if rc == MDB_NOTFOUND { return false }
        try LMDBError.check(rc)
        return true
    }

    /// The last entry of `db` in key order, copied out of the map.
    public func last(_ db: Database) throws -> (key: [UInt8], value: [UInt8])? {
        var cursor: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(txn, db.dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        let rc = mdb_cursor_get(cursor, &key, &value, MDB_LAST)
        if rc == MDB_NOTFOUND { return nil }
        try LMDBError.check(rc)
        return (
            Array(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)),
            Array(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
        )
    }
}
