import Foundation
import Synchronization
import Testing

@testable import LMDB

struct EnvironmentTests {
    final class Directory {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lmdb-test-\(UUID().uuidString)").path
        init() { try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    func key(_ i: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(i).bigEndian) { Array($0) } }

    /// A closed file whose table `data` holds `keys` (big-endian) with values of `valueSize`
    /// bytes, written `rounds` times over (each round's commit frees the pages of the one
    /// before, and the value's bytes are the round's number).
    static func file(keys: [UInt64], valueSize: Int, rounds: Int = 1) throws -> Directory {
        let dir = Directory()
        let env = try Environment(path: dir.path)
        let db = try env.database(named: "data", create: true)
        for round in 0..<rounds {
            try env.write { txn in
                for k in keys {
                    try txn.put(db, key: withUnsafeBytes(of: k.bigEndian) { Array($0) }, value: [UInt8](repeating: UInt8(round), count: valueSize))
                }
            }
        }
        return dir
    }

    /// An environment with a map of 64 KiB (full after a few pages) and its table `data`.
    func smallMap(_ dir: Directory) throws -> (Environment, Database) {
        var options = Environment.Options()
        options.initialMapSize = 64 << 10
        let env = try Environment(path: dir.path, options: options)
        return (env, try env.database(named: "data", create: true))
    }

    /// Puts 2,000 values of 1,000 bytes in one write: how many times its body ran.
    func putTwoThousand(_ env: Environment, _ db: Database) throws -> Int {
        let value = [UInt8](repeating: 7, count: 1000)
        var runs = 0
        try env.write { txn in
            runs += 1
            for i in 0..<2000 { try txn.put(db, key: key(i), value: value) }
        }
        return runs
    }

    @Test func aFullMapGrowsAndTheWriteIsRetried() throws {
        let dir = Directory()
        let (env, db) = try smallMap(dir)
        #expect(try putTwoThousand(env, db) > 1)  // the body ran again after the map grew
        #expect(env.mapSize > 64 << 10)
        #expect(try env.read { try $0.count(db) } == 2000)
    }

    /// Room reserved before a large write lets it run once; a reservation that fits already, or
    /// one made while this thread holds a transaction (which says so), changes nothing.
    @Test func roomReservedBeforeALargeWriteLetsItRunOnce() throws {
        let dir = Directory()
        let (env, db) = try smallMap(dir)
        try env.reserve(16 << 10)
        #expect(env.mapSize == 64 << 10)
        try env.reserve(8 << 20)
        #expect(env.mapSize >= env.usedBytes + (8 << 20) && env.mapSize < 2 * (env.usedBytes + (8 << 20)))
        #expect(try putTwoThousand(env, db) == 1)
        let size = env.mapSize
        #expect(try env.read { _ in try env.reserve(size * 4) } == false)
        #expect(env.mapSize == size)
        try env.reserve(.max)
        #expect(env.mapSize == size)
    }

    /// A writer opening an existing file maps twice its size, so a write as large as what the
    /// file holds (a rebuild writes a whole generation) is not run twice; a reader maps what
    /// it is given.
    @Test func aWriterOpensWithRoomForTheFileToDouble() throws {
        let dir = Directory()
        var options = Environment.Options()
        options.initialMapSize = 64 << 10
        let value = [UInt8](repeating: 7, count: 1000)
        do {
            let env = try Environment(path: dir.path, options: options)
            let db = try env.database(named: "data", create: true)
            try env.write { txn in for i in 0..<2000 { try txn.put(db, key: key(i), value: value) } }
        }
        let fileSize = try #require(try FileManager.default.attributesOfItem(atPath: dir.path + "/data.mdb")[.size] as? Int)
        #expect(fileSize > 2 << 20)
        let env = try Environment(path: dir.path, options: options)
        #expect(env.mapSize >= 2 * fileSize)
        #expect(env.mapSize % (1 << 20) == 0)
        let db = try env.existingDatabase(named: "data")
        // As much again as the file holds, in one write: the body runs once.
        var runs = 0
        try env.write { txn in
            runs += 1
            for i in 2000..<4000 { try txn.put(db, key: key(i), value: value) }
        }
        #expect(runs == 1)
        var readOnly = options
        readOnly.readOnly = true
        #expect(Environment.openingMapSize(directory: dir.path, readOnly) == options.initialMapSize)
        var capped = options
        capped.maximumMapSize = 3 << 20
        #expect(Environment.openingMapSize(directory: dir.path, capped) == 3 << 20)
        #expect(Environment.openingMapSize(directory: dir.path + "/none", options) == options.initialMapSize)
    }

