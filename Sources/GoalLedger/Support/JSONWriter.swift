/// Writes JSON with keys in the order they are given, so that equal values always produce the
/// same bytes. Numbers that are whole print without a fraction; others print in Swift's
/// shortest round-trip form. Writes UTF-8 bytes directly: digests of large projections are
/// computed over this output.
///
/// JSON has no infinity or NaN: a non-finite number is refused with an internal error (the
/// ledger's limits keep every number it computes finite, so that would be a bug), never
/// written as text that is not JSON.
public enum JSONWriter {
    /// `value` as compact JSON text; throws an ``LedgerError/Code/internal`` error for a
    /// non-finite number.
    public static func string(_ value: JSONValue) throws(LedgerError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        try write(value, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `value` as compact JSON, UTF-8, to `out`; throws as ``string(_:)`` does (what
    /// was written before the number stays in `out`).
    public static func write(_ value: JSONValue, into out: inout [UInt8]) throws(LedgerError) {
        switch value {
        case .null: out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(let b): out.append(contentsOf: b ? Array("true".utf8) : Array("false".utf8))
        case .number(let n): try writeNumber(n, into: &out)
        case .decimal(let t):
            guard isNumberText(t) else {
                throw LedgerError(.internal, "\"\(t.prefix(40))\" is not a JSON number and cannot be written as one; nothing was printed")
            }
            out.append(contentsOf: t.utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                try write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (key, item)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                try write(item, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// The JSON text of a value for a message: a non-finite number shows as Swift prints it.
    public static func message(_ value: JSONValue) -> String {
        (try? string(value)) ?? "\(value)"
    }

    /// Writes a finite number; a non-finite one is an internal error.
    static func writeNumber(_ n: Double, into out: inout [UInt8]) throws(LedgerError) {
        guard n.isFinite else {
            throw LedgerError(.internal, "a non-finite number (\(n)) cannot be written as JSON; nothing was printed")
        }
        out.append(contentsOf: number(n).utf8)
    }

    /// A finite number's JSON text (for a non-finite one, Swift's description: messages only).
    public static func number(_ n: Double) -> String {
        if n == n.rounded(), abs(n) < 1e15 {
            return String(Int64(n))
        }
        return "\(n)"
    }

    /// Whether `text` is a number in JSON's syntax: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isNumberText(_ text: String) -> Bool {
        let b = Array(text.utf8)
        var i = 0
        func digits() -> Int {
            let s = i
            while i < b.count, b[i] >= UInt8(ascii: "0") && b[i] <= UInt8(ascii: "9") { i += 1 }
            return i - s
        }
        if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
        if i < b.count, b[i] == UInt8(ascii: "0") {
            i += 1
        } else if digits() == 0 {
            return false
        }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { return false }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { return false }
        }
        return i == b.count
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            // Fast path: nothing to escape.
            if !bytes.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
                out.append(contentsOf: bytes)
                return
            }
            for b in bytes {
                switch b {
                case 0x22: out.append(contentsOf: [0x5C, 0x22])
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case ..<0x20:
                    out.append(contentsOf: Array("\\u00".utf8))
                    out.append(hexDigits[Int(b >> 4)])
                    out.append(hexDigits[Int(b & 0xF)])
                default: out.append(b)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
