import Dispatch
import Glibc
import Synchronization

/// An environment's data file read with `pread`, never mapped: the checks that keep LMDB from
/// meeting damage it would stop the process on (its assertions abort, a wild page number
/// faults, a page past the end of a truncated file raises SIGBUS), and the salvage of what a
/// damaged file still holds.
///
/// LMDB's on-disk layout (64-bit, little-endian), as this reader knows it: pages of
/// `pageSize` bytes; each page starts with a 16-byte header (page number u64, pad u16, flags
/// u16, lower u16, upper u16; an overflow page's page count u32 in place of lower and upper).
/// Pages 0 and 1 are meta pages: after the header, magic `0xBEEFC0DE` u32, version u32, map
/// address, map size, the free list's and the main database's records (48 bytes each; the page
/// size in the first one's pad), the last page number and the transaction id. LMDB uses the
/// meta with the larger transaction id. A branch or leaf page holds node offsets (u16) after
/// its header; a node has an 8-byte header (data size or child page as lo u16, hi u16, flags
/// u16, key size u16), then its key, then its data.
public final class DataFile: Sendable {
    /// Where damage was found: a page (nil: the file as a whole), the table it belongs to (nil
    /// when not known), and what is wrong.
    public struct Damage: Error, Sendable, Equatable, CustomStringConvertible {
        /// The damaged page's number; nil for the file as a whole (its size, both meta pages).
        public var page: Int?
        /// The table the page belongs to: a named database, `the free list`, `the table of tables`; nil when not known.
        public var table: String?
        /// What is wrong, in a phrase.
        public var problem: String

        /// Damage at `page` (nil: the file as a whole) of `table`: `problem`.
        public init(page: Int?, table: String?, problem: String) {
            self.page = page
            self.table = table
            self.problem = problem
        }

        /// "page 12 (events): …", or "the data file: …".
        public var description: String {
            let place = page.map { "page \($0)" } ?? "the data file"
            return table.map { "\(place) (\($0)): \(problem)" } ?? "\(place): \(problem)"
        }
    }

    /// One named database's record in its parent: where its tree starts.
    struct Tree {
        var flags: UInt16
        var depth: Int
        var root: Int?
        var entries: UInt64
        /// The size of every key of a `LEAF2` page (a database of fixed-size duplicates).
        var fixedKeySize: Int

        /// Reads a 48-byte database record.
        init?(_ b: [UInt8], at o: Int) {
            guard o >= 0, o + 48 <= b.count else { return nil }
            fixedKeySize = Int(DataFile.u32(b, o))
            flags = DataFile.u16(b, o + 4)
            depth = Int(DataFile.u16(b, o + 6))
            entries = DataFile.u64(b, o + 32)
            let r = DataFile.u64(b, o + 40)
            root = r == invalidPage ? nil : (r > UInt64(Int.max) ? -1 : Int(r))
        }
    }

    static let invalidPage = UInt64.max
    static let magic: UInt32 = 0xBEEF_C0DE
    static let version: UInt32 = 1
    static let headerSize = 16
    static let nodeHeaderSize = 8
    // Page flags.
    static let branchFlag: UInt16 = 0x01
    static let leafFlag: UInt16 = 0x02
    static let overflowFlag: UInt16 = 0x04
    static let metaFlag: UInt16 = 0x08
    static let leaf2Flag: UInt16 = 0x20
    static let subpageFlag: UInt16 = 0x40
    // Node flags.
    static let bigData: UInt16 = 0x01
    static let subData: UInt16 = 0x02
    static let dupData: UInt16 = 0x04
    // Database flags.
    static let dupSort: UInt16 = 0x04

    fileprivate let fd: Int32
    /// The data file's path.
    public let path: String
    /// Its size in bytes.
    public let fileSize: Int
    /// Its page size.
    public let pageSize: Int
    /// The last page the meta in use claims.
    public let lastPage: Int
    /// The meta page in use (0 or 1).
    public let meta: Int
    /// The transaction id of the meta page in use: the last commit.
    public let transaction: UInt64
    /// What is wrong with the other meta page, if anything (LMDB refuses to open a file with a
    /// damaged meta page, but a salvage reads through the good one).
    public let otherMetaDamage: Damage?
    let main: Tree
    let free: Tree

