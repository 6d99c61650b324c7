import Foundation

/// Limits of the JSON form, also stated in `Schemas/events.v2.schema.json`.
public enum EventLimits {
    /// A goal's title, in characters (and not blank).
    public static let titleLength = 1...200
    /// A goal's details, in characters.
    public static let detailsMaximum = 2000
    /// A measurable goal's unit, in characters (and not blank).
    public static let unitLength = 1...32
    /// One tag, in characters (and not blank).
    public static let tagLength = 1...64
    /// The tags a `goalCreated` may carry.
    public static let tagsMaximum = 32
    /// A device's locale identifier (`en`, `en_US`, `zh_Hant_TW`), in characters.
    public static let localeLength = 2...35
    /// The largest magnitude of an amount or a target.
    public static let magnitude = 1e12
    /// The most digits an amount or a target may have after the decimal point.
    public static let fractionDigits = 6
    /// Devices a reminder may name.
    public static let reminderDevices = 1...32
}

/// Reads the members of one JSON object, remembering which were used so that any other
/// member can be refused as unknown.
package struct ObjectReader {
    package let path: String
    private let members: [(String, JSONParser.Member)]
    /// The text the members' `.text` values lie in.
    private let text: [UInt8]
    /// The members read so far, by index: a bit each for the first 64, a set beyond.
    private var used: UInt64 = 0
    private var usedBeyond = Set<Int>()

    package init(_ value: JSONValue, path: String) throws(FieldError) {
        guard case .object(let m) = value else {
            throw FieldError(path.isEmpty ? nil : path, "must be an object, got \(value.typeName)")
        }
        self.members = m.map { ($0.0, .value($0.1)) }
        self.text = []
        self.path = path
    }

    /// The members of an object as `JSONParser.members(of:)` read them from `text`.
    package init(members: [(String, JSONParser.Member)], in text: [UInt8]) {
        self.members = members
        self.text = text
        self.path = ""
    }

    package func name(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    /// The member `key`, marked as read.
    private mutating func member(_ key: String) -> JSONParser.Member? {
        guard let i = members.firstIndex(where: { $0.0 == key }) else { return nil }
        if i < 64 { used |= 1 << UInt64(i) } else { usedBeyond.insert(i) }
        return members[i].1
    }

    /// A member's text as a string.
    private func string(_ range: Range<Int>) -> String { String(decoding: text[range], as: UTF8.self) }

    package mutating func raw(_ key: String) -> JSONValue? {
        switch member(key) {
        case nil: return nil
        case .value(let v): return v
        case .text(let range): return .string(string(range))
        }
    }

    package func has(_ key: String) -> Bool { members.contains(where: { $0.0 == key }) }

    /// Refuses members that no reader asked for.
    package func finish() throws(FieldError) {
        for (i, (key, _)) in members.enumerated() where i < 64 ? used & 1 << UInt64(i) == 0 : !usedBeyond.contains(i) {
            throw FieldError(name(key), "unknown field")
        }
    }

    /// A string member: its bytes in the text, or the string the parser made.
    private enum StringMember {
        case text(Range<Int>)
        case string(String)
    }

    /// The member `key` when it is a string; nil when absent (refused when `required`).
    private mutating func stringMember(_ key: String, required: Bool) throws(FieldError) -> StringMember? {
        switch member(key) {
        case nil:
            if required { throw FieldError(name(key), "is required") }
            return nil
        case .text(let range): return .text(range)
        case .value(let v):
            guard case .string(let s) = v else { throw FieldError(name(key), "must be a string, got \(v.typeName)") }
            return .string(s)
        }
    }

    private func string(_ m: StringMember) -> String {
        switch m {
        case .text(let range): return string(range)
        case .string(let s): return s
        }
    }

    /// A string member read from its bytes by `parse`, else, as a string, by `parseString`
    /// (which names what is wrong).
    package mutating func parsed<T>(
        _ key: String, required: Bool = false, bytes parse: (UnsafeBufferPointer<UInt8>) -> T?,
        string parseString: (String) throws(FieldError) -> T
    ) throws(FieldError) -> T? {
        guard let m = try stringMember(key, required: required) else { return nil }
        if case .text(let range) = m, let value = text.withUnsafeBufferPointer({ parse(UnsafeBufferPointer(rebasing: $0[range])) }) {
            return value
        }
        return try parseString(string(m))
    }

    package mutating func string(_ key: String, required: Bool = false) throws(FieldError) -> String? {
        try stringMember(key, required: required).map(string)
    }

    /// A string that may be JSON null: `.some(nil)` for null.
    package mutating func nullableString(_ key: String) throws(FieldError) -> String?? {
        guard let v = raw(key) else { return nil }
        if case .null = v { return .some(nil) }
        guard case .string(let s) = v else { throw FieldError(name(key), "must be a string or null, got \(v.typeName)") }
        return .some(s)
    }

    package mutating func uuid(_ key: String, required: Bool = false) throws(FieldError) -> UUID? {
        let field = name(key)
        return try parsed(key, required: required, bytes: UUID.parse(utf8:)) { (s) throws(FieldError) in
            guard let id = UUID.parse(s) else { throw FieldError(field, "must be a UUID, got \"\(s)\"") }
            return id
        }
    }

    package mutating func number(_ key: String) throws(FieldError) -> Double? {
        guard let v = raw(key) else { return nil }
        if case .decimal(let t) = v {
            throw FieldError(name(key), "must be a number a 64-bit float holds as written, got \(Amount.shown(Array(t.utf8)))")
        }
        guard case .number(let n) = v else { throw FieldError(name(key), "must be a number, got \(v.typeName)") }
        return n
    }

    /// An amount or a target, read exactly from the number's decimal text: at most six digits
    /// after the point (trailing zeros aside) and within ±1e12, else refused naming the field.
    package mutating func amount(_ key: String) throws(FieldError) -> Amount? {
        guard let v = raw(key) else { return nil }
        switch v {
        case .number(let n): return try Amount(double: n, field: name(key))
        case .decimal(let t): return try Amount(decimal: Array(t.utf8), field: name(key))
        default: throw FieldError(name(key), "must be a number, got \(v.typeName)")
        }
    }

    /// A whole number (its range is the gate's to check).
    package mutating func integer(_ key: String) throws(FieldError) -> Int? {
        guard let v = raw(key) else { return nil }
        if case .decimal(let t) = v { throw FieldError(name(key), "must be an integer, got \(Amount.shown(Array(t.utf8)))") }
        guard case .number(let n) = v else { throw FieldError(name(key), "must be an integer, got \(v.typeName)") }
        guard n == n.rounded(), abs(n) < 1e15, let i = Int(exactly: n) else {
            throw FieldError(name(key), "must be an integer, got \(JSONWriter.number(n))")
        }
        return i
    }

    /// A whole number within `range`, for formats other than events (whose ranges the gate
    /// checks).
    package mutating func integer(_ key: String, in range: ClosedRange<Int>) throws(FieldError) -> Int? {
        guard let i = try integer(key) else { return nil }
        try FieldRules.integer(i, in: range, field: name(key))
        return i
    }

    /// An array of strings (device names, tags), or nil when absent.
    package mutating func strings(_ key: String, of what: String) throws(FieldError) -> [String]? {
        guard let raw = raw(key) else { return nil }
        guard case .array(let items) = raw else { throw FieldError(name(key), "must be an array of \(what), got \(raw.typeName)") }
        var out: [String] = []
        out.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            guard case .string(let s) = item else { throw FieldError("\(name(key))[\(i)]", "must be a string, got \(item.typeName)") }
            out.append(s)
        }
        return out
    }

    /// The `goal` member every goal event has.
    package mutating func goal() throws(FieldError) -> UUID { try uuid("goal", required: true)! }

    package mutating func bool(_ key: String) throws(FieldError) -> Bool? {
        guard let v = raw(key) else { return nil }
        guard case .bool(let b) = v else { throw FieldError(name(key), "must be true or false, got \(v.typeName)") }
        return b
    }

    package mutating func day(_ key: String) throws(FieldError) -> Day? {
        guard let s = try string(key) else { return nil }
        return try Self.parseDay(s, field: name(key))
    }

    package mutating func nullableDay(_ key: String) throws(FieldError) -> Day?? {
        guard let s = try nullableString(key) else { return nil }
        guard let s else { return .some(nil) }
        return .some(try Self.parseDay(s, field: name(key)))
    }

    package static func parseDay(_ s: String, field: String) throws(FieldError) -> Day {
        guard let d = Day(iso: s) else { throw FieldError(field, "must be a real date as YYYY-MM-DD, got \"\(s)\"") }
        return d
    }

    package mutating func instant(_ key: String) throws(FieldError) -> Instant? {
        let field = name(key)
        return try parsed(key, bytes: Instant.init(rfc3339:)) { (s) throws(FieldError) in
            guard let i = Instant(rfc3339: s) else { throw FieldError(field, "must be an RFC 3339 instant, got \"\(s)\"") }
            return i
        }
    }

    package mutating func enumeration<E: RawRepresentable & CaseIterable>(_ key: String, _: E.Type) throws(FieldError) -> E?
    where E.RawValue == String {
        guard let s = try string(key) else { return nil }
        guard let e = E(rawValue: s) else {
            let names = E.allCases.map(\.rawValue).joined(separator: ", ")
            throw FieldError(name(key), "must be one of \(names), got \"\(s)\"")
        }
        return e
    }
}

