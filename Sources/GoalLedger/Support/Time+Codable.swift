import Foundation

// The time values in the JSON forms the command line prints: an instant as RFC 3339 text in UTC,
// a day as `YYYY-MM-DD`, a clock reading as sixteen hex digits.

/// An instant encodes as its ``rfc3339`` text (`2026-11-02T07:00:00Z`, or with three digits of
/// milliseconds when they are not zero: `…T07:00:00.250Z`), so a round trip is exact.
///
/// Decoding reads any RFC 3339 timestamp the ledger's JSON input reads (other offsets are
/// converted to UTC; fractions finer than a millisecond are truncated) and refuses, naming the
/// key, text that is not one and an instant outside ``supported``. Encoding an instant outside
/// ``supported`` throws `EncodingError.invalidValue`.
extension Instant: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        guard let instant = Instant(rfc3339: text) else {
            throw DecodingError.ledgerField(c.codingPath, "must be an RFC 3339 instant, got \"\(text)\"")
        }
        do throws(FieldError) {
            self = try FieldRules.instant(instant, field: "")
        } catch {
            throw DecodingError.ledgerField(c.codingPath, error)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        guard Instant.supported.contains(self) else {
            throw EncodingError.invalidValue(
                self,
                EncodingError.Context(
                    codingPath: encoder.codingPath,
                    debugDescription:
                        "an instant must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z, got \(milliseconds) ms since 1970"
                ))
        }
        var c = encoder.singleValueContainer()
        try c.encode(rfc3339)
    }
}

/// A day encodes as `YYYY-MM-DD` (its ``description``). Decoding refuses, naming the key, text
/// that is not exactly that form, a date that does not exist (`2026-02-30`) and a day outside
/// ``supported``; encoding a day outside ``supported`` throws `EncodingError.invalidValue`.
extension Day: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        do throws(FieldError) {
            self = try Day(validating: text)
        } catch {
            throw DecodingError.ledgerField(c.codingPath, error)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        guard Day.supported.contains(self) else {
            throw EncodingError.invalidValue(
                self,
                EncodingError.Context(
                    codingPath: encoder.codingPath, debugDescription: "a day must be between 1970-01-01 and 9999-12-31, got \(self)"))
        }
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// A clock reading encodes as its ``description``: sixteen upper-case hex digits, which sort as
/// the clock does and survive JSON readers that lose precision past 2^53. Decoding refuses,
/// naming the key, anything but sixteen hex digits.
extension HLC: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        guard text.utf8.allSatisfy({ Hex.digit($0) != nil }), let hlc = HLC(hex: text) else {
            throw DecodingError.ledgerField(c.codingPath, "must be a clock reading of 16 hex digits, got \"\(text)\"")
        }
        self = hlc
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

extension DecodingError {
    /// A value the ledger refuses, at `codingPath`: the message starts with the value's path
    /// (`entries[0].amount must have at most 6 digits after the decimal point, …`).
    static func ledgerField(_ codingPath: [any CodingKey], _ message: String) -> DecodingError {
        .dataCorrupted(Context(codingPath: codingPath, debugDescription: "\(CodingPathText.text(codingPath)) \(message)"))
    }

    /// A value a field rule refused, at `codingPath`; an index in the rule's field name
    /// (`devices[1]`) is kept in the message.
    static func ledgerField(_ codingPath: [any CodingKey], _ error: FieldError) -> DecodingError {
        let index = error.field.flatMap { f in f.lastIndex(of: "[").map { String(f[$0...]) } } ?? ""
        return .dataCorrupted(
            Context(codingPath: codingPath, debugDescription: "\(CodingPathText.text(codingPath))\(index) \(error.message)"))
    }
}

/// A coding path as the ledger names fields: keys joined by dots, indexes in brackets
/// (`entries[0].amount`).
enum CodingPathText {
    static func text(_ path: [any CodingKey]) -> String {
        var out = ""
        for key in path {
            if let i = key.intValue {
                out += "[\(i)]"
            } else {
                if !out.isEmpty { out += "." }
                out += key.stringValue
            }
        }
        return out.isEmpty ? "value" : out
    }
}

/// A position in an array, for the coding path of an error about one element.
struct IndexCodingKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