    /// Opens the data file `data.mdb` of the environment in `directory` for reading, and checks
    /// its meta pages: at least one must be whole (LMDB's magic and version, the page size, a
    /// last page and roots within range). Throws ``LMDBError/damaged(_:)`` when none is, or
    /// when the file cannot hold what the meta in use says; `ENOENT` when there is no file.
    public init(directory: String) throws(LMDBError) {
        path = directory + "/data.mdb"
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LMDBError(code: errno) }
        var s = stat()
        guard fstat(fd, &s) == 0 else {
            let e = errno
            close(fd)
            throw LMDBError(code: e)
        }
        fileSize = Int(s.st_size)
        // The page size from the first meta, else the system's (LMDB's default).
        let first = Self.read(fd, offset: 0, count: 4096)
        var size = Int(sysconf(Int32(_SC_PAGESIZE)))
        if first.count >= 44 {
            let p = Int(Self.u32(first, 40))
            if Self.isPageSize(p) { size = p }
        }
        var metas: [(txn: UInt64, last: Int, main: Tree, free: Tree)?] = [nil, nil]
        var problems: [Damage?] = [nil, nil]
        for i in 0..<2 {
            let bytes = Self.read(fd, offset: i * size, count: 160)
            switch Self.readMeta(bytes, number: i, pageSize: size) {
            case .success(let m): metas[i] = m
            case .failure(let d): problems[i] = d
            }
        }
        let chosen: Int
        switch (metas[0], metas[1]) {
        case (nil, nil):
            close(fd)
            throw LMDBError.damaged(problems[0] ?? problems[1]!)
        case (_?, nil): chosen = 0
        case (nil, _?): chosen = 1
        case (let a?, let b?): chosen = a.txn < b.txn ? 1 : 0
        }
        let m = metas[chosen]!
        pageSize = size
        lastPage = m.last
        meta = chosen
        transaction = m.txn
        main = m.main
        free = m.free
        otherMetaDamage = problems[1 - chosen]
    }

    deinit { close(fd) }

    /// Whether LMDB's pages end within the file: the file holds every page up to the meta's
    /// last one. (A healthy file may end a few pages short: pages allocated and freed within
    /// one transaction are not written. ``check(limit:)`` tells whether a page in use lies past the end.)
    public var holdsEveryPage: Bool { fileSize >= (lastPage + 1) * pageSize }

    /// Checks the meta pages of the environment in `directory` before LMDB maps its file: see
    /// ``init(directory:)``. When the file ends before the meta's last page, every tree is
    /// walked to tell free pages past the end (harmless) from pages in use (damage). Nothing
    /// is checked when there is no file yet or it is empty (an environment being created).
    public static func checkBeforeOpening(directory: String) throws(LMDBError) {
        var s = stat()
        guard stat(directory + "/data.mdb", &s) == 0, s.st_size > 0 else { return }
        let file = try DataFile(directory: directory)
        if let d = file.otherMetaDamage { throw LMDBError.damaged(d) }
        // The roots must be pages of the file, of a tree's kind.
        for (tree, name) in [(file.main, "the table of tables"), (file.free, "the free list")] {
            guard let root = tree.root else { continue }
            if let d = file.checkHeader(root, table: name, kinds: [Self.branchFlag, Self.leafFlag]).damage { throw LMDBError.damaged(d) }
        }
        // A free list naming a page outside the file's pages would have LMDB write there: a
        // sparse file of any size, from one flipped bit.
        var walk = Walk(file: file, limit: 1)
        file.walkFreeList(&walk) { _ in }
        if let d = walk.found.first { throw LMDBError.damaged(d) }
        if !file.holdsEveryPage, let d = file.check(limit: 1).first { throw LMDBError.damaged(d) }
    }

    /// Walks the free list, checking that each of its entries is a list of page numbers (a count,
    /// then that many numbers, 8 bytes each, little-endian) of pages from 2 (after the meta
    /// pages) to the meta's last page; hands each entry's pages to `body`.
    fileprivate func walkFreeList(_ walk: inout Walk, _ body: @escaping ([Int]) -> Void) {
        let last = lastPage
        walk.tree(free, table: "the free list") { _, value, _, _ in
            let count = DataFile.u64(value, 0)
            guard value.count >= 8, count <= UInt64(value.count / 8 - 1) else {
                return Damage(page: nil, table: "the free list", problem: "an entry is not a list of pages")
            }
            var pages: [Int] = []
            pages.reserveCapacity(Int(count))
            for i in 0..<Int(count) {
                let p = DataFile.u64(value, 8 + 8 * i)
                guard p >= 2, p <= UInt64(last) else {
                    return Damage(page: nil, table: "the free list", problem: "it names page \(p), outside the file's pages 2 to \(last)")
                }
                pages.append(Int(p))
            }
            body(pages)
            return nil
        }
    }

    // MARK: Walking

    /// Walks every tree of the file (the free list, the table of tables, each table and each
    /// set of duplicates) reading each page once, and returns what is wrong, in the order
    /// found: at most `limit` problems. A page that is damaged is not followed. A file of
    /// 16,384 pages or more, on a machine of two processors or more, is walked in two parts at
    /// once (`check(limit:parts:)`).
    public func check(limit: Int = 100) -> [Damage] {
        let processors = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return check(limit: limit, parts: lastPage >= Self.pagesWalkedInParts && processors >= 2 ? 2 : 1)
    }

    /// The size of a file, in pages, from which ``check(limit:)`` walks its tables in two parts.
    static let pagesWalkedInParts = 16_384

    /// ``check(limit:)`` with the tables' walks split into `parts` run at once (1: one walk, in
    /// order). The parts only tell whether the file is sound: the tables are dealt out, the
    /// largest first, each to the part with the fewest pages so far, and each part records
    /// the pages it read. The file is sound when no part found damage and no page was read
    /// twice (by two parts, or by a part and the walk of the free list and the table of
    /// tables) nor named by the free list. Otherwise the file is walked again in one part, in
    /// order, which names the damage as it always has.
    func check(limit: Int, parts: Int) -> [Damage] {
        if parts > 1, otherMetaDamage == nil, isSound(parts: parts) { return [] }
        var walk = Walk(file: self, limit: limit)
        if let d = otherMetaDamage { walk.report(d) }
        let freePages = FreePages()
        walkFreeList(&walk) { freePages.pages += $0 }
        walk.tree(main, table: "the table of tables") { key, value, flags, walk in
            guard flags & Self.subData != 0, flags & Self.dupData == 0 else {
                return Damage(page: nil, table: "the table of tables", problem: "an entry is not a table's record")
            }
            guard let t = Tree(value, at: 0) else {
                return Damage(page: nil, table: "the table of tables", problem: "a table's record is cut short")
            }
            walk.tree(t, table: String(decoding: key, as: UTF8.self), visit: nil)
            return nil
        }
        // A free page must be in no tree (once every tree was read whole).
        if walk.found.isEmpty, let p = freePages.pages.first(where: { walk.visited.contains($0) }) {
            walk.report(Damage(page: p, table: "the free list", problem: "it lists page \(p), which a tree uses"))
        }
        return walk.found
    }

    /// Whether the walk in `parts` (see ``check(limit:parts:)``) finds the file sound.
    private func isSound(parts: Int) -> Bool {
        var head = Walk(file: self, limit: 1)
        var freePages: [Int] = []
        walkFreeList(&head) { freePages += $0 }
        var tables: [(name: String, tree: Tree, pages: UInt64)] = []
        head.tree(main, table: "the table of tables") { key, value, flags, _ in
            guard flags & Self.subData != 0, flags & Self.dupData == 0, let t = Tree(value, at: 0) else {
                return Damage(page: nil, table: "the table of tables", problem: "an entry is not a table's record")
            }
            // A table's record counts its branch, leaf and overflow pages (at 8, 16, 24).
            let pages = [8, 16, 24].reduce(UInt64(0)) { $0 &+ min(DataFile.u64(value, $1), UInt64(Int32.max)) }
            tables.append((String(decoding: key, as: UTF8.self), t, pages))
            return nil
        }
        guard head.found.isEmpty else { return false }
        var dealt = [[(name: String, tree: Tree)]](repeating: [], count: parts)
        var load = [UInt64](repeating: 0, count: parts)
        for t in tables.sorted(by: { $0.pages > $1.pages }) {
            let part = load.indices.min { load[$0] < load[$1] }!
            dealt[part].append((t.name, t.tree))
            load[part] += t.pages
        }
        let walks = Mutex([Walk?](repeating: nil, count: parts))
        let tablesOf = dealt
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            var walk = Walk(file: self, limit: 1)
            for t in tablesOf[part] where walk.found.isEmpty { walk.tree(t.tree, table: t.name, visit: nil) }
            walks.withLock { $0[part] = walk }
        }
        var read = head.visited
        var pagesRead = read.count
        for walk in walks.withLock({ $0 }) {
            guard let walk, walk.found.isEmpty else { return false }
            read.formUnion(walk.visited)
            pagesRead += walk.visited.count
        }
        // A page read by two walks shows as fewer pages in the union than were read.
        return read.count == pagesRead && !freePages.contains { read.contains($0) }
    }

    /// The pages the free list names, gathered while it is walked.
    private final class FreePages {
        var pages: [Int] = []
    }

    /// Every page in use, reached from the meta in use, with what it is: `events leaf`,
    /// `goalEvents branch`, `the free list leaf`, `p0.goals overflow`, … (a damaged page is
    /// listed where it was reached, with what its tree expected).
    public func pagesInUse() -> [Int: String] {
        var walk = Walk(file: self, limit: 0)
        walk.map = [:]
        walk.tree(free, table: "the free list", visit: nil)
        walk.tree(main, table: "the table of tables") { key, value, flags, walk in
            if flags & Self.subData != 0, flags & Self.dupData == 0, let t = Tree(value, at: 0) {
                walk.tree(t, table: String(decoding: key, as: UTF8.self), visit: nil)
            }
            return nil
        }
        return walk.map ?? [:]
    }

    /// The names of the tables in the table of tables that can be read.
    public func tableNames() -> [String] {
        var names: [String] = []
        _ = salvage(table: nil) { key, _ in names.append(String(decoding: key, as: UTF8.self)) }
        return names
    }

    /// Visits every entry of the named table that can be read, in key order, skipping damaged
    /// pages and what lies below them, and returns the damage met (at most 100). Values are
    /// copied out of the file; a duplicates table's entries are visited once per value.
    public func salvage(table name: String?, _ body: (_ key: [UInt8], _ value: [UInt8]) -> Void) -> [Damage] {
        withoutActuallyEscaping(body) { body in salvage(table: name, escaping: body) }
    }

    private func salvage(table name: String?, escaping body: @escaping (_ key: [UInt8], _ value: [UInt8]) -> Void) -> [Damage] {
        var walk = Walk(file: self, limit: 100)
        guard let name else {
            walk.tree(main, table: "the table of tables") { key, _, _, _ in
                body(key, [])
                return nil
            }
            return walk.found
        }
        var target: Tree?
        walk.tree(main, table: "the table of tables") { key, value, flags, _ in
            if flags & Self.subData != 0, key.elementsEqual(name.utf8) { target = Tree(value, at: 0) }
            return nil
        }
        guard let target else {
            walk.report(Damage(page: nil, table: name, problem: "the table cannot be found"))
            return walk.found
        }
        walk.tree(target, table: name) { key, value, flags, walk in
            if flags & Self.dupData != 0 {
                // A set of duplicates: values are the keys of a sub-page or a sub-tree.
                walk.duplicates(value, flags: flags, table: name) { body(key, $0) }
            } else {
                body(key, value)
            }
            return nil
        }
        return walk.found
    }

    /// Visits every entry of every page of the file that reads as a whole leaf page, reachable
    /// from a tree or not (free pages hold older copies of pages): what a salvage finds when a
    /// branch page above a leaf is damaged. Entries of sub-pages and overflow values are read
    /// as in ``salvage(table:_:)``; which table an entry belongs to is not known.
    public func scanLeafPages(_ body: (_ page: Int, _ key: [UInt8], _ value: [UInt8]) -> Void) {
        withoutActuallyEscaping(body) { body in scanLeafPages(escaping: body) }
    }

    private func scanLeafPages(escaping body: @escaping (_ page: Int, _ key: [UInt8], _ value: [UInt8]) -> Void) {
        let pages = min(lastPage, fileSize / pageSize - 1)
        guard pages >= 2 else { return }
        for page in 2...pages {
            var walk = Walk(file: self, limit: 1)
            let (bytes, damage) = walk.page(page, table: nil, kinds: [Self.leafFlag], record: false)
            guard let bytes, damage == nil else { continue }
            _ = walk.leafEntries(bytes, page: page, table: nil) { key, value, flags, _ in
                if flags & Self.dupData == 0, flags & Self.subData == 0 { body(page, key, value) }
                return nil
            }
        }
    }

    // MARK: Pages

    /// Reads the page header of `page` and checks its number and kind.
    fileprivate func checkHeader(_ page: Int, table: String?, kinds: [UInt16]) -> (bytes: [UInt8]?, damage: Damage?) {
        guard page >= 2, page <= lastPage else {
            return (nil, Damage(page: page, table: table, problem: "a page number past the last page (\(lastPage))"))
        }
        let (end, overflowed) = (page + 1).multipliedReportingOverflow(by: pageSize)
        guard !overflowed, end <= fileSize else {
            return (nil, Damage(page: page, table: table, problem: "the page lies past the end of the file (\(fileSize) bytes)"))
        }
        let bytes = Self.read(fd, offset: page * pageSize, count: pageSize)
        guard bytes.count == pageSize else {
            return (nil, Damage(page: page, table: table, problem: "the page cannot be read"))
        }
        guard Self.u64(bytes, 0) == UInt64(page) else {
            return (nil, Damage(page: page, table: table, problem: "the page's header names page \(Self.u64(bytes, 0))"))
        }
        let flags = Self.u16(bytes, 10) & ~UInt16(0x10 | 0x4000 | 0x8000)  // dirty, loose, keep
        guard kinds.contains(where: { flags == $0 || (($0 == Self.leafFlag) && flags == Self.leafFlag | Self.leaf2Flag) }) else {
            return (
                nil,
                Damage(
                    page: page, table: table,
                    problem: "the page's kind (flags \(String(flags, radix: 16))) is not what its tree holds there")
            )
        }
        return (bytes, nil)
    }

    /// Reads up to `count` bytes at `offset` (fewer at the end of the file).
    static func read(_ fd: Int32, offset: Int, count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = out.withUnsafeMutableBytes { b in pread(fd, b.baseAddress! + done, count - done, off_t(offset + done)) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            done += n
        }
        out.removeSubrange(done...)
        return out
    }

    /// Reads meta page `number`.
    static func readMeta(_ b: [UInt8], number: Int, pageSize: Int) -> Result<(txn: UInt64, last: Int, main: Tree, free: Tree), Damage> {
        func bad(_ why: String) -> Result<(txn: UInt64, last: Int, main: Tree, free: Tree), Damage> {
            .failure(Damage(page: number, table: "meta page", problem: why))
        }
        guard b.count >= 160 else { return bad("the file ends before it") }
        guard u64(b, 0) == UInt64(number), u16(b, 10) & metaFlag != 0 else { return bad("it is not a meta page") }
        guard u32(b, 16) == magic else { return bad("LMDB's magic number is missing") }
        guard u32(b, 20) == version else { return bad("an unknown LMDB format version \(u32(b, 20))") }
        guard Int(u32(b, 40)) == pageSize else { return bad("its page size \(u32(b, 40)) differs from the file's \(pageSize)") }
        let last = u64(b, 136)
        guard last >= 1, last < UInt64(Int.max / pageSize) else { return bad("its last page number \(last) is impossible") }
        guard let free = Tree(b, at: 40), let main = Tree(b, at: 88) else { return bad("it is cut short") }
        for t in [free, main] {
            if let r = t.root, r < 2 || r > Int(last) { return bad("a root page \(r) lies outside the file's pages 2…\(last)") }
            if t.root != nil, t.depth < 1 || t.depth > 32 { return bad("a tree depth of \(t.depth)") }
        }
        return .success((u64(b, 144), Int(last), main, free))
    }

    static func isPageSize(_ p: Int) -> Bool { p >= 512 && p <= 65536 && p & (p - 1) == 0 }

    static func u16(_ b: [UInt8], _ o: Int) -> UInt16 { o >= 0 && o + 2 <= b.count ? UInt16(b[o]) | UInt16(b[o + 1]) << 8 : 0 }
    static func u32(_ b: [UInt8], _ o: Int) -> UInt32 { UInt32(u16(b, o)) | UInt32(u16(b, o + 2)) << 16 }
    static func u64(_ b: [UInt8], _ o: Int) -> UInt64 { UInt64(u32(b, o)) | UInt64(u32(b, o + 4)) << 32 }
}

