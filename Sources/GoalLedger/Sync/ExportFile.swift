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
        var writer = Writer(
            ledger: ledger, count: UInt64(records.count), piece: .max, capacity: 64 + records.reduce(0) { $0 + $1.count + 2 })
        for record in records { record.withUnsafeBytes { writer.append($0) { _ in } } }
        var file: [UInt8] = []
        writer.finish { file = $0 }
        return file
    }

    /// The file, handed to `write` a piece at a time (about `piece` bytes; the last with the
    /// trailer and the hash), hashed as it goes: the event count is stated up front, so that the
    /// file need not be held whole.
    struct Writer {
        private var w: ByteWriter
        private var hash = SHA256()
        private let piece: Int
        /// The records appended.
        private(set) var count: UInt64 = 0

        init(ledger: UUID, count: UInt64, piece: Int = 1 << 20, capacity: Int? = nil) {
            self.piece = piece
            w = ByteWriter(capacity: capacity ?? piece + (64 << 10))
            w.bytes.append(contentsOf: magic)
            w.u8(version)
            w.uuid(ledger)
            w.u64BE(count)
        }

        mutating func append<E: Error>(_ record: UnsafeRawBufferPointer, _ write: ([UInt8]) throws(E) -> Void) throws(E) {
            w.varint(UInt64(record.count))
            w.bytes.append(contentsOf: record)
            count += 1
            guard w.bytes.count >= piece else { return }
            hash.update(w.bytes)
            try write(w.bytes)
            w.bytes.removeAll(keepingCapacity: true)
        }

        /// Hands over what is left, with the trailer and the hash.
        mutating func finish<E: Error>(_ write: ([UInt8]) throws(E) -> Void) throws(E) {
            hash.update(w.bytes)
            w.bytes.append(contentsOf: trailer)
            w.bytes.append(contentsOf: hash.finalize())
            try write(w.bytes)
            w.bytes = []
        }
    }

    /// Reads a whole file; every problem is an invalid-input error naming what is wrong.
    /// (``Opened`` reads a file for an import without holding it.)
    public static func decode(_ bytes: [UInt8], name: String) throws(LedgerError) -> (ledger: UUID, events: [Event], records: [[UInt8]]) {
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
