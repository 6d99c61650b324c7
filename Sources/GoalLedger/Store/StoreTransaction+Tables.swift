import LMDB

// The tables' own reads and writes, as the LMDB transaction makes them: the log's indexes, trust
// and the read models' tables are written through these.
extension StoreTransaction {
    /// Whether the transaction can write.
    var writable: Bool { lmdb.writable }

    func openDatabase(named name: String, create: Bool, duplicates: DuplicateValues = .none) throws(LMDBError) -> Database {
        try lmdb.openDatabase(named: name, create: create, duplicates: duplicates)
    }

    @discardableResult
    func dropDatabase(named name: String, duplicates: DuplicateValues = .none) throws(LMDBError) -> Bool {
        try lmdb.dropDatabase(named: name, duplicates: duplicates)
    }

    func withValue<R>(_ db: Database, key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try lmdb.withValue(db, key: key, body)
    }

    func get(_ db: Database, key: [UInt8]) throws -> [UInt8]? { try lmdb.get(db, key: key) }

    func put(_ db: Database, key: [UInt8], value: [UInt8], options: Transaction.PutOptions = []) throws(LMDBError) {
        try lmdb.put(db, key: key, value: value, options: options)
    }

    func put(_ db: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, options: Transaction.PutOptions = []) throws(LMDBError) {
        try lmdb.put(db, key: key, value: value, options: options)
    }

    @discardableResult
    func delete(_ db: Database, key: [UInt8]) throws(LMDBError) -> Bool { try lmdb.delete(db, key: key) }

    @discardableResult
    func delete(_ db: Database, key: [UInt8], value: [UInt8]) throws(LMDBError) -> Bool { try lmdb.delete(db, key: key, value: value) }

    func clear(_ db: Database) throws(LMDBError) { try lmdb.clear(db) }

    /// The snapshot the transaction reads (see `Transaction.snapshotID`).
    var snapshotID: Int { lmdb.snapshotID }

    func scanKeys(_ db: Database, _ body: (_ key: UnsafeRawBufferPointer) throws -> Bool) throws { try lmdb.scanKeys(db, body) }

    func pages(_ db: Database) throws(LMDBError) -> (pages: Int, pageSize: Int) { try lmdb.pages(db) }

    func count(_ db: Database) throws(LMDBError) -> Int { try lmdb.count(db) }

    func scan(_ db: Database, from start: [UInt8]? = nil, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool)
        throws
    {
        try lmdb.scan(db, from: start, body)
    }

    func scanDuplicates(_ db: Database, key: [UInt8], from start: [UInt8]? = nil, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        try lmdb.scanDuplicates(db, key: key, from: start, body)
    }

    func duplicateCount(_ db: Database, key: [UInt8]) throws(LMDBError) -> Int { try lmdb.duplicateCount(db, key: key) }

    func contains(_ db: Database, key: [UInt8], value: [UInt8]) throws -> Bool { try lmdb.contains(db, key: key, value: value) }

    func sortsAfterLast(_ db: Database, _ key: [UInt8]) throws -> Bool { try lmdb.sortsAfterLast(db, key) }

    func orderedPutOptions(_ db: Database, from firstKey: [UInt8], _ base: Transaction.PutOptions = []) throws -> Transaction.PutOptions {
        try lmdb.orderedPutOptions(db, from: firstKey, base)
    }

    func last(_ db: Database) throws -> (key: [UInt8], value: [UInt8])? { try lmdb.last(db) }
}