extension EventDraft {
    /// Decodes one event in the JSON form of a schema's catalog (default: the current one) and
    /// passes it through the gate (`checkWellFormed()`). Refuses unknown types and fields, wrong
    /// types and out-of-range values, naming the field; an event of the other schema is refused
    /// with a message naming its replacement.
    public init(json: JSONValue, schema: Int = LedgerStore.currentSchema) throws(FieldError) {
        var r = try ObjectReader(json, path: "")
        try self.init(reading: &r, schema: schema)
    }

    /// Decodes one event from its JSON text, as `init(json:schema:)` decodes the value `JSONParser`
    /// reads from it, with the same errors (a `JSONSyntaxError` or a `FieldError`), but without
    /// making a `String` of each id and time on the way.
    package init(jsonText text: [UInt8], schema: Int = LedgerStore.currentSchema) throws {
        guard let members = try JSONParser.members(of: text) else {
            self = try EventDraft(json: JSONParser.parse(bytes: text), schema: schema)
            return
        }
        var r = ObjectReader(members: members, in: text)
        try self.init(reading: &r, schema: schema)
    }

    private init(reading r: inout ObjectReader, schema: Int) throws(FieldError) {
        // Matched from the line's bytes: most type names are longer than a string holds inline.
        let named = try r.parsed("type", required: true, bytes: EventType.init(utf8:)) { (name) throws(FieldError) in
            guard let type = EventType(name: name) else { throw FieldError("type", "unknown event type \"\(name)\"") }
            return type
        }
        guard let type = named else { throw FieldError("type", "is required") }
        try type.checkInCatalog(schema: schema)
        let id = try r.uuid("id")
        let at = try r.instant("at")
        let payload = try type.make(&r)
        try r.finish()
        self.init(id: id, at: at, payload: payload)
        try checkWellFormed()
        passedGate = true
    }

    /// Decodes one line of text (JSON), naming the line in every error.
    public init(line: String, number: Int, schema: Int = LedgerStore.currentSchema) throws(LedgerError) {
        do {
            self = try EventDraft(jsonText: Array(line.utf8), schema: schema)
            self.line = number
        } catch let e as JSONSyntaxError {
            throw LedgerError.invalidLine(number, field: nil, "malformed JSON: \(e)")
        } catch let e as FieldError {
            throw LedgerError.invalidLine(number, field: e.field, e.message)
        } catch {
            throw LedgerError.invalidLine(number, field: nil, "\(error)")
        }
    }
}

/// The payload's members of an event's JSON form: the payload type reads them.
extension ObjectReader: PayloadMaker {
    mutating func make<P: EventPayload>(_: P.Type) throws(FieldError) -> P { try P(json: &self) }
}