/// One walk over trees of a data file: the pages visited (none twice) and the damage found.
private struct Walk {
    let file: DataFile
    let limit: Int
    var found: [DataFile.Damage] = []
    var visited = Set<Int>()
    /// What each page read is, when asked for (``DataFile/pagesInUse()``).
    var map: [Int: String]?

    init(file: DataFile, limit: Int) {
        self.file = file
        self.limit = limit
    }

    mutating func report(_ d: DataFile.Damage) {
        if found.count < limit { found.append(d) }
    }

    /// A visitor of leaf entries: key, value (a table's record, a sub-page, or the data), node
    /// flags; returns damage to report at the page.
    typealias Visitor = (_ key: [UInt8], _ value: [UInt8], _ flags: UInt16, _ walk: inout Walk) -> DataFile.Damage?

    /// Walks the tree `t` of `table`, calling `visit` for each leaf entry (nil: only check).
    mutating func tree(_ t: DataFile.Tree, table: String, visit: Visitor?) {
        guard let root = t.root else { return }
        // Integer keys (the free list's transaction ids) are not in byte order.
        subtree(root, depth: t.depth, table: table, fixedKeySize: t.fixedKeySize, ordered: t.flags & 0x08 == 0, visit: visit)
    }

    /// Reads `page`, which must be one of `kinds`, not visited before.
    mutating func page(_ page: Int, table: String?, kinds: [UInt16], record: Bool = true) -> ([UInt8]?, DataFile.Damage?) {
        if record {
            if map != nil {
                let kind = kinds == [DataFile.branchFlag] ? "branch" : kinds == [DataFile.overflowFlag] ? "overflow" : "leaf"
                map?[page] = "\(table ?? "?") \(kind)"
            }
            guard visited.insert(page).inserted else {
                return (nil, DataFile.Damage(page: page, table: table, problem: "the page is reached twice"))
            }
        }
        let (bytes, damage) = file.checkHeader(page, table: table, kinds: kinds)
        guard let bytes else { return (nil, damage) }
        if kinds == [DataFile.overflowFlag] { return (bytes, nil) }
        let lower = Int(DataFile.u16(bytes, 12))
        let upper = Int(DataFile.u16(bytes, 14))
        guard lower >= DataFile.headerSize, lower % 2 == 0, lower <= upper, upper <= file.pageSize else {
            return (nil, DataFile.Damage(page: page, table: table, problem: "its free-space bounds (\(lower), \(upper)) are impossible"))
        }
        return (bytes, nil)
    }

