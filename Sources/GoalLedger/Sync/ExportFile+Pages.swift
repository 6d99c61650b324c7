import Foundation

extension ExportFile {
    /// An export file opened for an import a page at a time: mapped into memory (a pipe or a
    /// device is first copied to a temporary file, unlinked at once), its checksum and ledger
    /// checked, and each record's origin, sequence and place noted, so that its events can be
    /// read in any order without holding them all.
    ///
    /// The mapped pages are given back as the file is read (``release()``): what the import
    /// holds is the notes, 32 bytes a record, and one page of events.
    package final class Opened: @unchecked Sendable {
        /// The name errors give (the path as given).
        package let name: String
        package let ledger: UUID
        /// Each origin's records, in sequence order (records of one sequence in file order).
        package let origins: [String: [Entry]]
        private let base: UnsafeRawPointer?
        /// The file's size in bytes.
        package let size: Int

        /// Where one record lies, and what it says of its place in its origin.
        package struct Entry {
            package let sequence: UInt64
            let offset: Int
            let length: Int
            /// Its place in the file, from 0 (errors name it from 1).
            package let number: Int
        }

        /// Opens `path` (a regular file, a pipe such as `/dev/stdin`, a FIFO, a device);
        /// `check` may refuse the ledger the header names, once the checksum holds and before
        /// any record is read.
        package convenience init(_ path: String, ledger check: ((UUID) throws(LedgerError) -> Void)? = nil) throws(LedgerError) {
            let (base, size) = try Self.map(path)
            try self.init(name: path, base: base, size: size, mapped: true, check: check)
        }

        /// The export file `bytes` (copied), read as a file is.
        package convenience init(bytes: [UInt8], name: String) throws(LedgerError) {
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
            copy.copyBytes(from: bytes)
            try self.init(name: name, base: UnsafeRawPointer(copy.baseAddress!), size: bytes.count, mapped: false, check: nil)
        }

        /// Whether `base` is a mapping (else memory allocated for it).
        private let mapped: Bool

        private init(name: String, base: UnsafeRawPointer?, size: Int, mapped: Bool, check: ((UUID) throws(LedgerError) -> Void)?) throws(LedgerError) {
            self.name = name
            self.base = base
            self.size = size
            self.mapped = mapped
            do throws(LedgerError) {
                let bytes = UnsafeRawBufferPointer(start: base, count: size)
                let bodyEnd = try Self.checkFrame(bytes, name: name, releasing: mapped)
                ledger = UUID(uuid: bytes.loadUnaligned(fromByteOffset: magic.count + 1, as: uuid_t.self))
                try check?(ledger)
                origins = try Self.entries(UnsafeRawBufferPointer(rebasing: bytes[..<bodyEnd]), name: name)
                release()
            } catch {
                Self.free(base, size: size, mapped: mapped)
                throw error
            }
        }

        deinit { Self.free(base, size: size, mapped: mapped) }

        private static func free(_ base: UnsafeRawPointer?, size: Int, mapped: Bool) {
            guard let base else { return }
            if mapped { munmap(UnsafeMutableRawPointer(mutating: base), size) } else { base.deallocate() }
        }

        /// The number of records.
        package var count: Int { origins.values.reduce(0) { $0 + $1.count } }

        /// Gives back the pages of the file read so far (they are read again from the page
        /// cache if need be): they would otherwise count in the process's memory.
        package func release() {
            guard let base, size > 0, mapped else { return }
            madvise(UnsafeMutableRawPointer(mutating: base), size, MADV_DONTNEED)
        }

        /// The record `entry` notes, decoded (checked by its checksum) with its bytes.
        func record(_ entry: Entry) throws(LedgerError) -> (Event, [UInt8]) {
            let bytes = UnsafeRawBufferPointer(start: base! + entry.offset, count: entry.length)
            do throws(RecordDecodingError) {
                return (try EventCodec.decode(bytes), Array(bytes))
            } catch {
                throw LedgerError(.invalidInput, "\(name) is not a usable export: record \(entry.number + 1): \(error.reason)")
            }
        }

        /// The file mapped read-only: a regular file as it is, anything else copied first to a
        /// temporary file. The copy stops at once when the first bytes are not an export's
        /// (`/dev/zero` is not read on).
        private static func map(_ path: String) throws(LedgerError) -> (UnsafeRawPointer?, Int) {
            func failed(_ why: String) -> LedgerError { LedgerError(.invalidInput, "cannot read \(path): \(why)") }
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw failed(String(cString: strerror(errno))) }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw failed(String(cString: strerror(errno))) }
            var mapped = fd
            var spool: Int32 = -1
            defer { if spool >= 0 { close(spool) } }
            if info.st_mode & S_IFMT != S_IFREG {
                spool = try spoolToTemporaryFile(fd, path: path, magic: magic)
                mapped = spool
                guard fstat(spool, &info) == 0 else { throw failed(String(cString: strerror(errno))) }
            }
            let size = Int(info.st_size)
            guard size > 0 else { return (nil, 0) }
            guard let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, mapped, 0), p != MAP_FAILED else {
                throw failed(String(cString: strerror(errno)))
            }
            return (UnsafeRawPointer(p), size)
        }

        /// Checks the file's frame: its start, its trailer and the checksum over everything
        /// before the trailer (hashed a piece at a time, each piece's pages given back when
        /// `releasing` a mapping); the offset of the trailer.
        private static func checkFrame(_ bytes: UnsafeRawBufferPointer, name: String, releasing: Bool) throws(LedgerError) -> Int {
            func bad(_ why: String) -> LedgerError { LedgerError(.invalidInput, "\(name) is not a usable export: \(why)") }
            guard bytes.count >= magic.count + 1 + 16 + 8 + trailer.count + 32, bytes.prefix(magic.count).elementsEqual(magic) else {
                throw bad("it does not start like a ledger export, or is truncated")
            }
            let bodyEnd = bytes.count - 32 - trailer.count
            guard bytes[bodyEnd..<bodyEnd + trailer.count].elementsEqual(trailer) else { throw bad("it is truncated (no trailer)") }
            var hash = SHA256()
            let piece = 64 << 20
            var start = 0
            while start < bodyEnd {
                let end = min(bodyEnd, start + piece)
                hash.update(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                // Whole pages only: the next piece's first page stays.
                let pageSize = Int(getpagesize())
                let from = start / pageSize * pageSize
                let through = end / pageSize * pageSize
                if releasing && through > from { madvise(UnsafeMutableRawPointer(mutating: bytes.baseAddress! + from), through - from, MADV_DONTNEED) }
                start = end
            }
            guard hash.finalize().elementsEqual(bytes[(bodyEnd + trailer.count)...]) else {
                throw bad("its checksum does not match (altered or damaged)")
            }
            return bodyEnd
        }

        /// Every record's origin, sequence and place, read from the record's envelope (the rest
        /// is checked when the record is read); each origin's in sequence order.
        private static func entries(_ body: UnsafeRawBufferPointer, name: String) throws(LedgerError) -> [String: [Entry]] {
            func bad(_ why: String) -> LedgerError { LedgerError(.invalidInput, "\(name) is not a usable export: \(why)") }
            var origins: [String: [Entry]] = [:]
            do throws(RecordDecodingError) {
                var r = ByteReader(body)
                r.index = magic.count
                let v = try r.u8()
                guard v == version else { throw RecordDecodingError(reason: "file version \(v) is not supported") }
                _ = try r.uuid()
                let count = try r.u64BE()
                guard count <= UInt64(body.count) else { throw RecordDecodingError(reason: "the event count is impossible") }
                // The origin of the record before: an export's records come in runs of one origin.
                var origin = ""
                var run: [Entry] = []
                for i in 0..<Int(count) {
                    let length = Int(clamping: try r.varint())
                    guard length <= r.bytes.count - r.index else { throw RecordDecodingError(reason: "record \(i + 1) is truncated") }
                    let record = UnsafeRawBufferPointer(rebasing: r.bytes[r.index..<r.index + length])
                    let (o, sequence): (String, UInt64)
                    do throws(RecordDecodingError) {
                        (o, sequence) = try EventCodec.place(of: record)
                    } catch {
                        throw RecordDecodingError(reason: "record \(i + 1): \(error.reason)")
                    }
                    if o != origin {
                        if !run.isEmpty { origins[origin, default: []].append(contentsOf: run) }
                        run.removeAll(keepingCapacity: true)
                        origin = o
                    }
                    run.append(Entry(sequence: sequence, offset: r.index, length: length, number: i))
                    r.index += length
                }
                if !run.isEmpty { origins[origin, default: []].append(contentsOf: run) }
                guard r.isAtEnd else { throw RecordDecodingError(reason: "bytes after the last record") }
            } catch {
                throw bad(error.reason)
            }
            // In sequence order, records of one sequence as the file has them (a stable sort).
            for (o, list) in origins where !zip(list, list.dropFirst()).allSatisfy({ $0.sequence <= $1.sequence }) {
                origins[o] = list.sorted { $0.sequence < $1.sequence }
            }
            return origins
        }
    }

    /// An opened export file as a ``PageWalk`` reads it: each origin's records in sequence order.
    package struct Source: PageSource {
        let file: Opened
        /// The next record to read of each origin.
        private var next: [String: Int] = [:]

        package init(_ file: Opened) { self.file = file }

        package mutating func read(_ origin: String, count: Int) throws(LedgerError) -> PageChunk {
            var chunk = PageChunk()
            let entries = file.origins[origin] ?? []
            let from = next[origin] ?? 0
            let to = from + min(max(0, count), entries.count - from)
            chunk.events.reserveCapacity(to - from)
            chunk.records.reserveCapacity(to - from)
            for entry in entries[from..<to] {
                let (event, record) = try file.record(entry)
                chunk.events.append(event)
                chunk.records.append(record)
            }
            next[origin] = to
            chunk.ended = to == entries.count
            return chunk
        }

        package func remaining(_ origin: String, after given: UInt64?) -> Int {
            let entries = file.origins[origin] ?? []
            guard let given else { return entries.count }
            // The first record past `given` (entries are in sequence order).
            var (low, high) = (0, entries.count)
            while low < high {
                let mid = (low + high) / 2
                if entries[mid].sequence <= given { low = mid + 1 } else { high = mid }
            }
            return entries.count - low
        }
    }
}

