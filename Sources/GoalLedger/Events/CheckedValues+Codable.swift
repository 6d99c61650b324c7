import Foundation

/// An amount encodes as a JSON number with its exact digits (a `Decimal`, which `JSONEncoder`
/// writes digit for digit: `0.3`, `2.5`, `1000000`, `0.000001`). Decoding reads the number as
/// a `Decimal` (every digit the text has) and applies the ledger's rule (within ±1e12, at most
/// six digits after the point), refusing, naming the key, a number that breaks it.
extension Amount: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let value = try c.decode(Decimal.self)
        do throws(FieldError) {
            guard value.isFinite else { throw FieldError("amount", "must be a number between -1e12 and 1e12, got \(value)") }
            self = try Amount(decimal: Array(value.description.utf8), field: "amount")
        } catch {
            throw DecodingError.ledgerField(c.codingPath, error)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(Decimal(string: description, locale: Locale(identifier: "en_US_POSIX"))!)
    }
}

/// A reminder time encodes as `{"hour","minute","weekday"?}` (`weekday` only when chosen);
/// decoding refuses, naming the key, an hour outside 0…23, a minute outside 0…59 or a weekday
/// outside 1…7.
extension ReminderTime: Codable {
    enum CodingKeys: String, CodingKey {
        case hour, minute, weekday
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self = try ReminderTime(from: c)
    }

    /// The time in `c`, whose other keys (a goal's reminder has `devices`) are the caller's.
    init<K: CodingKey>(from c: KeyedDecodingContainer<K>, hour: K, minute: K, weekday: K) throws {
        let h = try c.decode(Int.self, forKey: hour)
        let m = try c.decode(Int.self, forKey: minute)
        let w = try c.decodeIfPresent(Int.self, forKey: weekday)
        do throws(FieldError) {
            self = try ReminderTime(weekday: w, hour: h, minute: m)
        } catch {
            let key = [("minute", minute), ("weekday", weekday)].first { $0.0 == error.field }?.1 ?? hour
            throw DecodingError.ledgerField(c.codingPath + [key], error)
        }
    }

    private init(from c: KeyedDecodingContainer<CodingKeys>) throws {
        try self.init(from: c, hour: .hour, minute: .minute, weekday: .weekday)
    }

    /// Writes `hour`, `minute` and, when chosen, `weekday` into `c`.
    func encodeMembers<K: CodingKey>(into c: inout KeyedEncodingContainer<K>, hour: K, minute: K, weekday: K) throws {
        try c.encode(self.hour, forKey: hour)
        try c.encode(self.minute, forKey: minute)
        try c.encodeIfPresent(self.weekday, forKey: weekday)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try encodeMembers(into: &c, hour: .hour, minute: .minute, weekday: .weekday)
    }
}

/// A progress kind encodes as its raw value, `outcome` or `measurable`.
extension ProgressKind: Codable {}