    mutating func subtree(_ number: Int, depth: Int, table: String, fixedKeySize: Int, ordered: Bool, visit: Visitor?) {
        guard found.count < limit || visit != nil || map != nil else { return }
        let kinds = depth > 1 ? [DataFile.branchFlag] : [DataFile.leafFlag]
        let (read, damage) = page(number, table: table, kinds: kinds)
        guard let bytes = read else {
            if let damage { report(damage) }
            return
        }
        if depth > 1 {
            let count = (Int(DataFile.u16(bytes, 12)) - DataFile.headerSize) / 2
            guard count >= 1 else { return report(.init(page: number, table: table, problem: "a branch page without entries")) }
            var children: [Int] = []
            children.reserveCapacity(count)
            var previous: Range<Int>?
            for i in 0..<count {
                guard let node = self.node(bytes, i, page: number, table: table, leaf: false) else { return }
                if i > 0 {
                    if ordered, let previous, !Self.precedes(bytes, previous, node.key) {
                        return report(.init(page: number, table: table, problem: "its keys are out of order"))
                    }
                    previous = node.key
                }
                children.append(node.child)
            }
            for c in children { subtree(c, depth: depth - 1, table: table, fixedKeySize: fixedKeySize, ordered: ordered, visit: visit) }
        } else if DataFile.u16(bytes, 10) & DataFile.leaf2Flag != 0 {
            // Fixed-size keys packed after the header (a set of duplicates).
            let count = (Int(DataFile.u16(bytes, 12)) - DataFile.headerSize) / 2
            guard fixedKeySize > 0, DataFile.headerSize + count * fixedKeySize <= file.pageSize else {
                return report(.init(page: number, table: table, problem: "its fixed-size keys do not fit the page"))
            }
            for i in 0..<count {
                let o = DataFile.headerSize + i * fixedKeySize
                if let d = visit?(Array(bytes[o..<o + fixedKeySize]), [], 0, &self) { report(d) }
            }
        } else {
            if let d = leafEntries(bytes, page: number, table: table, ordered: ordered, visit: visit) { report(d) }
        }
    }

