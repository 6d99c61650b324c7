import Foundation
import Testing

@testable import LMDB

/// A large file's page check walks its tables in parts at once; it finds a file sound exactly
/// when the walk in order does, and otherwise the walk in order names the damage: a page two
/// tables share (whichever parts they fall to) and a free page a tree uses among them.
struct CheckInPartsTests {
    static let names = ["a", "b", "c", "d", "e", "f"]

    /// A closed file with tables `a` to `f`, each larger than the one before, written in two
    /// rounds (so the free list holds pages).
    func file() throws -> EnvironmentTests.Directory {
        let dir = EnvironmentTests.Directory()
        let env = try Environment(path: dir.path)
        for round in 0..<2 {
            for (i, name) in Self.names.enumerated() {
                let db = try env.database(named: name, create: true)
                try env.write { txn in
                    for k in 0..<(150 * (i + 1)) {
                        try txn.put(
                            db, key: withUnsafeBytes(of: UInt64(k).bigEndian) { Array($0) },
                            value: [UInt8](repeating: UInt8(round), count: 100 + i))
                    }
                }
            }
        }
        return dir
    }

    /// The offset in the file of table `name`'s 48-byte record in the table of tables.
    func record(of name: String, _ path: String) throws -> Int {
        let file = try DataFile(directory: path)
        let leaf = try #require(file.pagesInUse().first { $0.value == "the table of tables leaf" }?.key)
        let all = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
        let page = [UInt8](all[leaf * file.pageSize..<(leaf + 1) * file.pageSize])
        let count = (Int(DataFile.u16(page, 12)) - DataFile.headerSize) / 2
        for i in 0..<count {
            let node = Int(DataFile.u16(page, DataFile.headerSize + 2 * i))
            let keySize = Int(DataFile.u16(page, node + 6))
            if page[node + 8..<node + 8 + keySize].elementsEqual(name.utf8) { return leaf * file.pageSize + node + 8 + keySize }
        }
        Issue.record("no record of \(name)")
        return 0
    }

    @Test(arguments: [2, 3, 4])
    func aSoundFileIsSoundInParts(_ parts: Int) throws {
        let dir = try file()
        let file = try DataFile(directory: dir.path)
        #expect(file.check(limit: 100, parts: 1).isEmpty)
        #expect(file.check(limit: 100, parts: parts).isEmpty)
    }

    /// Table `b`'s record made a copy of another's: every page of that tree is read twice, by
    /// one part or by two.
    @Test(arguments: ["a", "c", "f"])
    func aTreeTwoTablesShareIsNamedInParts(_ other: String) throws {
        let dir = try file()
        let from = try record(of: other, dir.path)
        let to = try record(of: "b", dir.path)
        let all = try Data(contentsOf: URL(fileURLWithPath: dir.path + "/data.mdb"))
        let handle = try #require(FileHandle(forUpdatingAtPath: dir.path + "/data.mdb"))
        try handle.seek(toOffset: UInt64(to))
        try handle.write(contentsOf: all[from..<from + 48])
        try handle.close()
        let file = try DataFile(directory: dir.path)
        let inOrder = file.check(limit: 100, parts: 1)
        #expect(inOrder.contains { $0.problem == "the page is reached twice" }, "\(inOrder)")
        for parts in 2...4 { #expect(file.check(limit: 100, parts: parts) == inOrder) }
    }

    /// The free list's first entry made to name a page table `c` uses.
    @Test func aFreePageATreeUsesIsNamedInParts() throws {
        let dir = try file()
        let file = try DataFile(directory: dir.path)
        let pages = file.pagesInUse()
        let leaf = try #require(pages.first { $0.value == "the free list leaf" }?.key, "no free pages: \(pages)")
        let used = try #require(pages.first { $0.value.hasPrefix("c ") }?.key)
        let all = try Data(contentsOf: URL(fileURLWithPath: dir.path + "/data.mdb"))
        let bytes = [UInt8](all[leaf * file.pageSize..<(leaf + 1) * file.pageSize])
        // The first node: its header, its key (a transaction id), then a count and page numbers.
        let node = Int(DataFile.u16(bytes, 16))
        let value = node + 8 + Int(DataFile.u16(bytes, node + 6))
        let handle = try #require(FileHandle(forUpdatingAtPath: dir.path + "/data.mdb"))
        try handle.seek(toOffset: UInt64(leaf * file.pageSize + value + 8))
        try handle.write(contentsOf: withUnsafeBytes(of: UInt64(used).littleEndian) { Data($0) })
        try handle.close()
        let damaged = try DataFile(directory: dir.path)
        let inOrder = damaged.check(limit: 100, parts: 1)
        #expect(inOrder.contains { "\($0)".contains("lists page \(used), which a tree uses") }, "\(inOrder)")
        for parts in 2...4 { #expect(damaged.check(limit: 100, parts: parts) == inOrder) }
    }
}