    /// LMDB allows `mdb_env_set_mapsize` only while no transaction of the process is open.
    /// Readers on other threads check that the map never changes size under their snapshot,
    /// and that each snapshot holds whole batches, while the writer grows the map many times.
    @Test func theMapGrowsOnlyWhileNoTransactionOfTheProcessIsOpen() throws {
        let dir = Directory()
        var options = Environment.Options()
        options.initialMapSize = 64 << 10
        let env = try Environment(path: dir.path, options: options)
        let db = try env.database(named: "data", create: true)
        let stop = Atomic<Bool>(false)
        let reads = Atomic<Int>(0)
        let problems = Mutex<[String]>([])
        let batch = 40
        let readers = (0..<3).map { _ in
            Thread {
                while !stop.load(ordering: .relaxed) {
                    do {
                        try env.read { txn in
                            let before = env.mapSize
                            let count = try txn.count(db)
                            var seen = 0
                            try txn.scan(db) { _, value in
                                seen += 1
                                if value.count != 1000 { problems.withLock { $0.append("a value of \(value.count) bytes") } }
                                return true
                            }
                            if env.mapSize != before { problems.withLock { $0.append("the map was resized during a read") } }
                            if seen != count || count % batch != 0 { problems.withLock { $0.append("a snapshot of \(seen) entries") } }
                        }
                        reads.add(1, ordering: .relaxed)
                    } catch {
                        problems.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        for r in readers { r.start() }
        let value = [UInt8](repeating: 3, count: 1000)
        for b in 0..<250 {
            try env.write { txn in
                for i in 0..<batch { try txn.put(db, key: key(b * batch + i), value: value) }
            }
        }
        stop.store(true, ordering: .relaxed)
        while readers.contains(where: { !$0.isFinished }) { usleep(1000) }
        #expect(env.resizes >= 5, "the map grew \(env.resizes) times")
        #expect(reads.load(ordering: .relaxed) > 0)
        #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0.prefix(5) })")
        #expect(try env.read { try $0.count(db) } == 250 * batch)
    }

    /// A helper thread's read does not wait for a resize that waits for the transaction of the
    /// thread the helper works for: it gets none, at once, and gets one again after the resize.
    @Test func aHelpersReadGetsNoTransactionWhileAResizeWaitsInsteadOfWaiting() throws {
        let dir = Directory()
        let env = try Environment(path: dir.path)
        let db = try env.database(named: "data", create: true)
        try env.write { txn in try txn.put(db, key: key(1), value: [1]) }
        #expect(try env.withReadTransactionIfAvailable { try $0.count(db) } == 1)
        let resized = Atomic<Bool>(false)
        try env.read { _ in
            // Another thread asks for a resize: it closes the gate and waits for this read.
            let resizer = Thread {
                _ = try? env.gate.exclusively { () throws(LMDBError) in }
                resized.store(true, ordering: .relaxed)
            }
            resizer.start()
            var waited = 0
            while try env.withReadTransactionIfAvailable({ _ in true }) == true, waited < 5_000 {
                usleep(1000)
                waited += 1
            }
            #expect(waited < 5_000, "the resize never closed the gate")
            #expect(try env.withReadTransactionIfAvailable { _ in true } == nil)
            let done = resized.load(ordering: .relaxed)
            #expect(!done)
        }
        while !resized.load(ordering: .relaxed) { usleep(1000) }
        #expect(try env.withReadTransactionIfAvailable { try $0.count(db) } == 1)
    }

    @Test func aThreadHoldingATransactionIsRefusedAGrowthInsteadOfWaitingForItself() throws {
        let dir = Directory()
        var options = Environment.Options()
        options.initialMapSize = 64 << 10
        let env = try Environment(path: dir.path, options: options)
        let db = try env.database(named: "data", create: true)
        let value = [UInt8](repeating: 1, count: 1000)
        try env.read { _ in
            #expect(throws: LMDBError.self) {
                try env.write { txn in for i in 0..<2000 { try txn.put(db, key: key(i), value: value) } }
            }
        }
        // Without the read open, the same write grows the map and succeeds.
        try env.write { txn in for i in 0..<2000 { try txn.put(db, key: key(i), value: value) } }
        #expect(try env.read { try $0.count(db) } == 2000)
    }

    @Test func anErrorInTheBodyRollsEverythingBack() throws {
        struct Refused: Error {}
        let dir = Directory()
        let env = try Environment(path: dir.path)
        let db = try env.database(named: "data", create: true)
        try env.write { try $0.put(db, key: key(1), value: [1]) }
        #expect(throws: Refused.self) {
            try env.write { txn in
                try txn.put(db, key: key(2), value: [2])
                try txn.delete(db, key: key(1))
                throw Refused()
            }
        }
        #expect(try env.read { try $0.get(db, key: key(1)) } == [1])
        #expect(try env.read { try $0.get(db, key: key(2)) } == nil)
    }

    @Test func appendAndNoOverwriteReportLMDBErrors() throws {
        let dir = Directory()
        let env = try Environment(path: dir.path)
        let db = try env.database(named: "log", create: true)
        try env.write { txn in
            try txn.put(db, key: key(5), value: [5], options: .append)
            #expect(throws: LMDBError.self) { try txn.put(db, key: key(3), value: [3], options: .append) }
            do { try txn.put(db, key: key(5), value: [9], options: .noOverwrite) } catch let e as LMDBError { #expect(e.isKeyExists) }
        }
        #expect(try env.read { try $0.get(db, key: key(5)) } == [5])
    }

    @Test func scanStartsAtTheFirstKeyAtOrAfterTheStartAndStopsOnRequest() throws {
        let dir = Directory()
        let env = try Environment(path: dir.path)
        let db = try env.database(named: "data", create: true)
        try env.write { txn in for i in stride(from: 0, to: 100, by: 10) { try txn.put(db, key: key(i), value: []) } }
        var seen: [UInt64] = []
        try env.read { txn in
            try txn.scan(db, from: key(25)) { k, _ in
                seen.append(k.loadUnaligned(as: UInt64.self).bigEndian)
                return seen.count < 3
            }
        }
        #expect(seen == [30, 40, 50])
        #expect(try env.read { try $0.last(db)?.key } == key(90))
    }

    /// One lookup cursor finds every key asked for, in any order, with each of its values, and
    /// nothing for a key between two stored ones or past the last, in a plain database and in
    /// one of duplicates.
    @Test(arguments: [DuplicateValues.none, .anySize])
    func aLookupCursorFindsEachKeyAskedForWithItsValues(_ duplicates: DuplicateValues) throws {
        let dir = Directory()
        let env = try Environment(path: dir.path)
        let db = try env.write { txn in try txn.openDatabase(named: "data", create: true, duplicates: duplicates) }
        let copies = duplicates == .none ? 1 : 3
        try env.write { txn in
            for i in stride(from: 10, through: 5000, by: 10) {
                for c in 0..<copies { try txn.put(db, key: key(i), value: [UInt8(c)] + key(i)) }
            }
        }
        var asked = Array(0...5020)
        var rng = SystemRandomNumberGenerator()
        for order in 0..<3 {
            if order == 1 { asked.reverse() }
            if order == 2 { asked.shuffle(using: &rng) }
            var found: [Int: [[UInt8]]] = [:]
            try env.read { txn in
                try txn.withLookupCursor(db) { cursor in
                    for i in asked {
                        try key(i).withUnsafeBytes { k in
                            try cursor.values(at: k) { v in
                                found[i, default: []].append(Array(v))
                                return true
                            }
                        }
                    }
                }
            }
            let want = Dictionary(
                uniqueKeysWithValues: stride(from: 10, through: 5000, by: 10).map { i in (i, (0..<copies).map { [UInt8($0)] + key(i) }) })
            #expect(found.count == want.count, "order \(order)")
            #expect(found == want, "order \(order): \(found.filter { want[$0.key] != $0.value }.prefix(2))")
        }
        // Stopping after the first value.
        var first: [[UInt8]] = []
        try env.read { txn in
            try txn.withLookupCursor(db) { cursor in
                try key(20).withUnsafeBytes { k in
                    try cursor.values(at: k) { v in
                        first.append(Array(v))
                        return false
                    }
                }
            }
        }
        #expect(first == [[0] + key(20)])
    }

    /// A read that steps finds the value of the key it was told lies that many entries ahead,
    /// and, when the key there is another (a gap in the keys, a wrong count, a cursor on no
    /// entry, the end passed), the one a lookup finds: nil for a key not stored.
    @Test func aSteppingReadFindsTheKeyWhereverTheStepsLand() throws {
        let dir = Directory()
        let env = try Environment(path: dir.path)
        let db = try env.database(named: "data", create: true)
        // Keys 1…3000 but for a gap at 1500…1509; values long enough to span many pages.
        let stored = Array(1...3000).filter { !(1500..<1510).contains($0) }
        try env.write { txn in
            for i in stored { try txn.put(db, key: key(i), value: key(i) + [UInt8](repeating: UInt8(i & 0xFF), count: 100)) }
        }
        func want(_ i: Int) -> [UInt8]? { stored.contains(i) ? key(i) + [UInt8](repeating: UInt8(i & 0xFF), count: 100) : nil }
        var rng = SystemRandomNumberGenerator()
        try env.read { txn in
            try txn.withLookupCursor(db) { cursor in
                var last = 0
                var i = 1
                var reads = 0
                // Ascending keys, each stepped to by its distance from the last (a gap makes it wrong).
                while i <= 3010 {
                    let got = try key(i).withUnsafeBytes { try cursor.value(at: $0, steps: i - last) }.map(Array.init)
                    #expect(got == want(i), "key \(i), \(i - last) steps")
                    last = i
                    i += Int.random(in: 1...40, using: &rng)
                    reads += 1
                }
                #expect(reads > 100)
                // Steps that land short, too far, or backwards; and none.
                for (k, steps) in [(100, 3), (90, 5), (2999, 1), (200, 0), (1505, 1), (1510, 2), (5, 7)] {
                    let got = try key(k).withUnsafeBytes { try cursor.value(at: $0, steps: steps) }.map(Array.init)
                    #expect(got == want(k), "key \(k), \(steps) steps")
                }
            }
        }
        // A fresh cursor (on no entry) told to step still finds the key.
        try env.read { txn in
            try txn.withLookupCursor(db) { cursor in
                let got = try key(42).withUnsafeBytes { try cursor.value(at: $0, steps: 5) }.map(Array.init)
                #expect(got == want(42))
            }
        }
    }

    @Test func aScanFromTheFloorStartsAtTheLastKeyAtOrBeforeTheStart() throws {
        let dir = Directory()
        let env = try Environment(path: dir.path)
        let db = try env.database(named: "data", create: true)
        func firstTwo(_ start: Int) throws -> [UInt64] {
            try env.read { txn in
                var seen: [UInt64] = []
                try txn.scan(db, fromFloor: key(start)) { k, _ in
                    seen.append(k.loadUnaligned(as: UInt64.self).bigEndian)
                    return seen.count < 2
                }
                return seen
            }
        }
        #expect(try firstTwo(5).isEmpty)
        try env.write { txn in for i in [10, 20, 30] { try txn.put(db, key: key(i), value: []) } }
        #expect(try firstTwo(5) == [10, 20])  // nothing before: the first key
        #expect(try firstTwo(10) == [10, 20])  // the key itself
        #expect(try firstTwo(25) == [20, 30])  // the one before
        #expect(try firstTwo(99) == [30])  // past the last: the last
    }

    @Test func filesAreCreatedForTheOwnerOnly() throws {
        let dir = Directory()
        _ = try Environment(path: dir.path)
        let attributes = try FileManager.default.attributesOfItem(atPath: dir.path + "/data.mdb")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func missingDatabasesAreReportedWithLMDBsMessage() throws {
        let dir = Directory()
        let env = try Environment(path: dir.path)
        do {
            _ = try env.existingDatabase(named: "absent")
            Issue.record("opened a database that does not exist")
        } catch {
            #expect(error.isNotFound)
            #expect(error.message.contains("MDB_NOTFOUND"))
        }
    }
}

struct OneOpenPerProcessTests {
    @Test func aSecondOpenOfOneEnvironmentIsRefusedUntilTheFirstCloses() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lmdb-once-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var first: Environment? = try Environment(path: dir)
        #expect(first != nil)
        // Another spelling of the same directory is the same file.
        #expect(throws: LMDBError.alreadyOpen) { _ = try Environment(path: dir + "/.") }
        #expect(throws: LMDBError.alreadyOpen) { _ = try Environment(path: dir) }
        first = nil
        _ = try Environment(path: dir)
    }
}
