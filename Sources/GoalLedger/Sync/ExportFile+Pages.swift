import Foundation

extension ExportFile {
    /// An export file opened for an import a page at a time: read where it lies (a pipe or a
    /// device is first copied to a temporary file, unlinked at once), its checksum and ledger
    /// checked, and each record's origin, sequence and place noted, so that its events can be
    /// read in any order without holding them all: what the import holds is the notes, 32 bytes
    /// a record, and one page of events.
    ///
    /// The file is read with `pread`, not mapped: a file that another process shortens while it
    /// is read is an error naming it, not a fault of the process.
    package final class Opened: @unchecked Sendable {
        /// The name errors give (the path as given).
        package let name: String
        package let ledger: UUID
        /// Each origin's records, in sequence order (records of one sequence in file order).
        package let origins: [String: [Entry]]
        /// Where the file's bytes are read from.
        private let contents: Contents
        /// The file's size in bytes, when it was opened.
        package var size: Int { contents.size }

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
            let (fd, size) = try Contents.openForReading(path)
            try self.init(name: path, bytes: .file(fd), size: size, check: check)
        }

        /// The export file `bytes`, read as a file is.
        package convenience init(bytes: [UInt8], name: String) throws(LedgerError) {
            try self.init(name: name, bytes: .memory(bytes), size: bytes.count, check: nil)
        }

        private init(name: String, bytes: Contents.Bytes, size: Int, check: ((UUID) throws(LedgerError) -> Void)?) throws(LedgerError) {
            let contents = Contents(name: name, bytes: bytes, size: size)
            do throws(LedgerError) {
                let bodyEnd = try contents.checkFrame()
                var header: [UInt8] = []
                try contents.read(magic.count + 1, 16, into: &header)
                let ledger = header.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
                try check?(ledger)
                origins = try contents.entries(bodyEnd: bodyEnd)
                self.ledger = ledger
            } catch {
                contents.close()
                throw error
            }
            self.name = name
            self.contents = contents
        }

        deinit { contents.close() }

        /// The number of records.
        package var count: Int { origins.values.reduce(0) { $0 + $1.count } }

        /// Reads `count` bytes at `offset` into `buffer` (which holds exactly them after).
        func read(_ offset: Int, _ count: Int, into buffer: inout [UInt8]) throws(LedgerError) {
            try contents.read(offset, count, into: &buffer)
        }

        /// The record `entry` notes, decoded (checked by its checksum) with its bytes.
        func record(_ entry: Entry) throws(LedgerError) -> (Event, [UInt8]) {
            var bytes: [UInt8] = []
            try read(entry.offset, entry.length, into: &bytes)
            return (try decode(bytes[...], entry), bytes)
        }

