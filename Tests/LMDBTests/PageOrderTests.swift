import Foundation
import Testing

@testable import LMDB

/// The whole check compares each key of a page with the one before it, in place: two keys
/// swapped on a leaf page, or on a branch page, are named, and a sound file passes.
struct PageOrderTests {
    /// A closed file whose table `data` spans leaf pages under a branch page.
    func file() throws -> EnvironmentTests.Directory {
        try EnvironmentTests.file(keys: (0..<3000).map { UInt64($0 * 7) }, valueSize: 100)
    }

    /// Swaps the keys of entries `a` and `b` of `page` (keys of one size) in the file.
    func swapKeys(_ path: String, page: Int, _ a: Int, _ b: Int) throws {
        let file = try DataFile(directory: path)
        let url = URL(fileURLWithPath: path + "/data.mdb")
        var all = [UInt8](try Data(contentsOf: url))
        let base = page * file.pageSize
        func keyRange(_ i: Int) -> Range<Int> {
            let node = base + Int(DataFile.u16(all, base + 16 + 2 * i))
            let size = Int(DataFile.u16(all, node + 6))
            return node + 8..<node + 8 + size
        }
        let (ra, rb) = (keyRange(a), keyRange(b))
        try #require(ra.count == rb.count && ra.count > 0)
        let ka = Array(all[ra])
        all.replaceSubrange(ra, with: all[rb])
        all.replaceSubrange(rb, with: ka)
        try Data(all).write(to: url)
    }

    @Test(arguments: ["leaf", "branch"])
    func keysSwappedOnAPageAreNamed(_ kind: String) throws {
        let dir = try file()
        #expect(try DataFile(directory: dir.path).check().isEmpty)
        let pages = try DataFile(directory: dir.path).pagesInUse()
        let page = try #require(pages.filter { $0.value == "data \(kind)" }.keys.min(), "\(pages.values.sorted())")
        // A branch page's first key is empty (LMDB never compares with it).
        try swapKeys(dir.path, page: page, kind == "leaf" ? 0 : 1, kind == "leaf" ? 1 : 2)
        let damage = try DataFile(directory: dir.path).check()
        #expect(damage.contains { $0.page == page && $0.problem == "its keys are out of order" }, "\(damage)")
    }
}
