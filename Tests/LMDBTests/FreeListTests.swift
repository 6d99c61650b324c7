import Foundation
import Testing

@testable import LMDB

/// The free list names the pages LMDB may write next: one flipped bit there would have a write
/// land anywhere (a sparse file of any size), or over a page a tree still uses. Opening the file
/// refuses a free list naming a page outside the file's pages; the whole check also names a
/// free page that a tree uses.
struct FreeListTests {
    /// A file whose free list holds entries (pages freed by earlier commits), closed.
    func fileWithFreePages() throws -> EnvironmentTests.Directory {
        try EnvironmentTests.file(keys: Array(0..<200), valueSize: 300, rounds: 6)
    }

    /// The offset in the file of the first page number of the free list's first entry, and the
    /// page of a tree in use (the table of tables' root is not free).
    func firstFreeEntry(_ path: String) throws -> (offset: Int, count: UInt64, inUse: Int) {
        let file = try DataFile(directory: path)
        let pages = file.pagesInUse()
        let leaf = try #require(pages.first { $0.value == "the free list leaf" }?.key, "the free list has no leaf: \(pages)")
        let inUse = try #require(pages.first { $0.value.hasPrefix("data") }?.key)
        let all = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
        let bytes = [UInt8](all[leaf * file.pageSize..<(leaf + 1) * file.pageSize])
        // The first node (its offset in the pointer after the 16-byte header): sizes, flags,
        // key size, then the key (a transaction id) and the value (a count, then page numbers).
        let node = Int(DataFile.u16(bytes, 16))
        let keySize = Int(DataFile.u16(bytes, node + 6))
        let value = node + 8 + keySize
        return (leaf * file.pageSize + value + 8, DataFile.u64(bytes, value), inUse)
    }

    func overwrite(_ path: String, at offset: Int, with page: UInt64) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path + "/data.mdb"))
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: withUnsafeBytes(of: page.littleEndian) { Data($0) })
        try handle.close()
    }

    @Test func aSoundFreeListPasses() throws {
        let dir = try fileWithFreePages()
        #expect(try firstFreeEntry(dir.path).count > 0)
        try DataFile.checkBeforeOpening(directory: dir.path)
        #expect(try DataFile(directory: dir.path).check().isEmpty)
    }

    @Test(arguments: [UInt64(1), 1 << 24, UInt64.max])
    func aFreePageOutsideTheFileIsRefusedAtOpen(_ page: UInt64) throws {
        let dir = try fileWithFreePages()
        let entry = try firstFreeEntry(dir.path)
        try overwrite(dir.path, at: entry.offset, with: page)
        let size = try FileManager.default.attributesOfItem(atPath: dir.path + "/data.mdb")[.size] as? Int
        do {
            try DataFile.checkBeforeOpening(directory: dir.path)
            Issue.record("opened a file whose free list names page \(page)")
        } catch {
            #expect("\(error)".contains("the free list") && "\(error)".contains("names page \(page), outside the file's pages"), "\(error)")
        }
        #expect(throws: LMDBError.self) { _ = try Environment(path: dir.path) }
        #expect(try DataFile(directory: dir.path).check().contains { "\($0)".contains("names page \(page)") })
        // Nothing was written.
        #expect(try FileManager.default.attributesOfItem(atPath: dir.path + "/data.mdb")[.size] as? Int == size)
    }

    @Test func aFreePageThatATreeUsesIsNamedByTheWholeCheck() throws {
        let dir = try fileWithFreePages()
        let entry = try firstFreeEntry(dir.path)
        try overwrite(dir.path, at: entry.offset, with: UInt64(entry.inUse))
        let damage = try DataFile(directory: dir.path).check()
        #expect(damage.contains { "\($0)".contains("lists page \(entry.inUse), which a tree uses") }, "\(damage)")
    }
}