/// `fd` read to its end into an unlinked temporary file, whose descriptor is returned; the read
/// stops at once when the first bytes are not `magic`.
private func spoolToTemporaryFile(_ fd: Int32, path: String, magic: [UInt8]) throws(LedgerError) -> Int32 {
    func failed(_ why: String) -> LedgerError { LedgerError(.invalidInput, "cannot read \(path): \(why)") }
    var template = Array((NSTemporaryDirectory() + "/ledger-import-XXXXXX").utf8CString)
    let spool = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard spool >= 0 else { throw LedgerError(.store, "cannot make a temporary file to read \(path) into: \(String(cString: strerror(errno)))") }
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var total = 0
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            let why = String(cString: strerror(errno))
            close(spool)
            throw failed(why)
        }
        if n == 0 { break }
        let head = min(n, max(0, magic.count - total))
        if head > 0, !buffer[..<head].elementsEqual(magic[total..<(total + head)]) {
            close(spool)
            throw LedgerError(.invalidInput, "\(path) is not a usable export: it does not start like a ledger export")
        }
        total += n
        var written = 0
        while written < n {
            let w = buffer.withUnsafeBytes { write(spool, $0.baseAddress! + written, n - written) }
            if w < 0 && errno == EINTR { continue }
            guard w > 0 else {
                let why = String(cString: strerror(errno))
                close(spool)
                throw LedgerError(.store, "cannot copy \(path) to a temporary file: \(why)")
            }
            written += w
        }
    }
    return spool
}
