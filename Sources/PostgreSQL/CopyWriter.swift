import Foundation

/// Writes rows in PostgreSQL's binary COPY format: a signature, then per row its field count
/// and each field as a length (-1 for NULL) and its binary value, then a trailer. Integers are
/// big-endian; a uuid is its 16 bytes. Full pieces of the stream are handed to the connection
/// as they fill.
public struct CopyWriter {
    private var buffer: [UInt8] = []
    var sink: (([UInt8]) throws(PostgreSQLError) -> Void)?
    /// Rows are sent in pieces of about this many bytes.
    static let chunk = 1 << 18
    public private(set) var rows = 0

    init() { buffer.reserveCapacity(Self.chunk + 4096) }

    mutating func header() {
        buffer += Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]
        int32(0)  // flags
        int32(0)  // header extension length
    }

    /// Starts a row of `fields` values; each must then be written in column order.
    public mutating func row(fields: Int16) throws(PostgreSQLError) {
        if buffer.count >= Self.chunk { try flush() }
        appendBE(fields)
        rows += 1
    }

    public mutating func int64(_ v: Int64) {
        int32(8)
        appendBE(v)
    }

    public mutating func uuid(_ u: UUID) {
        int32(16)
        withUnsafeBytes(of: u.uuid) { buffer.append(contentsOf: $0) }
    }

    public mutating func text(_ s: String) {
        var s = s
        s.withUTF8 { b in
            int32(Int32(b.count))
            buffer.append(contentsOf: b)
        }
    }

    public mutating func bytes<C: Collection>(_ b: C) where C.Element == UInt8 {
        int32(Int32(b.count))
        buffer.append(contentsOf: b)
    }

    public mutating func null() { int32(-1) }

    mutating func finish() throws(PostgreSQLError) {
        appendBE(Int16(-1))
        try flush()
    }

    private mutating func flush() throws(PostgreSQLError) {
        guard !buffer.isEmpty else { return }
        try sink?(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private mutating func int32(_ v: Int32) { appendBE(v) }

    private mutating func appendBE<T: FixedWidthInteger>(_ v: T) {
        withUnsafeBytes(of: v.bigEndian) { buffer.append(contentsOf: $0) }
    }
}
