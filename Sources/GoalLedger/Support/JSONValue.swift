/// A parsed JSON document. Objects keep their keys in input order; duplicate keys are refused
/// by the parser, so a key names exactly one value.
public enum JSONValue: Equatable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number; JSON does not tell integers apart.
    case number(Double)
    /// A number as decimal text in JSON's syntax, for a value a `Double` does not hold exactly:
    /// the parser gives one when a number's digits would be rounded by a `Double` or it is
    /// beyond a `Double`'s range (`999999999999.999999`, `1e400`), and amounts are written in
    /// this form (``Amount/description``: plain decimal, never an exponent). It compares equal
    /// to a `.number` of the same value.
    case decimal(String)
    /// A string.
    case string(String)
    /// An array, in order.
    case array([JSONValue])
    /// An object's members as key and value pairs, in input order.
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.decimal, .decimal), (.decimal, .number), (.number, .decimal):
            return lhs.decimalDigits.map { Decimal6Key($0) } == rhs.decimalDigits.map { Decimal6Key($0) }
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The member `key` of an object; nil when absent or when the value is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self {
            return members.first(where: { $0.0 == key })?.1
        }
        return nil
    }

    /// A short name of the value's JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number, .decimal: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

extension JSONValue {
    /// An amount: its exact decimal text (``decimal(_:)``).
    package static func amount(_ a: Amount) -> JSONValue { .decimal(a.description) }

    /// A number's text as an amount shows it (plain decimal, exact), for a number within an
    /// amount's range and precision; else the number's JSON text; nil for anything else.
    public var amountText: String? {
        switch self {
        case .number(let n):
            return (try? Amount(double: n, field: "amount"))?.description ?? (n.isFinite ? JSONWriter.number(n) : nil)
        case .decimal(let t): return (try? Amount(decimal: Array(t.utf8), field: "amount"))?.description ?? t
        default: return nil
        }
    }

    /// A number's sign and significant digits with the power of ten of the last one, for
    /// comparing two spellings of one value; nil for anything else.
    fileprivate var decimalDigits: (negative: Bool, digits: [UInt8], exponent: Int)? {
        let text: String
        switch self {
        case .number(let n): text = n.isFinite ? JSONWriter.number(n) : "\(n)"
        case .decimal(let t): text = t
        default: return nil
        }
        let d = JSONParser.significantDigits(Array(text.utf8))
        return (d.digits.isEmpty ? false : text.utf8.first == UInt8(ascii: "-"), d.digits, d.digits.isEmpty ? 0 : d.exponent)
    }
}

/// A number's value in a form `==` compares: zero has one spelling.
private struct Decimal6Key: Equatable {
    let negative: Bool
    let digits: [UInt8]
    let exponent: Int
    init(_ d: (negative: Bool, digits: [UInt8], exponent: Int)) {
        negative = d.negative
        digits = d.digits
        exponent = d.exponent
    }
}

/// Why a JSON text could not be parsed.
package struct JSONSyntaxError: Error, Equatable, CustomStringConvertible, Sendable {
    public let offset: Int
    public let reason: String
    public var description: String { "\(reason) at byte \(offset + 1)" }
}

