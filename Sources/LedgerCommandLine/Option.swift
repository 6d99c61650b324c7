import Foundation
import GoalLedger

/// An option a command declares once, as a static property: its name, placeholder and help
/// (which the parser and `--help` read from `spec`) and how its text becomes a value, so that
/// every option of a kind is validated in one place.
struct Option<Value>: Sendable {
    let spec: OptionSpec
    let parse: @Sendable (_ text: String) throws(LedgerError) -> Value

    var name: String { spec.name }
}

extension Option where Value == String {
    static func text(_ name: String, _ value: String, _ help: String, repeats: Bool = false) -> Self {
        Option(spec: OptionSpec(name: name, value: value, help: help, repeats: repeats)) { $0 }
    }
}

extension Option where Value == Int {
    static func integer(_ name: String, _ value: String, _ help: String, minimum: Int = 0) -> Self {
        Option(spec: OptionSpec(name: name, value: value, help: help)) { (text) throws(LedgerError) in
            guard let v = Int(text), v >= minimum else {
                throw LedgerError(.invalidArgument, "\(name) must be a whole number ≥ \(minimum), got \"\(text)\"")
            }
            return v
        }
    }
}

extension Option where Value == UUID {
    static func uuid(_ name: String, _ value: String, _ help: String, repeats: Bool = false) -> Self {
        Option(spec: OptionSpec(name: name, value: value, help: help, repeats: repeats)) { (text) throws(LedgerError) in
            guard let id = UUID.parse(text) else { throw LedgerError(.invalidArgument, "\(name) must be a UUID, got \"\(text)\"") }
            return id
        }
    }
}

extension Option where Value == Instant {
    static func instant(_ name: String, _ value: String, _ help: String) -> Self {
        Option(spec: OptionSpec(name: name, value: value, help: help)) { (text) throws(LedgerError) in
            guard let instant = Instant(rfc3339: text) else {
                throw LedgerError(.invalidArgument, "\(name) must be an RFC 3339 instant, got \"\(text)\"")
            }
            guard Instant.supported.contains(instant) else {
                throw LedgerError(
                    .invalidArgument, "\(name) must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z, got \"\(text)\"")
            }
            return instant
        }
    }
}

/// A flag a command declares once.
struct Flag: Sendable {
    let spec: OptionSpec
    init(_ name: String, _ help: String) { spec = OptionSpec(name: name, value: nil, help: help) }
}

extension Invocation {
    /// The option's value, or nil when it was not given.
    func value<V>(_ option: Option<V>) throws(LedgerError) -> V? {
        guard let text = options[option.name] else { return nil }
        return try option.parse(text)
    }

    /// The option's value; a command that cannot run without it says so.
    func required<V>(_ option: Option<V>, by command: String) throws(LedgerError) -> V {
        guard let v = try value(option) else {
            throw LedgerError(.invalidArgument, "\(command) needs \(option.name) \(option.spec.value ?? "")")
        }
        return v
    }

    /// Every value of a repeatable option, in the order given.
    func values<V>(_ option: Option<V>) throws(LedgerError) -> [V] {
        var out: [V] = []
        for text in repeated[option.name] ?? [] { out.append(try option.parse(text)) }
        return out
    }

    func isSet(_ flag: Flag) -> Bool { flags.contains(flag.spec.name) }
}
