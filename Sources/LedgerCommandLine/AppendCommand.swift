import Foundation
import GoalLedger
import Synchronization

enum AppendCommand {
    static let file = Option.text("--file", "F", "read the lines from F instead of stdin")
    static let expectVersion = Option.integer(
        "--expect-version", "N", "refuse (exit 4) unless the batch's one goal is at version N", minimum: 0)

    static let spec = CommandSpec(
        name: "append", summary: "append JSON event lines (stdin, or --file) as one atomic batch",
        options: [
            file.spec,
            expectVersion.spec,
        ],
        run: run)

    /// The input is read and appended in chunks of about this many bytes (cut at line ends),
    /// all in one write: a large batch stays atomic while only two chunks of its lines and
    /// events (the one appended, and the next, parsed meanwhile) are in memory beside the
    /// transaction's pages.
    static let chunkBytes = 2 << 20

    /// The longest line read, in bytes: far above the largest event of the catalog in ordinary
    /// text (2,000 characters of details and 32 tags of 64, every character escaped as a
    /// surrogate pair, stay under 64 KiB), so that an input with no line end (`/dev/zero`) is
    /// refused at once instead of read whole.
    static let lineBytesMaximum = 1 << 20

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let expected = try inv.value(Self.expectVersion)
        let size = Self.chunkBytes
        var input: ChunkedInput
        if let file = try inv.value(Self.file) {
            guard let handle = FileHandle(forReadingAtPath: file) else { throw LedgerError(.invalidInput, "cannot read \(file)") }
            input = try ChunkedInput(file: handle, named: file, size: size)
        } else if let handle = inv.standardInput {
            input = try ChunkedInput(file: handle, named: "standard input", size: size)
        } else {
            input = ChunkedInput(inv.readInput(), size: size)
        }
        let store = try inv.openStore()
        // A regular file's events take about twice its size in the store: room for them at once,
        // not by the whole append run again on each doubling of the map.
        if let file = try inv.value(Self.file), let size = try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int {
            try store.reserveRoom(size, times: 2)
        }
        var ahead: FormattedLines?
        let results = try append(&input, to: store, expectedVersion: expected, now: try inv.now()) { ahead = $0 }
        try printLines(of: results, formattedAhead: ahead, &inv)
    }

    /// The results formatted a piece of this many at a time.
    static let linesPerPiece = 4096

    /// How many results' lines are made while the write finishes (`FormattedLines`): about
    /// 28 MiB of text at most, held until the write commits.
    static let linesAhead = 262_144

    /// Prints each result's line, in order: the lines are made in pieces, as many at a time as
    /// the machine has processors (each piece one text), and written piece by piece. An append
    /// of a million events no longer makes its million lines on one thread, and no more than
    /// one round of pieces is held at a time, besides the lines made ahead (`formattedAhead`,
    /// the first ones, taken when they are of these results).
    static func printLines(of results: [AppendResult], formattedAhead: FormattedLines? = nil, _ inv: inout Invocation) throws(LedgerError) {
        var start = 0
        if let ahead = formattedAhead, ahead.results.count <= results.count, ahead.results == results[..<ahead.results.count] {
            for text in ahead.texts() { inv.write(try text.get()) }
            start = ahead.results.count
        }
        let threads = max(1, min(8, ProcessInfo.processInfo.activeProcessorCount))
        while start < results.count {
            let end = min(results.count, start + linesPerPiece * threads)
            for text in lineTexts(results[start..<end]) { inv.write(try text.get()) }
            start = end
        }
    }

    /// The lines of `results`, in pieces of `linesPerPiece` made on as many threads as there
    /// are processors (each piece one text, or the error its first failed line gave).
    static func lineTexts(_ results: ArraySlice<AppendResult>) -> [Result<String, LedgerError>] {
        let pieces = (results.count + linesPerPiece - 1) / linesPerPiece
        let texts = Mutex<[Result<String, LedgerError>?]>(Array(repeating: nil, count: pieces))
        DispatchQueue.concurrentPerform(iterations: pieces) { p in
            let lower = results.startIndex + p * linesPerPiece
            let made = Result { () throws(LedgerError) -> String in
                // The piece's lines into one buffer, made one text at its end.
                var bytes: [UInt8] = []
                bytes.reserveCapacity(linesPerPiece * 112)
                for r in results[lower..<min(results.endIndex, lower + linesPerPiece)] {
                    try writeLine(r, into: &bytes)
                    bytes.append(UInt8(ascii: "\n"))
                }
                return String(decoding: bytes, as: UTF8.self)
            }
            texts.withLock { $0[p] = made }
        }
        return texts.withLock { $0.map { $0! } }
    }

    /// The lines of the first `linesAhead` results, made on other threads from the moment it
    /// is created: while the append writes its last rows and commits, the lines it will print
    /// are made on the processors that are otherwise idle then.
    final class FormattedLines: Sendable {
        let results: ArraySlice<AppendResult>
        private let box = Box()
        private let done = DispatchGroup()

        /// The texts, filled in once by the thread that makes them, read after `done`.
        private final class Box: @unchecked Sendable { var texts: [Result<String, LedgerError>] = [] }

        init(_ all: [AppendResult]) {
            let results = all[..<min(all.count, AppendCommand.linesAhead)]
            self.results = results
            done.enter()
            // The work holds the box, not `self`, so that `self` can be dropped (and wait) first.
            DispatchQueue.global(qos: .userInitiated).async { [box, done] in
                box.texts = AppendCommand.lineTexts(results)
                done.leave()
            }
        }

        /// The texts, waiting for them.
        func texts() -> [Result<String, LedgerError>] {
            done.wait()
            return box.texts
        }

        deinit {
            // A formatter dropped unread (the write ran again, or failed) still finishes first.
            done.wait()
        }
    }

    /// Appends the lines of `input` as one atomic batch, chunk by chunk in one write.
    /// `formatting` is handed a `FormattedLines` of the results once the last line has been
    /// written, before the write's last rows and its commit (again if the write runs again).
    static func append(
        _ input: inout ChunkedInput, to store: LedgerStore, expectedVersion: Int?, now: Instant,
        formatting: (FormattedLines) -> Void = { _ in }
    ) throws(LedgerError) -> [AppendResult] {
        let schema = try store.reading { $0.schema }
        // The input is read, like each chunk's lines, on the thread that parses it: one job at
        // a time holds it, each started once the one before has ended.
        let source = Unchecked(Source(input))
        defer { input = source.value.input }
        return try store.writing { writer in
            // The write runs again from its start when the store's file has to grow: so does the input.
            try source.value.input.rewind()
            var before = 0
            // Each chunk is read and parsed on other threads while the one before it is appended.
            // The first is parsed on every processor (the write waits for it); the others on all
            // but one, which is the write's: parsers that outnumber the free processors take the
            // write's turns, and the write, not the parse, sets the pace.
            let processors = ProcessInfo.processInfo.activeProcessorCount
            var ahead: ParsedChunk? = ParsedChunk(source, schema: schema, threads: processors)
            defer { ahead?.wait() }
            // The next chunk's drafts, each with its line in the input; the first line that is
            // not an event stops the read.
            func next() throws(LedgerError) -> [EventDraft]? {
                guard let current = ahead else { return nil }
                ahead = nil
                // One binding holds the chunk: no second copy keeps its drafts shared.
                guard case .some((var chunk, let last)) = try current.piece() else { return nil }
                if let (line, field, message) = chunk.error { throw LedgerError.invalidLine(before + line, field: field, message) }
                if !last { ahead = ParsedChunk(source, schema: schema, threads: max(1, processors - 1)) }
                // Taken out of the chunk, so that setting their lines changes them in place
                // instead of copying every draft.
                var drafts: [EventDraft] = []
                swap(&drafts, &chunk.drafts)
                for i in drafts.indices { drafts[i].line = before + chunk.lines[i] }
                before += chunk.lineCount
                return drafts
            }
            guard expectedVersion != nil else {
                return try writer.append(chunks: next, now: now, flushingEvery: LedgerStore.chunkedAppendProjectionEvents) {
                    formatting(FormattedLines($0))
                }
            }
            // An expected version is checked against the whole batch, so its drafts are gathered
            // and appended in one call; the input is still read chunk by chunk.
            var gathered: [EventDraft] = []
            while let drafts = try next() { gathered += drafts }
            return try writer.append(gathered, expectedVersion: expectedVersion, now: now)
        }
    }

    /// An input in chunks of about `size` bytes, each but the last ending with a line feed (a
    /// line longer than `size` makes a longer chunk); the last one ends the input, and is empty
    /// only for an empty input. Every input, even an empty one, gives at least one chunk.
    struct ChunkedInput {
        let size: Int
        /// Up to `n` more bytes of the input; empty at its end.
        let read: (Int) throws(LedgerError) -> Data
        /// Back to the input's start.
        let restart: () throws(LedgerError) -> Void
        var carry: [UInt8] = []
        var ended = false

        /// Every read passes through `lines`: a line longer than `lineBytesMaximum` ends the
        /// input with an error naming it, before more is read.
        init(size: Int, read: @escaping (Int) throws(LedgerError) -> Data, restart: @escaping () throws(LedgerError) -> Void) {
            let lines = LineLengths()
            self.size = size
            self.read = { (n) throws(LedgerError) in
                // In pieces of at most 1 MiB, each checked before the next is read.
                var data = Data()
                while data.count < n {
                    let piece = try read(min(n - data.count, 1 << 20))
                    if piece.isEmpty { break }
                    try lines.check(piece)
                    data += piece
                }
                return data
            }
            self.restart = { () throws(LedgerError) in
                try restart()
                lines.reset()
            }
        }

        /// The line being read and its length so far, across reads.
        final class LineLengths {
            var line = 1
            var length = 0

            func reset() {
                line = 1
                length = 0
            }

            func check(_ data: Data) throws(LedgerError) {
                data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                    guard let base = bytes.baseAddress else { return }
                    var start = 0
                    while start < bytes.count {
                        guard let found = memchr(base + start, 0x0A, bytes.count - start) else {
                            length += bytes.count - start
                            return
                        }
                        let end = base.distance(to: UnsafeRawPointer(found))
                        length += end - start
                        if length > AppendCommand.lineBytesMaximum { return }
                        start = end + 1
                        line += 1
                        length = 0
                    }
                }
                guard length <= AppendCommand.lineBytesMaximum else {
                    throw LedgerError.invalidLine(
                        line, field: nil, "the line is longer than \(AppendCommand.lineBytesMaximum) bytes (1 MiB), longer than any event")
                }
            }
        }

        /// An input held in memory.
        init(_ data: Data, size: Int) {
            final class Offset { var value = 0 }
            let offset = Offset()
            self.init(
                size: size,
                read: { n in
                    let end = n >= data.count - offset.value ? data.count : offset.value + n
                    defer { offset.value = end }
                    return data.subdata(in: offset.value..<end)
                },
                restart: { offset.value = 0 })
        }

        /// A file, read chunk by chunk: a regular file is read again from its start when the
        /// write starts over; anything else (a pipe, a device) keeps what it has read, to serve
        /// it again, and reads on only as far as the chunks are taken.
        init(file handle: FileHandle, named name: String, size: Int) throws(LedgerError) {
            func failed(_ error: any Error) -> LedgerError { LedgerError(.invalidInput, "cannot read \(name): \(error.localizedDescription)") }
            var info = stat()
            guard fstat(handle.fileDescriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                final class Kept {
                    var data = Data()
                    var offset = 0
                }
                let kept = Kept()
                self.init(
                    size: size,
                    read: { (n) throws(LedgerError) in
                        if kept.offset < kept.data.count {
                            let end = n >= kept.data.count - kept.offset ? kept.data.count : kept.offset + n
                            defer { kept.offset = end }
                            return kept.data.subdata(in: kept.offset..<end)
                        }
                        do {
                            let more = try handle.read(upToCount: n) ?? Data()
                            kept.data += more
                            kept.offset = kept.data.count
                            return more
                        } catch {
                            throw failed(error)
                        }
                    },
                    restart: { kept.offset = 0 })
                return
            }
            self.init(
                size: size,
                read: { (n) throws(LedgerError) in
                    guard n != Int.max else {
                        do { return try handle.readToEnd() ?? Data() } catch { throw failed(error) }
                    }
                    return try Self.read(upTo: n, from: handle.fileDescriptor, named: name)
                },
                restart: { () throws(LedgerError) in
                    do {
                        try handle.seek(toOffset: 0)
                    } catch {
                        throw failed(error)
                    }
                })
        }

        /// Up to `n` bytes of a regular file, fewer only at its end, in as few reads as the
        /// system allows (a `FileHandle` reads a page at a time).
        static func read(upTo n: Int, from fd: Int32, named name: String) throws(LedgerError) -> Data {
            guard n > 0 else { return Data() }
            var data = Data(count: n)
            var filled = 0
            let failure: Int32? = data.withUnsafeMutableBytes { buffer in
                while filled < n {
                    let got = Glibc.read(fd, buffer.baseAddress! + filled, n - filled)
                    if got < 0 {
                        if errno == EINTR { continue }
                        return errno
                    }
                    if got == 0 { break }
                    filled += got
                }
                return nil
            }
            if let failure {
                throw LedgerError(.invalidInput, "cannot read \(name): \(String(cString: strerror(failure)))")
            }
            data.count = filled
            return data
        }

        /// Back to the input's first chunk.
        mutating func rewind() throws(LedgerError) {
            try restart()
            carry = []
            ended = false
        }

        mutating func next() throws(LedgerError) -> (bytes: [UInt8], last: Bool)? {
            guard !ended else { return nil }
            var buffer = carry
            carry = []
            var scanned = 0
            while true {
                if let cut = buffer[scanned...].lastIndex(of: UInt8(ascii: "\n")) {
                    carry = Array(buffer[(cut + 1)...])
                    buffer.removeSubrange((cut + 1)...)
                    // A line feed at the input's very end makes this chunk the last: no empty
                    // chunk follows it (a batch with an expected version must stay one call).
                    if carry.isEmpty {
                        let ahead = try read(size)
                        if ahead.isEmpty {
                            ended = true
                            return (buffer, true)
                        }
                        carry = Array(ahead)
                    }
                    return (buffer, false)
                }
                scanned = buffer.count
                let more = try read(size)
                if more.isEmpty {
                    ended = true
                    return (buffer, true)
                }
                buffer += more
            }
        }
    }

    /// A result as its JSON line (the bytes `JSONWriter` gives its `json`), written directly:
    /// an append of many events prints as many lines.
    static func line(_ r: AppendResult) throws(LedgerError) -> String {
        var bytes: [UInt8] = []
        try writeLine(r, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends ``line(_:)``'s bytes to `out`.
    static func writeLine(_ r: AppendResult, into out: inout [UInt8]) throws(LedgerError) {
        guard r.position < 1_000_000_000_000_000 else {
            out.append(contentsOf: try JSONWriter.string(r.json).utf8)
            return
        }
        r.writeJSONLine(into: &out)
    }

    /// One event per non-blank line, with its line number; errors name the line number in the
    /// input (the first invalid line, as if read in order).
    static func parseLines(_ data: Data, schema: Int) throws(LedgerError) -> ([EventDraft], [Int]) {
        let piece = data.withUnsafeBytes { parseLines($0, schema: schema, endsInput: true) }
        if let (line, field, message) = piece.error { throw LedgerError.invalidLine(line, field: field, message) }
        return (piece.drafts, piece.lines)
    }

    /// The lines of `all`, numbered from 1, up to the first invalid one. Unless `endsInput`,
    /// `all` ends with a line feed after which no line begins. A large input is cut at line ends
    /// into pieces that are read in parallel on up to `threads` threads (default: as many as
    /// there are processors), a few pieces a thread; with one thread, on the caller's.
    static func parseLines(_ all: UnsafeRawBufferPointer, schema: Int, endsInput: Bool, threads: Int? = nil) -> Piece {
        let processors = ProcessInfo.processInfo.activeProcessorCount
        let width = max(1, min(threads ?? processors, processors))
        let pieces = Self.pieces(all, count: all.count < 1 << 20 || width == 1 ? 1 : width * 4)
        // `concurrentPerform` runs as many iterations at once as there are processors: fewer
        // threads take the pieces in `width` interleaved lots, one lot an iteration.
        let lots = min(width, pieces.count)
        var parsed = [Piece](repeating: Piece(), count: pieces.count)
        parsed.withUnsafeMutableBufferPointer { out in
            // Each iteration reads its own range of the input and writes its own slot.
            let input = Unchecked(all)
            let results = Unchecked(out)
            DispatchQueue.concurrentPerform(iterations: lots) { lot in
                for i in stride(from: lot, to: pieces.count, by: lots) {
                    results.value[i] = Self.parse(input.value, pieces[i], last: endsInput && i == pieces.count - 1, schema: schema)
                }
            }
        }
        var whole = Piece()
        whole.drafts.reserveCapacity(parsed.reduce(0) { $0 + $1.drafts.count })
        whole.lines.reserveCapacity(whole.drafts.capacity)
        for piece in parsed {
            if let (line, field, message) = piece.error {
                whole.error = (whole.lineCount + line, field, message)
                return whole
            }
            whole.drafts += piece.drafts
            whole.lines += piece.lines.lazy.map { whole.lineCount + $0 }
            whole.lineCount += piece.lineCount
        }
        return whole
    }

    /// The input of an append, held by one chunk's job at a time (`ParsedChunk`).
    final class Source {
        var input: ChunkedInput
        init(_ input: ChunkedInput) { self.input = input }
    }

    /// The next chunk of an input, read and its lines parsed (`parseLines`) on other threads from
    /// the moment it is made: nil at the input's end, or the read's error.
    final class ParsedChunk: @unchecked Sendable {
        private var parsed: Result<(Piece, last: Bool)?, LedgerError> = .success(nil)
        private var taken = false
        private let done = DispatchSemaphore(value: 0)

        /// Starts reading the next chunk of `source`, which no other job may hold until this
        /// one is waited for.
        init(_ source: Unchecked<Source>, schema: Int, threads: Int) {
            DispatchQueue.global(qos: .userInitiated).async { [self] in
                parsed = Result { () throws(LedgerError) -> (Piece, last: Bool)? in
                    guard let chunk = try source.value.input.next() else { return nil }
                    let piece = chunk.bytes.withUnsafeBytes {
                        AppendCommand.parseLines($0, schema: schema, endsInput: chunk.last, threads: threads)
                    }
                    return (piece, chunk.last)
                }
                done.signal()
            }
        }

        /// Waits until the chunk is read and parsed.
        func wait() {
            guard !taken else { return }
            done.wait()
            taken = true
        }

        /// The parsed lines and whether they end the input, waiting for them; nil at the input's
        /// end. They are handed over, not kept: a second call gives nil.
        func piece() throws(LedgerError) -> (Piece, last: Bool)? {
            wait()
            defer { parsed = .success(nil) }
            return try parsed.get()
        }
    }

    /// A value shared with other threads where the code, not the compiler, keeps their accesses
    /// apart: a buffer of which each parallel reader touches only its own part, or the input,
    /// which one chunk's job holds at a time (`Source`).
    struct Unchecked<T>: @unchecked Sendable {
        let value: T
        init(_ value: T) { self.value = value }
    }

    /// What one piece of the input gave: its events with their line numbers within the piece,
    /// how many lines it holds, and its first error (its line number within the piece).
    struct Piece {
        var drafts: [EventDraft] = []
        var lines: [Int] = []
        var lineCount = 0
        var error: (line: Int, field: String?, message: String)?
    }

    /// Cuts `all` into up to `count` ranges of about equal size, each ending just after a line
    /// feed (the last at the end of the input).
    static func pieces(_ all: UnsafeRawBufferPointer, count: Int) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var start = 0
        for k in 1..<max(1, count) {
            var cut = max(start, all.count * k / count)
            while cut < all.count, all[cut] != UInt8(ascii: "\n") { cut += 1 }
            guard cut < all.count else { break }
            out.append(start..<cut + 1)
            start = cut + 1
        }
        out.append(start..<all.count)
        return out
    }

    /// Reads the lines of one piece. A piece other than the last ends with a line feed, after
    /// which no line begins; the last one's final line may be empty (and is then skipped).
    static func parse(_ all: UnsafeRawBufferPointer, _ range: Range<Int>, last: Bool, schema: Int) -> Piece {
        var piece = Piece()
        // Each line's bytes, in one buffer kept from line to line: nothing holds a line's
        // bytes once its draft is made.
        var line: [UInt8] = []
        var start = range.lowerBound
        while last ? start <= range.upperBound : start < range.upperBound {
            // The line runs to the next line feed (or the end), without a carriage return.
            var end = start
            while end < range.upperBound, all[end] != UInt8(ascii: "\n") { end += 1 }
            let next = end + 1
            if end > start, all[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            piece.lineCount += 1
            let bytes = all[start..<end]
            start = next
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            do {
                line.removeAll(keepingCapacity: true)
                line.append(contentsOf: bytes)
                piece.drafts.append(try EventDraft(jsonText: line, schema: schema))
            } catch let e as JSONSyntaxError {
                piece.error = (piece.lineCount, nil, "malformed JSON: \(e)")
                return piece
            } catch let e as FieldError {
                piece.error = (piece.lineCount, e.field, e.message)
                return piece
            } catch {
                piece.error = (piece.lineCount, nil, "\(error)")
                return piece
            }
            piece.lines.append(piece.lineCount)
        }
        return piece
    }
}
