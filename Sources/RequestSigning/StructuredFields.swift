// Structured Field Values for HTTP, only as much as signatures and digests need: dictionaries whose
// members are items or inner lists, with parameters, and the bare items they carry. The parser is
// strict and bounded: anything it does not accept is an error naming what is wrong and where, and
// it never traps on its input.

/// A bare item: the value of a list member, an inner list's member or a parameter.
enum BareItem: Equatable, Sendable {
    /// An integer of at most 15 digits.
    case integer(Int64)
    /// A decimal, kept as its canonical serialization (at most 12 integer and 3 fractional digits).
    case decimal(String)
    /// A string of printable ASCII.
    case string(String)
    /// A token: an unquoted word such as `sha-256` or `*`.
    case token(String)
    /// A byte sequence, written `:base64:`.
    case bytes([UInt8])
    /// A boolean, written `?1` or `?0`.
    case boolean(Bool)
}

/// Parameters in the order they were written; keys are unique.
typealias SFParameters = [(key: String, value: BareItem)]

/// An item with its parameters.
struct SFItem: Sendable {
    var value: BareItem
    var parameters: SFParameters = []
}

/// A parenthesized list of items, with the list's own parameters.
struct SFInnerList: Sendable {
    var items: [SFItem]
    var parameters: SFParameters = []
}

/// A dictionary member's value.
enum SFMember: Sendable {
    case item(SFItem)
    case innerList(SFInnerList)
}

/// A dictionary in the order it was written; keys are unique.
typealias SFDictionary = [(key: String, member: SFMember)]

/// Why a structured field was refused, in words naming the field and the place.
struct StructuredFieldError: Error, Sendable {
    let message: String
}

extension SFParameters {
    /// The value of the parameter `key`, if present.
    func value(of key: String) -> BareItem? { first { $0.key == key }?.value }
}

extension SFDictionary {
    /// The member under `key`, if present.
    func member(_ key: String) -> SFMember? { first { $0.key == key }?.member }
}

/// A strict parser of structured field values over a field's bytes.
struct StructuredFieldParser {
    /// The longest field value accepted, in bytes.
    static let maxFieldBytes = 16_384
    /// The most members a dictionary may have.
    static let maxMembers = 64
    /// The most items an inner list may have.
    static let maxInnerListItems = 64
    /// The most parameters an item or inner list may have.
    static let maxParameters = 32

    private let field: String
    private let bytes: [UInt8]
    private var index = 0

    private init(field: String, bytes: [UInt8]) {
        self.field = field
        self.bytes = bytes
    }

    /// Parses `text`, the value of the field named `field` (used in messages), as a dictionary.
    static func dictionary(_ text: String, field: String) throws(StructuredFieldError) -> SFDictionary {
        let bytes = Array(text.utf8)
        guard bytes.count <= maxFieldBytes else {
            throw StructuredFieldError(message: "\(field) is \(bytes.count) bytes long, more than the \(maxFieldBytes) accepted")
        }
        var parser = StructuredFieldParser(field: field, bytes: bytes)
        return try parser.parseDictionary()
    }

    // MARK: Scanning

    private var atEnd: Bool { index >= bytes.count }
    private var peek: UInt8? { atEnd ? nil : bytes[index] }

    private func fail(_ what: String) -> StructuredFieldError {
        StructuredFieldError(message: "\(field) is malformed: \(what) at offset \(index)")
    }