    /// One node of a branch or leaf page: its key, and its child page (branch) or flags and data
    /// (leaf; nil data when it is on overflow pages). Reports damage and returns nil when the
    /// node does not fit the page.
    mutating func node(_ b: [UInt8], _ i: Int, page: Int, table: String?, leaf: Bool) -> (
        key: Range<Int>, child: Int, flags: UInt16, size: Int, dataAt: Int
    )? {
        let upper = Int(DataFile.u16(b, 14))
        let o = Int(DataFile.u16(b, DataFile.headerSize + 2 * i))
        guard o >= upper, o % 2 == 0, o + DataFile.nodeHeaderSize <= b.count else {
            report(.init(page: page, table: table, problem: "entry \(i) lies outside the page"))
            return nil
        }
        let lo = UInt64(DataFile.u16(b, o))
        let hi = UInt64(DataFile.u16(b, o + 2))
        let flags = DataFile.u16(b, o + 4)
        let keySize = Int(DataFile.u16(b, o + 6))
        let keyAt = o + DataFile.nodeHeaderSize
        guard keyAt + keySize <= b.count else {
            report(.init(page: page, table: table, problem: "entry \(i)'s key runs past the page"))
            return nil
        }
        let key = keyAt..<keyAt + keySize
        if !leaf {
            let child = lo | hi << 16 | UInt64(flags) << 32
            return (key, child > UInt64(Int.max) ? -1 : Int(child), 0, 0, 0)
        }
        let size = Int(lo | hi << 16)
        let dataAt = keyAt + keySize
        let stored = flags & DataFile.bigData != 0 ? 8 : size
        guard dataAt + stored <= b.count else {
            report(.init(page: page, table: table, problem: "entry \(i)'s value runs past the page"))
            return nil
        }
        return (key, 0, flags, size, dataAt)
    }