        /// `bytes`, the record `entry` notes, decoded.
        func decode(_ bytes: ArraySlice<UInt8>, _ entry: Entry) throws(LedgerError) -> Event {
            let decoded: Result<Event, RecordDecodingError> = bytes.withUnsafeBytes { raw in
                do throws(RecordDecodingError) {
                    return .success(try EventCodec.decode(raw))
                } catch {
                    return .failure(error)
                }
            }
            switch decoded {
            case .success(let event): return event
            case .failure(let error): throw contents.bad("record \(entry.number + 1): \(error.reason)")
            }
        }
    }

    /// An export file's bytes, read where they lie: what ``Opened`` reads with.
    struct Contents {
        /// Where the bytes are read from.
        enum Bytes {
            /// An open file (the file itself, or its copy), closed with ``close()``.
            case file(Int32)
            case memory([UInt8])
        }

        let name: String
        let bytes: Bytes
        let size: Int

        func close() { if case .file(let fd) = bytes { closeDescriptor(fd) } }

        func bad(_ why: String) -> LedgerError { LedgerError(.invalidInput, "\(name) is not a usable export: \(why)") }

        /// Reads `count` bytes at `offset` into `buffer` (which holds exactly them after).
        func read(_ offset: Int, _ count: Int, into buffer: inout [UInt8]) throws(LedgerError) {
            switch bytes {
            case .memory(let all):
                buffer = Array(all[offset..<(offset + count)])
            case .file(let fd):
                if buffer.count != count { buffer = [UInt8](repeating: 0, count: count) }
                var done = 0
                while done < count {
                    let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done)) }
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else {
                        throw LedgerError(
                            .invalidInput,
                            n == 0
                                ? "\(name) changed while it was read: it is shorter than the \(size) bytes it held when opened"
                                : "cannot read \(name): \(String(cString: strerror(errno)))")
                    }
                    done += n
                }
            }
        }

        /// The file opened for reading: a regular file as it is, anything else copied first to a
        /// temporary file. The copy stops at once when the first bytes are not an export's
        /// (`/dev/zero` is not read on).
        static func openForReading(_ path: String) throws(LedgerError) -> (Int32, Int) {
            func failed(_ why: String) -> LedgerError { LedgerError(.invalidInput, "cannot read \(path): \(why)") }
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw failed(String(cString: strerror(errno))) }
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                let why = String(cString: strerror(errno))
                closeDescriptor(fd)
                throw failed(why)
            }
            guard info.st_mode & S_IFMT != S_IFREG else { return (fd, Int(info.st_size)) }
            defer { closeDescriptor(fd) }
            let spool = try spoolToTemporaryFile(fd, path: path, magic: magic)
            guard fstat(spool, &info) == 0 else {
                let why = String(cString: strerror(errno))
                closeDescriptor(spool)
                throw failed(why)
            }
            return (spool, Int(info.st_size))
        }

        /// Checks the file's frame: its start, its trailer and the checksum over everything
        /// before the trailer (read a piece at a time); the offset of the trailer.
        func checkFrame() throws(LedgerError) -> Int {
            let header = magic.count + 1 + 16 + 8
            guard size >= header + trailer.count + 32 else { throw bad("it does not start like a ledger export, or is truncated") }
            var piece: [UInt8] = []
            try read(0, magic.count, into: &piece)
            guard piece == magic else { throw bad("it does not start like a ledger export, or is truncated") }
            let bodyEnd = size - 32 - trailer.count
            try read(bodyEnd, trailer.count + 32, into: &piece)
            guard piece.prefix(trailer.count).elementsEqual(trailer) else { throw bad("it is truncated (no trailer)") }
            let stated = Array(piece.suffix(32))
            var hash = SHA256()
            var start = 0
            while start < bodyEnd {
                let end = min(bodyEnd, start + (1 << 20))
                try read(start, end - start, into: &piece)
                piece.withUnsafeBytes { hash.update($0) }
                start = end
            }
            guard hash.finalize() == stated else { throw bad("its checksum does not match (altered or damaged)") }
            return bodyEnd
        }

        /// Every record's origin, sequence and place, read from the record's envelope (the rest
        /// is checked when the record is read); each origin's in sequence order.
        func entries(bodyEnd: Int) throws(LedgerError) -> [String: [Opened.Entry]] {
            var window = Window(file: self, end: bodyEnd)
            var origins: [String: [Opened.Entry]] = [:]
            // The header: version, ledger (checked already) and the record count.
            try window.hold(magic.count, 1 + 16 + 8)
            let v = window.byte(magic.count)
            guard v == version else { throw bad("file version \(v) is not supported") }
            let count = window.u64BE(magic.count + 17)
            guard count <= UInt64(bodyEnd) else { throw bad("the event count is impossible") }
            // The origin of the record before: an export's records come in runs of one origin.
            var origin = ""
            var run: [Opened.Entry] = []
            var offset = magic.count + 1 + 16 + 8
            for i in 0..<Int(count) {
                let (length, width) = try window.varint(at: offset)
                offset += width
                guard length <= bodyEnd - offset else { throw bad("record \(i + 1) is truncated") }
                try window.hold(offset, length)
                let place: Result<(String, UInt64), RecordDecodingError> = window.withBytes(offset, length) { record in
                    do throws(RecordDecodingError) {
                        return .success(try EventCodec.place(of: record))
                    } catch {
                        return .failure(error)
                    }
                }
                let (o, sequence): (String, UInt64)
                switch place {
                case .success(let p): (o, sequence) = p
                case .failure(let error): throw bad("record \(i + 1): \(error.reason)")
                }
                if o != origin {
                    if !run.isEmpty { origins[origin, default: []].append(contentsOf: run) }
                    run.removeAll(keepingCapacity: true)
                    origin = o
                }
                run.append(Opened.Entry(sequence: sequence, offset: offset, length: length, number: i))
                offset += length
            }
            if !run.isEmpty { origins[origin, default: []].append(contentsOf: run) }
            guard offset == bodyEnd else { throw bad("bytes after the last record") }
            // In sequence order, records of one sequence as the file has them (a stable sort).
            for (o, list) in origins where !zip(list, list.dropFirst()).allSatisfy({ $0.sequence <= $1.sequence }) {
                origins[o] = list.sorted { $0.sequence < $1.sequence }
            }
            return origins
        }

        /// A part of the file held in memory while it is read in order: at least 1 MiB from
        /// where the reading is, or a whole record when one is longer.
        struct Window {
            let file: Contents
            /// Where the body ends (no window reads past it).
            let end: Int
            var start = 0
            var bytes: [UInt8] = []

            init(file: Contents, end: Int) {
                self.file = file
                self.end = end
            }

            /// Makes the window hold `count` bytes from `offset` (within the body).
            mutating func hold(_ offset: Int, _ count: Int) throws(LedgerError) {
                guard offset < start || offset + count > start + bytes.count else { return }
                start = offset
                try file.read(offset, min(end - offset, max(count, 1 << 20)), into: &bytes)
            }

            func byte(_ offset: Int) -> UInt8 { bytes[offset - start] }

            func u64BE(_ offset: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(byte(offset + $1)) } }

            func withBytes<R>(_ offset: Int, _ count: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
                bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[(offset - start)..<(offset - start + count)])) }
            }

            /// The record length at `offset` and how many bytes it takes.
            mutating func varint(at offset: Int) throws(LedgerError) -> (Int, Int) {
                try hold(offset, min(10, end - offset))
                let available = min(10, end - offset)
                let read: Result<(UInt64, Int), RecordDecodingError> = withBytes(offset, available) { raw in
                    var r = ByteReader(raw)
                    do throws(RecordDecodingError) {
                        return .success((try r.varint(), r.index))
                    } catch {
                        return .failure(error)
                    }
                }
                switch read {
                case .success(let (value, width)): return (Int(clamping: value), width)
                case .failure(let error): throw file.bad(error.reason)
                }
            }
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
            let slice = entries[from..<to]
            // The records lie together in a file in an export's order: one read for them all.
            let bytes = slice.reduce(0) { $0 + $1.length }
            if let low = slice.map(\.offset).min(), let high = slice.map({ $0.offset + $0.length }).max(), high - low <= 2 * bytes + (64 << 10) {
                var span: [UInt8] = []
                try file.read(low, high - low, into: &span)
                for entry in slice {
                    let record = span[(entry.offset - low)..<(entry.offset - low + entry.length)]
                    chunk.events.append(try file.decode(record, entry))
                    chunk.records.append(Array(record))
                }
            } else {
                for entry in slice {
                    let (event, record) = try file.record(entry)
                    chunk.events.append(event)
                    chunk.records.append(record)
                }
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

/// Closes `fd` (for the types whose own `close` hides the system's).
private func closeDescriptor(_ fd: Int32) { close(fd) }