    /// A readable name for the byte at the current position, for messages.
    private var here: String {
        guard let byte = peek else { return "the end of the field" }
        if byte >= 0x21 && byte <= 0x7E { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    private mutating func skipSpaces() {
        while peek == UInt8(ascii: " ") { index += 1 }
    }

    private mutating func skipOptionalWhitespace() {
        while peek == UInt8(ascii: " ") || peek == UInt8(ascii: "\t") { index += 1 }
    }

    // MARK: Structures

    private mutating func parseDictionary() throws(StructuredFieldError) -> SFDictionary {
        var dictionary: SFDictionary = []
        skipSpaces()
        if atEnd { return dictionary }
        while true {
            let key = try parseKey()
            let member: SFMember
            if peek == UInt8(ascii: "=") {
                index += 1
                member = try parseItemOrInnerList()
            } else {
                member = .item(SFItem(value: .boolean(true), parameters: try parseParameters()))
            }
            guard dictionary.member(key) == nil else { throw fail("the key \"\(key)\" appears twice") }
            guard dictionary.count < Self.maxMembers else { throw fail("more than \(Self.maxMembers) members") }
            dictionary.append((key, member))
            skipOptionalWhitespace()
            if atEnd { return dictionary }
            guard peek == UInt8(ascii: ",") else { throw fail("expected ',' after the member \"\(key)\" but found \(here)") }
            index += 1
            skipOptionalWhitespace()
            if atEnd { throw fail("a trailing ','") }
        }
    }

    private mutating func parseItemOrInnerList() throws(StructuredFieldError) -> SFMember {
        if peek == UInt8(ascii: "(") { return .innerList(try parseInnerList()) }
        return .item(try parseItem())
    }

    private mutating func parseInnerList() throws(StructuredFieldError) -> SFInnerList {
        index += 1  // "("
        var items: [SFItem] = []
        while !atEnd {
            skipSpaces()
            if peek == UInt8(ascii: ")") {
                index += 1
                return SFInnerList(items: items, parameters: try parseParameters())
            }
            guard items.count < Self.maxInnerListItems else { throw fail("an inner list of more than \(Self.maxInnerListItems) items") }
            items.append(try parseItem())
            guard peek == UInt8(ascii: " ") || peek == UInt8(ascii: ")") else {
                throw fail("expected ' ' or ')' in an inner list but found \(here)")
            }
        }
        throw fail("an inner list without its closing ')'")
    }

    private mutating func parseItem() throws(StructuredFieldError) -> SFItem {
        let value = try parseBareItem()
        return SFItem(value: value, parameters: try parseParameters())
    }

    private mutating func parseParameters() throws(StructuredFieldError) -> SFParameters {
        var parameters: SFParameters = []
        while peek == UInt8(ascii: ";") {
            index += 1
            skipSpaces()
            let key = try parseKey()
            var value = BareItem.boolean(true)
            if peek == UInt8(ascii: "=") {
                index += 1
                value = try parseBareItem()
            }
            guard parameters.value(of: key) == nil else { throw fail("the parameter \"\(key)\" appears twice") }
            guard parameters.count < Self.maxParameters else { throw fail("more than \(Self.maxParameters) parameters") }
            parameters.append((key, value))
        }
        return parameters
    }

    // MARK: Keys and bare items

    private static func isLowercaseLetter(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
    private static func isLetter(_ byte: UInt8) -> Bool { isLowercaseLetter(byte) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Whether `byte` may follow the first character of a key.
    static func isKeyCharacter(_ byte: UInt8) -> Bool {
        isLowercaseLetter(byte) || isDigit(byte) || "_-.*".utf8.contains(byte)
    }

    /// Whether `byte` may start a key.
    static func isKeyStart(_ byte: UInt8) -> Bool { isLowercaseLetter(byte) || byte == UInt8(ascii: "*") }

    /// Whether `byte` is one of HTTP's token characters.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }

    /// Whether `byte` may start a token.
    static func isTokenStart(_ byte: UInt8) -> Bool { isLetter(byte) || byte == UInt8(ascii: "*") }

    private mutating func parseKey() throws(StructuredFieldError) -> String {
        guard let first = peek, Self.isKeyStart(first) else {
            throw fail("expected a key (a lower-case letter or '*') but found \(here)")
        }
        let start = index
        index += 1
        while let byte = peek, Self.isKeyCharacter(byte) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func parseBareItem() throws(StructuredFieldError) -> BareItem {
        guard let byte = peek else { throw fail("expected a value but found the end of the field") }
        switch byte {
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: ":"): return .bytes(try parseByteSequence())
        case UInt8(ascii: "?"): return .boolean(try parseBoolean())
        default:
            guard Self.isTokenStart(byte) else { throw fail("expected a value but found \(here)") }
            return .token(parseToken())
        }
    }

    private mutating func parseNumber() throws(StructuredFieldError) -> BareItem {
        var negative = false
        if peek == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard let first = peek, Self.isDigit(first) else { throw fail("expected a digit but found \(here)") }
        var integerDigits: [UInt8] = []
        while let byte = peek, Self.isDigit(byte) {
            guard integerDigits.count < 15 else { throw fail("an integer of more than 15 digits") }
            integerDigits.append(byte)
            index += 1
        }
        guard peek == UInt8(ascii: ".") else {
            var value: Int64 = 0
            for digit in integerDigits { value = value * 10 + Int64(digit - UInt8(ascii: "0")) }
            return .integer(negative ? -value : value)
        }
        guard integerDigits.count <= 12 else { throw fail("a decimal of more than 12 integer digits") }
        index += 1
        var fraction: [UInt8] = []
        while let byte = peek, Self.isDigit(byte) {
            guard fraction.count < 3 else { throw fail("a decimal of more than 3 fractional digits") }
            fraction.append(byte)
            index += 1
        }
        guard !fraction.isEmpty else { throw fail("a decimal without fractional digits") }
        while fraction.count > 1 && fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        let integerPart = String(decoding: integerDigits, as: UTF8.self)
        let canonical = (negative ? "-" : "") + (Int64(integerPart).map(String.init) ?? integerPart) + "." + String(decoding: fraction, as: UTF8.self)
        return .decimal(canonical)
    }

    private mutating func parseString() throws(StructuredFieldError) -> String {
        let start = index
        index += 1  // opening quote
        var characters: [UInt8] = []
        while let byte = peek {
            index += 1
            switch byte {
            case UInt8(ascii: "\\"):
                guard let escaped = peek else { break }
                guard escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") else {
                    throw fail("a string escape other than \\\" or \\\\")
                }
                characters.append(escaped)
                index += 1
            case UInt8(ascii: "\""):
                return String(decoding: characters, as: UTF8.self)
            case 0x20...0x7E:
                characters.append(byte)
            default:
                index -= 1
                throw fail("\(here) inside a string (only printable ASCII is allowed)")
            }
        }
        index = start
        throw fail("a string without its closing '\"'")
    }

    private mutating func parseToken() -> String {
        let start = index
        index += 1
        while let byte = peek, Self.isTokenCharacter(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "/") { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func parseByteSequence() throws(StructuredFieldError) -> [UInt8] {
        let start = index
        index += 1  // opening colon
        let contentStart = index
        while let byte = peek, byte != UInt8(ascii: ":") {
            guard Base64.isAlphabet(byte) else { throw fail("\(here) inside a byte sequence (only base64 is allowed)") }
            index += 1
        }
        guard !atEnd else {
            index = start
            throw fail("a byte sequence without its closing ':'")
        }
        let content = Array(bytes[contentStart..<index])
        index += 1  // closing colon
        guard let decoded = Base64.decode(content) else {
            index = start
            throw fail("a byte sequence that is not canonical, padded base64")
        }
        return decoded
    }

    private mutating func parseBoolean() throws(StructuredFieldError) -> Bool {
        index += 1  // "?"
        switch peek {
        case UInt8(ascii: "1"):
            index += 1
            return true
        case UInt8(ascii: "0"):
            index += 1
            return false
        default:
            throw fail("expected '0' or '1' after '?' but found \(here)")
        }
    }
}

/// Writes structured field values in their one canonical form.
enum StructuredFieldSerializer {
    /// Whether `text` can be written as a structured string: printable ASCII only.
    static func isValidString(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
    }

    /// Whether `text` is a valid dictionary or parameter key.
    static func isValidKey(_ text: String) -> Bool {
        guard let first = text.utf8.first, StructuredFieldParser.isKeyStart(first) else { return false }
        return text.utf8.dropFirst().allSatisfy(StructuredFieldParser.isKeyCharacter)
    }

    /// `text` quoted, with `"` and `\` escaped; the caller has checked `isValidString`.
    static func string(_ text: String) -> String {
        var out = "\""
        for character in text.unicodeScalars {
            if character == "\"" || character == "\\" { out.append("\\") }
            out.unicodeScalars.append(character)
        }
        out.append("\"")
        return out
    }

    /// A bare item in its canonical form.
    static func bareItem(_ item: BareItem) -> String {
        switch item {
        case .integer(let value): return String(value)
        case .decimal(let canonical): return canonical
        case .string(let text): return string(text)
        case .token(let token): return token
        case .bytes(let bytes): return ":" + Base64.encode(bytes) + ":"
        case .boolean(let value): return value ? "?1" : "?0"
        }
    }

    /// Parameters, each `;key` or `;key=value` (a true boolean is written without its value).
    static func parameters(_ parameters: SFParameters) -> String {
        var out = ""
        for (key, value) in parameters {
            out += ";" + key
            if value != .boolean(true) { out += "=" + bareItem(value) }
        }
        return out
    }

    /// An item and its parameters.
    static func item(_ item: SFItem) -> String { bareItem(item.value) + parameters(item.parameters) }

    /// An inner list: its items separated by single spaces in parentheses, then its parameters.
    static func innerList(_ list: SFInnerList) -> String {
        "(" + list.items.map(item).joined(separator: " ") + ")" + parameters(list.parameters)
    }
}

/// A dictionary field read and written again in its canonical form: what the signature and
/// digest checks read of a field, for tests and the fuzz targets.
package enum StructuredFieldCanonical {
    /// The canonical serialization of `text` parsed as a dictionary; throws the parser's
    /// message when it does not parse.
    package static func dictionary(_ text: String) throws -> String {
        do {
            return StructuredFieldSerializer.dictionary(try StructuredFieldParser.dictionary(text, field: "the field"))
        } catch {
            throw RequestSignatureError(.malformedField, error.message)
        }
    }
}

extension StructuredFieldSerializer {
    /// A dictionary: members separated by `, `, each `key` (a true boolean with its
    /// parameters) or `key=` its item or inner list.
    static func dictionary(_ dictionary: SFDictionary) -> String {
        dictionary.map { key, member in
            switch member {
            case .item(let item) where item.value == .boolean(true): key + parameters(item.parameters)
            case .item(let item): key + "=" + self.item(item)
            case .innerList(let list): key + "=" + innerList(list)
            }
        }.joined(separator: ", ")
    }
}