    /// Visits the entries of the leaf page `b`; the damage that stopped it, if any.
    mutating func leafEntries(_ b: [UInt8], page: Int, table: String?, ordered: Bool = true, visit: Visitor?) -> DataFile.Damage? {
        let count = (Int(DataFile.u16(b, 12)) - DataFile.headerSize) / 2
        var previous: Range<Int>?
        for i in 0..<count {
            guard let n = node(b, i, page: page, table: table, leaf: true) else { return nil }
            if ordered, let previous, !Self.precedes(b, previous, n.key) {
                return .init(page: page, table: table, problem: "its keys are out of order")
            }
            previous = n.key
            // A plain entry that nobody visits is checked by its bounds alone, without copying
            // its key or value out of the page.
            guard visit != nil || n.flags & (DataFile.bigData | DataFile.subData | DataFile.dupData) != 0 else { continue }
            let value: [UInt8]
            if n.flags & DataFile.bigData != 0 {
                let first = DataFile.u64(b, n.dataAt)
                guard let v = overflow(first > UInt64(Int.max) ? -1 : Int(first), size: n.size, table: table) else { continue }
                value = v
            } else {
                value = Array(b[n.dataAt..<n.dataAt + n.size])
            }
            if n.flags & DataFile.subData != 0, n.flags & DataFile.dupData != 0 {
                // A sub-tree of duplicates: walked even when nobody visits it, to check it.
                if visit == nil, let t = DataFile.Tree(value, at: 0) { tree(t, table: table ?? "a table", visit: nil) }
            } else if n.flags & DataFile.dupData != 0, visit == nil {
                duplicates(value, flags: n.flags, table: table ?? "a table") { _ in }
            }
            if let d = visit?(Array(b[n.key]), value, n.flags, &self) { return d }
        }
        return nil
    }

