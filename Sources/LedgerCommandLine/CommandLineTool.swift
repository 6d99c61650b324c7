import Foundation
import GoalLedger
import LedgerScenarios

/// The `ledger` command: parses arguments, runs one command, and maps errors to exit codes
/// (0 ok, 1 internal, 2 usage, 3 invalid input, 4 expected-version conflict, 5 store problem).
public enum CommandLineTool {
    public struct Result: Sendable {
        public var exitCode: Int32
        public var stdout: String
        public var stderr: String
    }

    /// The `ledger` executable's own path, when this runs as it (not in a test's process):
    /// `verify` runs the ledger's walk in a child process of it.
    nonisolated(unsafe) public static var executable: String?

    static let globalOptions = [
        OptionSpec(name: "--store", value: "DIR", help: "the store (default: $LEDGER_STORE, else ./.ledger)"),
        OptionSpec(name: "--now", value: "INSTANT", help: "the current time, RFC 3339 (default: the clock)"),
        OptionSpec(name: "--json", value: nil, help: "print one JSON document instead of text"),
    ]

    static let commands: [CommandSpec] = [
        InitCommand.spec, AppendCommand.spec, ReplayCommand.spec, GoalsCommand.spec, ShowCommand.spec,
        LogCommand.spec, AuditCommand.spec, ConflictsCommand.spec, StatusCommand.spec, CloneCommand.spec, SyncCommand.spec,
        ExportCommand.spec, ImportCommand.spec, PendingCommand.spec, ReconcileCommand.spec, RebuildCommand.spec, MigrateCommand.spec,
        BackupCommand.spec,
        VerifyCommand.spec, RecoverCommand.spec, ScenarioCommand.spec, HubCommand.spec, ReportCommand.spec, DeviceCommand.spec, ServeCommand.spec,
        MoveCommand.spec,
    ]

    static var overview: String {
        var lines = ["usage: ledger [--store DIR] [--now INSTANT] [--json] COMMAND …", "", "commands:"]
        for c in commands {
            lines.append("  " + c.name.padding(toLength: 10, withPad: " ", startingAt: 0) + c.summary)
        }
        lines.append("")
        lines.append("`ledger COMMAND --help` describes one command.")
        lines.append(
            "exit codes: 0 ok, 1 internal (and a failed scenario), 2 usage, 3 invalid input, 4 version conflict, 5 store or hub problem")
        return lines.joined(separator: "\n")
    }

    /// Runs one command line (without the program name). `input` gives standard input whole;
    /// without it the process's standard input is read as it arrives. With `output`, standard
    /// output is written through it as it is produced (and `Result.stdout` stays empty).
    public static func run(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        input: (() -> Data)? = nil,
        output: ((String) -> Void)? = nil
    ) -> Result {
        var invocation = Invocation(
            environment: environment, readInput: input ?? { FileHandle.standardInput.readDataToEndOfFile() },
            standardInput: input == nil ? FileHandle.standardInput : nil)
        invocation.emit = output
        do {
            guard let spec = try parse(arguments, into: &invocation) else {
                return Result(exitCode: 0, stdout: invocation.out, stderr: "")
            }
            try spec.run(&invocation)
            return Result(exitCode: 0, stdout: invocation.out, stderr: invocation.err)
        } catch {
            let error = damageBehind(error, store: invocation.storePath)
            // A message may quote text from a store, an export file or a hub: escaped like output.
            var message = "ledger: \(TerminalText.escaped(hinted(error).message, keepingLineBreaks: true))\n"
            if error.code == .invalidArgument, !message.contains("usage:") { message += "run `ledger --help` for usage\n" }
            return Result(exitCode: error.code.exitCode, stdout: invocation.out, stderr: invocation.err + message)
        }
    }

    /// A store failure that damage below the ledger may explain (a table read as empty, a key
    /// read as another): when the store's pages are damaged, the failure is said as the damage,
    /// with what failed after it. Failures of other kinds (no store, a peer, a version) pass as
    /// they are, and so does one already said as damage.
    static func damageBehind(_ error: LedgerError, store path: String) -> LedgerError {
        guard error.code == .store else { return error }
        switch error.reason {
        case nil, .signerNotTrusted?, .deviceNotEnrolled(_, _, byService: false)?, .signingKeyMissing?, .projectionDamaged?,
            .storeDamaged?, .indexDamaged?, .needsMigration?, .hubNotInitialized?, .hubAccessNotGranted?:
            break
        default: return error
        }
        guard FileManager.default.fileExists(atPath: path + "/data.mdb"),
            let damage = (try? LedgerStore.checkPages(at: path, limit: 1))?.first
        else { return error }
        return LedgerError.storeDamaged(at: path, "\(damage)").appending("\n(what failed: \(error.message))")
    }

