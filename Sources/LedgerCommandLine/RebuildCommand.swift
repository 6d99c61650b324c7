import Foundation
import GoalLedger

enum RebuildCommand {
    static let spec = CommandSpec(
        name: "rebuild", summary: "rebuild every projection from the log (beside the live one, then switch)",
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let store = try inv.openStore()
        let started = Date()
        let terminal = isatty(STDERR_FILENO) == 1
        var shown = false
        try store.rebuild { folded, total in
            // Progress only on a terminal, and only once it takes more than a moment.
            guard terminal, Date().timeIntervalSince(started) > 0.5 else { return }
            shown = true
            FileHandle.standardError.write(Data("\rrebuilding: \(folded)/\(total) events".utf8))
        }
        if shown { FileHandle.standardError.write(Data("\n".utf8)) }
        let (version, checkpoint) = try store.reading { try $0.projectionStatus() }
        if inv.json {
            try inv.printJSON(
                .object([
                    (
                        "projections",
                        .object([
                            ("goals", .object([("version", .number(Double(version))), ("checkpoint", .number(Double(checkpoint)))]))
                        ])
                    )
                ]))
        } else {
            inv.print("rebuilt the goal projection (version \(version)) from \(checkpoint) events")
        }
    }
}
