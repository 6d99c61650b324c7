import CLibPQ
import Foundation

/// The rows a statement returned. Values of statements run by `Connection.query` are in binary
/// form (integers big-endian, a uuid its 16 bytes); those of `Connection.execute` are text.
public final class QueryResult {
    private let result: OpaquePointer

    init(_ result: OpaquePointer) { self.result = result }
    deinit { PQclear(result) }

    public var rowCount: Int { Int(PQntuples(result)) }
    public var columnCount: Int { Int(PQnfields(result)) }
    /// The number of rows an INSERT, UPDATE, DELETE or COPY affected.
    public var affectedRows: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    public func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(result, Int32(row), Int32(column)) != 0 }

    /// The raw bytes of a value, without copying them out of the result.
    public func withBytes<R, E: Error>(_ row: Int, _ column: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        let start = PQgetvalue(result, Int32(row), Int32(column))
        return try body(UnsafeRawBufferPointer(start: start, count: length))
    }

    public func bytes(_ row: Int, _ column: Int) -> [UInt8] { withBytes(row, column) { Array($0) } }

    /// A text value (in either form: text is sent as UTF-8 both ways).
    public func string(_ row: Int, _ column: Int) -> String { withBytes(row, column) { String(decoding: $0, as: UTF8.self) } }

    /// A binary `int8` (or `int4`, `int2`) value.
    public func int64(_ row: Int, _ column: Int) -> Int64 {
        withBytes(row, column) { b in
            guard !b.isEmpty else { return 0 }
            // Sign-extended from the first byte, so int2 and int4 read right too.
            var v = Int64(Int8(bitPattern: b[0]))
            for byte in b.dropFirst() { v = v << 8 | Int64(byte) }
            return v
        }
    }

    /// A binary `uuid` value.
    public func uuid(_ row: Int, _ column: Int) -> UUID? {
        withBytes(row, column) { b in
            guard b.count == 16 else { return nil }
            return UUID(uuid: b.loadUnaligned(as: uuid_t.self))
        }
    }

    /// A binary `bool` value.
    public func bool(_ row: Int, _ column: Int) -> Bool { withBytes(row, column) { $0.first == 1 } }
}
