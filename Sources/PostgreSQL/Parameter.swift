import Foundation

/// A statement parameter, always sent in PostgreSQL's binary form: integers big-endian, a uuid
/// as its 16 bytes, text as UTF-8, arrays as one-dimensional binary arrays.
public enum Parameter: Sendable {
    case int64(Int64)
    case text(String)
    case bytea([UInt8])
    case uuid(UUID)
    case bool(Bool)
    case int64Array([Int64])
    case textArray([String])
    case uuidArray([UUID])
    case byteaArray([[UInt8]])
    case null

    enum OID {
        static let bool: UInt32 = 16
        static let bytea: UInt32 = 17
        static let int8: UInt32 = 20
        static let text: UInt32 = 25
        static let uuid: UInt32 = 2950
        static let int8Array: UInt32 = 1016
        static let textArray: UInt32 = 1009
        static let uuidArray: UInt32 = 2951
        static let byteaArray: UInt32 = 1001
    }

    var oid: UInt32 {
        switch self {
        case .int64: OID.int8
        case .text: OID.text
        case .bytea: OID.bytea
        case .uuid: OID.uuid
        case .bool: OID.bool
        case .int64Array: OID.int8Array
        case .textArray: OID.textArray
        case .uuidArray: OID.uuidArray
        case .byteaArray: OID.byteaArray
        case .null: 0
        }
    }

    /// The binary value, or nil for SQL NULL.
    var bytes: [UInt8]? {
        switch self {
        case .int64(let v): return v.bigEndianBytes
        case .text(let s): return Array(s.utf8)
        case .bytea(let b): return b
        case .uuid(let u): return u.bytes
        case .bool(let b): return [b ? 1 : 0]
        case .int64Array(let a): return Self.array(OID.int8, a.map(\.bigEndianBytes))
        case .textArray(let a): return Self.array(OID.text, a.map { Array($0.utf8) })
        case .uuidArray(let a): return Self.array(OID.uuid, a.map(\.bytes))
        case .byteaArray(let a): return Self.array(OID.bytea, a)
        case .null: return nil
        }
    }

    /// One-dimensional binary array: dimensions, null flag, element type, (size, lower bound),
    /// then each element as its length and bytes.
    private static func array(_ element: UInt32, _ items: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        out += Int32(items.isEmpty ? 0 : 1).bigEndianBytes
        out += Int32(0).bigEndianBytes
        out += Int32(bitPattern: element).bigEndianBytes
        if !items.isEmpty {
            out += Int32(items.count).bigEndianBytes
            out += Int32(1).bigEndianBytes
        }
        for item in items {
            out += Int32(item.count).bigEndianBytes
            out += item
        }
        return out
    }
}

extension FixedWidthInteger {
    var bigEndianBytes: [UInt8] { withUnsafeBytes(of: bigEndian) { Array($0) } }
}

extension UUID {
    var bytes: [UInt8] { withUnsafeBytes(of: uuid) { Array($0) } }
}
