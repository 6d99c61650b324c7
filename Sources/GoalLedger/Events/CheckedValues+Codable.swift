import Foundation

/// An amount encodes as a JSON number: its value, which `JSONEncoder` writes in the shortest
/// form that reads back as the same number (`0.3`, `2.5`, `1000000`), as the ledger's JSON
/// writer does. Decoding applies the ledger's rule (finite, within ±1e12, at most six digits
/// after the point) and refuses, naming the key, a number that breaks it.
extension Amount: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let value = try c.decode(Double.self)
        do throws(FieldError) {
            self = try Amount(value)
        } catch {
            throw DecodingError.ledgerField(c.codingPath, error)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(value)
    }
}

/// A reminder time encodes as `{"hour","minute"}`; decoding refuses, naming the key, an hour
/// outside 0…23 or a minute outside 0…59.
extension ReminderTime: Codable {
    enum CodingKeys: String, CodingKey {
        case hour, minute
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self = try ReminderTime(from: c)
    }

    /// The time in `c`, whose other keys (a goal's reminder has `devices`) are the caller's.
    init<K: CodingKey>(from c: KeyedDecodingContainer<K>, hour: K, minute: K) throws {
        let h = try c.decode(Int.self, forKey: hour)
        let m = try c.decode(Int.self, forKey: minute)
        do throws(FieldError) {
            self = try ReminderTime(hour: h, minute: m)
        } catch {
            throw DecodingError.ledgerField(c.codingPath + [error.field == "minute" ? minute : hour], error)
        }
    }

    private init(from c: KeyedDecodingContainer<CodingKeys>) throws {
        try self.init(from: c, hour: .hour, minute: .minute)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(hour, forKey: .hour)
        try c.encode(minute, forKey: .minute)
    }
}

/// A progress kind encodes as its raw value, `outcome` or `measurable`.
extension ProgressKind: Codable {}