    /// Whether the bytes of `b` at `a` sort before those at `c` (a key before the next one of
    /// its page), compared in place.
    static func precedes(_ b: [UInt8], _ a: Range<Int>, _ c: Range<Int>) -> Bool {
        b.withUnsafeBytes { raw in
            let n = min(a.count, c.count)
            let order = n == 0 ? 0 : memcmp(raw.baseAddress! + a.lowerBound, raw.baseAddress! + c.lowerBound, n)
            return order < 0 || (order == 0 && a.count < c.count)
        }
    }

    /// The value kept on the overflow pages from `first`.
    mutating func overflow(_ first: Int, size: Int, table: String?) -> [UInt8]? {
        let (bytes, damage) = page(first, table: table, kinds: [DataFile.overflowFlag])
        guard let bytes else {
            if let damage { report(damage) }
            return nil
        }
        let pages = Int(DataFile.u32(bytes, 12))
        guard pages >= 1, first + pages - 1 <= file.lastPage, size <= pages * file.pageSize - DataFile.headerSize,
            (first + pages) * file.pageSize <= file.fileSize
        else {
            report(.init(page: first, table: table, problem: "its overflow run of \(pages) pages cannot hold \(size) bytes"))
            return nil
        }
        for p in first + 1..<first + pages {
            visited.insert(p)
            map?[p] = "\(table ?? "?") overflow"
        }
        return DataFile.read(file.fd, offset: first * file.pageSize + DataFile.headerSize, count: size)
    }