/// A strict JSON parser (RFC 8259): no comments, no trailing commas, no duplicate keys, valid
/// UTF-8 only, bounded nesting. A number is never rounded: one a `Double` does not hold as
/// written is kept as its text (``JSONValue/decimal(_:)``).
package struct JSONParser {
    public static let maximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0

    public static func parse(_ text: some Collection<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        try parse(bytes: Array(text))
    }

    public static func parse(bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// A member's value as `members(of:)` gives it: parsed, or, for an ASCII string without
    /// escapes, where its bytes lie in the text (made a `String` only when read as one).
    package enum Member {
        case value(JSONValue)
        case text(Range<Int>)
    }

    /// The members of a text that holds one object, as `parse` would give them, with each ASCII
    /// string member without escapes left in the text: a reader of events makes no `String` of
    /// an id or a time. Nil when the text holds no object (`parse` says what it holds, or what
    /// is wrong); a malformed object is refused as `parse` refuses it.
    package static func members(of bytes: [UInt8]) throws(JSONSyntaxError) -> [(String, Member)]? {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "{") else { return nil }
        // An event line has a handful of members: room for them at once, not grown one by one.
        let members = try parser.parseMembers(depth: 0, capacity: 8) { (p: inout JSONParser) throws(JSONSyntaxError) -> Member in
            if let text = p.plainString() { return .text(text) }
            return .value(try p.parseValue(depth: 1))
        }
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return members
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func error(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(offset: index, reason: reason) }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth < Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    private mutating func literal(_ word: String) throws(JSONSyntaxError) {
        let w = word.utf8
        guard index + w.count <= bytes.count, bytes[index..<index + w.count].elementsEqual(w) else {
            throw error("invalid literal")
        }
        index += w.count
    }

    private mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        .object(try parseMembers(depth: depth, capacity: 4) { (p: inout JSONParser) throws(JSONSyntaxError) in try p.parseValue(depth: depth + 1) })
    }

    /// The members of the object at `index`, each value read by `value`; room for `capacity`
    /// of them is made before the first (an array grown from empty is allocated again at 1, 2,
    /// 4 and 8 members).
    private mutating func parseMembers<Value>(
        depth: Int, capacity: Int, value: (inout JSONParser) throws(JSONSyntaxError) -> Value
    ) throws(JSONSyntaxError) -> [(String, Value)] {
        index += 1
        var members: [(String, Value)] = []
        members.reserveCapacity(capacity)
        // Keys seen so far: a linear search while the object is small (event lines have a
        // dozen members), a set beyond that.
        var seen = Set<String>()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key string") }
            let key = try parseString()
            let duplicate: Bool
            if members.count < 16 {
                duplicate = members.contains { $0.0 == key }
            } else {
                if seen.isEmpty { seen = Set(members.map(\.0)) }
                duplicate = !seen.insert(key).inserted
            }
            guard !duplicate else { throw error("duplicate key \"\(key)\"") }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            members.append((key, try value(&self)))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input in an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return members
            }
            throw error("expected ',' or '}'")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input in an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            throw error("expected ',' or ']'")
        }
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let d = Hex.digit(bytes[index]) else { throw error("invalid \\u escape") }
            v = v << 4 | UInt32(d)
            index += 1
        }
        return v
    }

    /// The bytes of the string at `index` when it has no escape and is ASCII (its end found, the
    /// index moved past it); else nil, the index unmoved, for `parseString` to read it.
    private mutating func plainString() -> Range<Int>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        var end = index + 1
        var seen: UInt8 = 0
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
            seen |= bytes[end]
            end += 1
        }
        guard end < bytes.count, bytes[end] == UInt8(ascii: "\""), seen < 0x80 else { return nil }
        defer { index = end + 1 }
        return index + 1..<end
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1
        // Most strings have no escape: take them straight from the input.
        var end = index
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            guard let s = bytes.withUnsafeBytes({ String(utf8: UnsafeRawBufferPointer(rebasing: $0[index..<end])) }) else {
                index = end + 1
                throw error("invalid UTF-8 in a string")
            }
            index = end + 1
            return s
        }
        var out: [UInt8] = Array(bytes[index..<end])
        index = end
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let c = bytes[index]
            if c == UInt8(ascii: "\"") {
                index += 1
                break
            }
            if c < 0x20 { throw error("control character in a string") }
            if c != UInt8(ascii: "\\") {
                out.append(c)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { throw error("unterminated escape") }
            let e = bytes[index]
            index += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try parseHex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                    else { throw error("unpaired surrogate in \\u escape") }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw error("unpaired surrogate in \\u escape")
                }
                out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
            default: throw error("invalid escape")
            }
        }
        guard let s = out.withUnsafeBytes({ String(utf8: $0) }) else { throw error("invalid UTF-8 in a string") }
        return s
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        func digits(_ p: inout JSONParser) -> Int {
            let s = p.index
            while p.index < p.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(p.bytes[p.index]) { p.index += 1 }
            return p.index - s
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw error("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits(&self) == 0 {
            throw error("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw error("invalid number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw error("invalid number") }
        }
        // An integer of up to 15 digits is exact in a Double: no text conversion needed.
        let negative = bytes[start] == UInt8(ascii: "-")
        let first = negative ? start + 1 : start
        if index - first <= 15, !bytes[first..<index].contains(where: { $0 < UInt8(ascii: "0") || $0 > UInt8(ascii: "9") }) {
            let magnitude = bytes[first..<index].reduce(Int64(0)) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
            return .number(negative ? -Double(magnitude) : Double(magnitude))
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        // A number a Double holds as written is a `.number`; one whose digits a Double would
        // round, or beyond its range, keeps its text (`.decimal`): the reader of each field
        // decides (an amount reads it exactly, other numbers refuse it, naming the field).
        guard let value = Double(text), value.isFinite else { return .decimal(text) }
        let exactInteger = !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
            && Int64(text).map { abs(value) < 9.2e18 && Int64(value) == $0 } == true
        // Zero only when the text is zero: `1e-400` is no zero, however a Double rounds it.
        guard (value == 0 && Self.significantDigits(Array(text.utf8)).digits.isEmpty) || exactInteger
            || Self.significantDigits(Array(text.utf8)) == Self.significantDigits(Array(value.description.utf8))
        else {
            return .decimal(text)
        }
        return .number(value)
    }

    /// The significant digits of a decimal number's text and the power of ten of its last one
    /// (`12.50` and `1.25e1` both give "125", -1), for comparing two spellings of one value.
    static func significantDigits(_ text: [UInt8]) -> (digits: [UInt8], exponent: Int) {
        var digits: [UInt8] = []
        var exponent = 0
        var fraction = 0
        var i = 0
        var inFraction = false
        while i < text.count {
            let c = text[i]
            if c == UInt8(ascii: ".") {
                inFraction = true
            } else if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
                var sign = 1
                var value = 0
                i += 1
                while i < text.count {
                    if text[i] == UInt8(ascii: "-") { sign = -1 } else if text[i] >= UInt8(ascii: "0") && text[i] <= UInt8(ascii: "9") {
                        value = min(value * 10 + Int(text[i] - UInt8(ascii: "0")), 100_000)
                    }
                    i += 1
                }
                exponent = sign * value
                break
            } else if c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") {
                if !(digits.isEmpty && c == UInt8(ascii: "0")) { digits.append(c) }
                if inFraction { fraction += 1 }
            }
            i += 1
        }
        var power = exponent - fraction
        while digits.last == UInt8(ascii: "0") {
            digits.removeLast()
            power += 1
        }
        return (digits, power)
    }
}
