import Foundation
import GoalLedger

/// One option a command accepts.
struct OptionSpec: Sendable {
    var name: String
    /// The value's placeholder, or nil for a flag.
    var value: String?
    var help: String
    /// Whether it may be given more than once (its values are collected in order).
    var repeats = false
}

/// One `ledger` subcommand: its name, how it is called, and what runs it. `--help` is
/// generated from these fields.
struct CommandSpec: Sendable {
    var name: String
    var arguments: String = ""
    var summary: String
    var options: [OptionSpec] = []
    /// How many positional arguments it takes.
    var positionals: ClosedRange<Int> = 0...0
    var run: @Sendable (inout Invocation) throws(LedgerError) -> Void

    var usage: String {
        var parts = ["ledger [--store DIR] [--now INSTANT]", name]
        if !arguments.isEmpty { parts.append(arguments) }
        for o in options { parts.append(o.value.map { "[\(o.name) \($0)\(o.repeats ? " …" : "")]" } ?? "[\(o.name)]") }
        return parts.joined(separator: " ")
    }

    var help: String {
        var lines = ["usage: \(usage)", "", summary]
        let all = options + CommandLineTool.globalOptions
        if !all.isEmpty {
            lines.append("")
            lines.append("options:")
            for o in all {
                let left = o.value.map { "\(o.name) \($0)" } ?? o.name
                lines.append("  " + left.padding(toLength: 24, withPad: " ", startingAt: 0) + o.help)
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// The parsed command line of one run, with its input and output.
struct Invocation {
    var positionals: [String] = []
    var options: [String: String] = [:]
    /// The values of options that may be repeated, in the order given.
    var repeated: [String: [String]] = [:]
    var flags: Set<String> = []
    var environment: [String: String]
    var readInput: () -> Data
    /// Standard input, read as it arrives, when the run reads the process's own (else
    /// `readInput` gives the input whole).
    var standardInput: FileHandle?
    var out = ""
    /// When set, output goes straight to it (the executable's stdout) instead of into `out`.
    var emit: ((String) -> Void)?
    var err = ""

    var json: Bool { flags.contains("--json") }

    var storePath: String {
        options["--store"] ?? environment["LEDGER_STORE"] ?? "./.ledger"
    }

    /// `--now`, else the system clock.
    func now() throws(LedgerError) -> Instant {
        guard let text = options["--now"] else { return .systemNow }
        guard let instant = Instant(rfc3339: text) else {
            throw LedgerError(.invalidArgument, "--now must be an RFC 3339 instant such as 2026-11-02T07:00:00Z, got \"\(text)\"")
        }
        guard Instant.supportedNow.contains(instant) else {
            throw LedgerError(.invalidArgument, "--now must be between 1970-01-02T00:00:00Z and 9999-12-30T23:59:59.999Z, got \"\(text)\"")
        }
        return instant
    }

    func uuidArgument(_ index: Int, _ what: String) throws(LedgerError) -> UUID {
        let text = positionals[index]
        guard let id = UUID.parse(text) else { throw LedgerError(.invalidArgument, "\(what) must be a UUID, got \"\(text)\"") }
        return id
    }

    /// Opens the store; a projection rebuilt on open is announced on stderr.
    mutating func openStore() throws(LedgerError) -> LedgerStore {
        var notices: [String] = []
        CrashGuard.opening(storePath)
        let store = try LedgerStore.open(at: storePath, onRebuild: { notices.append($0) })
        for n in notices { err += "ledger: \(n)\n" }
        return store
    }

    mutating func print(_ line: String) { write(line + "\n") }

    /// Output without a line break; large outputs are written in pieces.
    mutating func write(_ text: String) {
        if let emit { emit(text) } else { out += text }
    }

    mutating func printJSON(_ value: JSONValue) throws(LedgerError) { print(try JSONWriter.string(value)) }
}
