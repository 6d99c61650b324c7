import Foundation

/// The byte form of a ``ChangeSet``: the file `ledger export` writes and `ledger import` reads,
/// and what every transport carries.
///
///     "GOALLEDG" · file version (1) · ledger id (16) · event count (u64 BE)
///     count × ( record length (varint) · `EventCodec` record )
///     "END!" · SHA-256 of everything before it (32)
///
/// Each record carries its own checksum; the trailer's hash covers the whole file, so a
/// truncated or altered file is refused before anything is imported.
package enum ExportFile {
    static let magic = Array("GOALLEDG".utf8)
    static let trailer = Array("END!".utf8)
    static let version: UInt8 = 1

    public static func encode(ledger: UUID, events: [Event]) -> [UInt8] {
        encode(ledger: ledger, records: events.map(EventCodec.encode))
    }

    /// The bytes of `records` (stored event records, as they are) of `ledger`.
    public static func encode(ledger: UUID, records: [[UInt8]]) -> [UInt8] {
        var encoder = Encoder(ledger: ledger, capacity: 64 + records.reduce(0) { $0 + $1.count + 2 })
        for record in records { record.withUnsafeBytes { encoder.append($0) } }
        return encoder.finish()
    }

    /// The file's bytes, written record by record: one record need not be kept beside the next.
    struct Encoder {
        private var w: ByteWriter
        private let countOffset: Int
        private(set) var count: UInt64 = 0

        init(ledger: UUID, capacity: Int = 64) {
            w = ByteWriter(capacity: capacity)
            w.bytes.append(contentsOf: magic)
            w.u8(version)
            w.uuid(ledger)
            countOffset = w.bytes.count
            w.u64BE(0)
        }

        mutating func append(_ record: UnsafeRawBufferPointer) {
            w.varint(UInt64(record.count))
            w.bytes.append(contentsOf: record)
            count += 1
        }

        /// The whole file: the count written in its place, then the trailer and the hash.
        mutating func finish() -> [UInt8] {
            for i in 0..<8 { w.bytes[countOffset + i] = UInt8(truncatingIfNeeded: count >> UInt64(56 - 8 * i)) }
            w.bytes.append(contentsOf: trailer)
            var hash = SHA256()
            hash.update(w.bytes.dropLast(trailer.count))
            w.bytes.append(contentsOf: hash.finalize())
            return w.bytes
        }
    }

    /// The file written to a sink a piece at a time (about 1 MiB), hashed as it goes: the event
    /// count is stated up front, so that the file is never held whole.
    struct Writer {
        private var w = ByteWriter(capacity: (1 << 20) + (64 << 10))
        private var hash = SHA256()
        /// The records appended.
        private(set) var count: UInt64 = 0

        init(ledger: UUID, count: UInt64) {
            w.bytes.append(contentsOf: magic)
            w.u8(version)
            w.uuid(ledger)
            w.u64BE(count)
        }

        mutating func append(_ record: UnsafeRawBufferPointer, to sink: borrowing AtomicFile.Sink) throws(AtomicFile.Failure) {
            w.varint(UInt64(record.count))
            w.bytes.append(contentsOf: record)
            count += 1
            if w.bytes.count >= 1 << 20 { try flush(to: sink) }
        }

        private mutating func flush(to sink: borrowing AtomicFile.Sink) throws(AtomicFile.Failure) {
            hash.update(w.bytes)
            try sink.write(w.bytes)
            w.bytes.removeAll(keepingCapacity: true)
        }

        /// Writes what is left, the trailer and the hash.
        mutating func finish(to sink: borrowing AtomicFile.Sink) throws(AtomicFile.Failure) {
            try flush(to: sink)
            try sink.write(trailer + hash.finalize())
        }
    }

    /// Reads a whole file; every problem is an invalid-input error naming what is wrong. Once the
    /// file's checksum holds, `ledger` may refuse the ledger its header names, before any record
    /// is decoded.
    public static func decode(
        _ bytes: [UInt8], name: String, ledger check: ((UUID) throws(LedgerError) -> Void)? = nil
    ) throws(LedgerError) -> (ledger: UUID, events: [Event], records: [[UInt8]]) {
        func bad(_ why: String) -> LedgerError { LedgerError(.invalidInput, "\(name) is not a usable export: \(why)") }
        guard bytes.count >= magic.count + 1 + 16 + 8 + trailer.count + 32, Array(bytes.prefix(magic.count)) == magic else {
            throw bad("it does not start like a ledger export, or is truncated")
        }
        let bodyEnd = bytes.count - 32 - trailer.count
        guard Array(bytes[bodyEnd..<bodyEnd + trailer.count]) == trailer else { throw bad("it is truncated (no trailer)") }
        var hash = SHA256()
        hash.update(bytes[..<bodyEnd])
        guard hash.finalize() == Array(bytes[(bodyEnd + trailer.count)...]) else {
            throw bad("its checksum does not match (altered or damaged)")
        }
        if let check {
            try check(bytes[(magic.count + 1)..<(magic.count + 17)].withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
        }
        let result: Result<(UUID, [Event], [[UInt8]]), RecordDecodingError> = bytes.withUnsafeBytes { raw in
            do throws(RecordDecodingError) {
                return .success(try body(UnsafeRawBufferPointer(rebasing: raw[..<bodyEnd])))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let v): return (v.0, v.1, v.2)
        case .failure(let e): throw bad(e.reason)
        }
    }

    private static func body(_ raw: UnsafeRawBufferPointer) throws(RecordDecodingError) -> (UUID, [Event], [[UInt8]]) {
        var r = ByteReader(raw)
        r.index = magic.count
        let v = try r.u8()
        guard v == version else { throw RecordDecodingError(reason: "file version \(v) is not supported") }
        let ledger = try r.uuid()
        let count = try r.u64BE()
        guard count <= UInt64(raw.count) else { throw RecordDecodingError(reason: "the event count is impossible") }
        var events: [Event] = []
        events.reserveCapacity(Int(count))
        var records: [[UInt8]] = []
        records.reserveCapacity(Int(count))
        for i in 0..<count {
            let length = Int(clamping: try r.varint())
            guard length <= r.bytes.count - r.index else { throw RecordDecodingError(reason: "record \(i + 1) is truncated") }
            let record = UnsafeRawBufferPointer(rebasing: r.bytes[r.index..<r.index + length])
            r.index += length
            do throws(RecordDecodingError) {
                events.append(try EventCodec.decode(record))
                records.append(Array(record))
            } catch {
                throw RecordDecodingError(reason: "record \(i + 1): \(error.reason)")
            }
        }
        guard r.isAtEnd else { throw RecordDecodingError(reason: "bytes after the last record") }
        return (ledger, events, records)
    }
}