    /// The error with the command line's hint on the failures its own commands and options fix
    /// (the library's messages name none of them), chosen by the reason.
    package static func hinted(_ error: LedgerError) -> LedgerError {
        let verify = "`ledger \(VerifyCommand.spec.name)`"
        let rebuild = "`ledger \(RebuildCommand.spec.name)`"
        let newDevice = "make a new device with `ledger \(CloneCommand.spec.name)`"
        let hint: String
        switch error.reason {
        case .noStore(let path)?:
            return .noStore(at: path, hint: " (create one with `ledger \(InitCommand.spec.name) \(InitCommand.device.name) NAME`)")
        case .signingKeyMissing(let device, let path)?:
            return .signingKeyMissing(device: device, path: path, hint: " (a backup restored without \(BackupCommand.withKey.spec.name)?)")
        case .projectionDamaged?: hint = " (run \(rebuild))"
        case .indexDamaged?: hint = " (run \(verify), then \(rebuild))"
        case .storeDamaged?: hint = " (run \(verify), and restore a backup if the log is damaged)"
        case .fileDamaged?:
            hint =
                " (\(verify) names the damage; `ledger \(RecoverCommand.spec.name) --out NEWDIR --from PEER` builds a new store from what is readable and what a peer holds)"
        case .needsMigration?: hint = ": run `ledger \(MigrateCommand.spec.name)` first"
        case .hubNotInitialized?: hint = " (`ledger hub init URL`)"
        case .hubAccessNotGranted?: hint = " (`ledger hub grant URL --ledger ID --role NAME`)"
        case .signerNotTrusted?, .deviceNotEnrolled(_, _, byService: false)?:
            hint = " (restore this device's key with `ledger \(BackupCommand.spec.name)`'s copy, or \(newDevice))"
        case .deviceRevoked?: hint = " (\(newDevice))"
        case .restoredFromBackup?: hint = " (run `ledger \(SyncCommand.spec.name)` with another device or the hub)"
        case .invalidEvent?, .unknownGoal?, .versionConflict?, .fieldVersionConflict?, .peerUnreachable?, .notificationCenterFailed?,
            .storeExists?, .serviceRefused?, .deviceNotEnrolled(_, _, byService: true)?, nil:
            return error
        }
        return error.appending(hint)
    }

    /// Splits global options, the command, its options and positionals. Returns nil when help
    /// was printed instead.
    static func parse(_ arguments: [String], into inv: inout Invocation) throws(LedgerError) -> CommandSpec? {
        var spec: CommandSpec?
        var i = 0
        var helpRequested = false
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if arg == "--help" || arg == "-h" {
                helpRequested = true
                continue
            }
            if arg.hasPrefix("--") {
                var name = arg
                var inlineValue: String?
                if let eq = arg.firstIndex(of: "=") {
                    name = String(arg[..<eq])
                    inlineValue = String(arg[arg.index(after: eq)...])
                }
                let known = globalOptions + (spec?.options ?? [])
                guard let option = known.first(where: { $0.name == name }) else {
                    throw LedgerError(.invalidArgument, spec == nil ? "unknown option \(name)" : "unknown option \(name) for `\(spec!.name)`")
                }
                if option.value != nil {
                    guard let value = inlineValue ?? (i < arguments.count ? arguments[i] : nil) else {
                        throw LedgerError(.invalidArgument, "\(name) needs a value (\(option.value!))")
                    }
                    if inlineValue == nil { i += 1 }
                    if option.repeats {
                        inv.repeated[name, default: []].append(value)
                        continue
                    }
                    guard inv.options[name] == nil else { throw LedgerError(.invalidArgument, "\(name) is given twice") }
                    inv.options[name] = value
                } else {
                    guard inlineValue == nil else { throw LedgerError(.invalidArgument, "\(name) takes no value") }
                    inv.flags.insert(name)
                }
                continue
            }
            if spec == nil {
                if arg == "help" {
                    helpRequested = true
                    continue
                }
                guard let found = commands.first(where: { $0.name == arg }) else {
                    throw LedgerError(.invalidArgument, "unknown command \"\(arg)\"\n" + overview)
                }
                spec = found
            } else {
                inv.positionals.append(arg)
            }
        }
        if helpRequested {
            inv.print(spec?.help ?? overview)
            return nil
        }
        guard let spec else { throw LedgerError(.invalidArgument, "no command given\n" + overview) }
        guard spec.positionals.contains(inv.positionals.count) else {
            throw LedgerError(.invalidArgument, "wrong number of arguments for `\(spec.name)`\nusage: \(spec.usage)")
        }
        return spec
    }
}