    /// The values of a set of duplicates: a sub-page inside the value, or a sub-tree whose
    /// record is the value.
    mutating func duplicates(_ value: [UInt8], flags: UInt16, table: String, _ body: ([UInt8]) -> Void) {
        if flags & DataFile.subData != 0 {
            guard let t = DataFile.Tree(value, at: 0) else {
                return report(.init(page: nil, table: table, problem: "a set of duplicates has a record cut short"))
            }
            withoutActuallyEscaping(body) { body in
                tree(t, table: table) { key, _, _, _ in
                    body(key)
                    return nil
                }
            }
            return
        }
        // A sub-page: a page header then entries, within the value.
        let lower = Int(DataFile.u16(value, 12))
        let upper = Int(DataFile.u16(value, 14))
        let pageFlags = DataFile.u16(value, 10)
        guard value.count >= DataFile.headerSize, lower >= DataFile.headerSize, lower <= upper, upper <= value.count,
            pageFlags & DataFile.subpageFlag != 0
        else { return report(.init(page: nil, table: table, problem: "a set of duplicates is malformed")) }
        let count = (lower - DataFile.headerSize) / 2
        if pageFlags & DataFile.leaf2Flag != 0 {
            // Fixed-size values packed after the header; their size is what remains over the count.
            guard count > 0 else { return }
            let size = ((lower - DataFile.headerSize) + (value.count - upper)) / count
            guard size > 0 else { return }
            for i in 0..<count {
                let o = DataFile.headerSize + i * size
                guard o + size <= value.count else { break }
                body(Array(value[o..<o + size]))
            }
            return
        }
        for i in 0..<count {
            let o = Int(DataFile.u16(value, DataFile.headerSize + 2 * i))
            guard o + DataFile.nodeHeaderSize <= value.count else { return }
            let ks = Int(DataFile.u16(value, o + 6))
            guard o + DataFile.nodeHeaderSize + ks <= value.count else { return }
            body(Array(value[o + 8..<o + 8 + ks]))
        }
    }
}

extension LMDBError {
    /// LMDB's code for a damaged file (`MDB_CORRUPTED`), which this module also gives when its
    /// own checks find damage before LMDB reads a page.
    public static let corruptedCode: Int32 = -30796

    /// The data file is damaged (found by ``DataFile``'s checks, before LMDB met it).
    public static func damaged(_ d: DataFile.Damage) -> LMDBError {
        LMDBError(code: corruptedCode, message: "damaged at \(d)", damage: d)
    }

    /// Whether LMDB, or this module's checks, found the data file damaged: `MDB_CORRUPTED`,
    /// `MDB_PAGE_NOTFOUND`, `MDB_INVALID` (a meta page), `MDB_VERSION_MISMATCH`, `MDB_BAD_TXN`
    /// after a failed page read, `MDB_INCOMPATIBLE` (a table's record of the wrong kind). (LMDB
    /// gives `MDB_BAD_TXN` for a transaction that failed before; this wrapper ends every
    /// transaction whose call failed, so it meets it only after a failed page read.)
    public var isDamage: Bool {
        let codes: [Int32] = [
            Self.corruptedCode,
            -30797,  // MDB_PAGE_NOTFOUND
            -30793,  // MDB_INVALID (a meta page)
            -30794,  // MDB_VERSION_MISMATCH
            -30784,  // MDB_INCOMPATIBLE
            -30782,  // MDB_BAD_TXN, after a failed page read
        ]
        return codes.contains(code)
    }
}
