import Foundation
import GoalLedger
import LedgerHub
import LedgerSync

enum SyncCommand {
    static let spec = CommandSpec(
        name: "sync", arguments: "[PEER]",
        summary: "exchange events both ways with another store of the ledger or a hub (postgresql:// or https:// URL; default $LEDGER_HUB)",
        positionals: 0...1, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        guard let peerName = inv.positionals.first ?? inv.environment["LEDGER_HUB"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw LedgerError(
                .invalidArgument,
                "sync needs a PEER (a store directory, a postgresql:// URL or a sync service's https:// URL), or $LEDGER_HUB")
        }
        let store = try inv.openStore()
        let r: SyncResult
        if Hub.isURL(peerName) {
            r = try Hub(url: peerName).sync(store)
        } else if SyncServiceClient.isServiceURL(peerName) {
            r = try serviceClient(peerName).syncBlocking(store)
        } else {
            CrashGuard.opening(peerName)
            r = try store.sync(with: try LedgerStore.open(at: peerName))
        }
        if inv.json {
            try inv.printJSON(
                .object([
                    ("pulled", .number(Double(r.pulled.imported))), ("pushed", .number(Double(r.pushed.imported))),
                    ("events", .number(Double(try store.reading { try $0.lastPosition() }))),
                ]))
        } else {
            inv.print("received \(r.pulled.imported) event\(r.pulled.imported == 1 ? "" : "s"), sent \(r.pushed.imported)")
        }
        for left in r.pulled.revoked + r.pushed.revoked {
            inv.err +=
                "ledger: left out \(left.count) event(s) of \(left.origin) written after its revocation (after sequence \(left.after))\n"
        }
        reportWaiting(r.pulled.waiting, here: true, &inv)
        reportUnknownOrigins(r.pulled, &inv)
        reportWaiting(r.pushed.waiting, here: false, &inv)
    }

    /// One line for the events of origins that hold no key, however many origins.
    static func reportUnknownOrigins(_ r: ImportResult, _ inv: inout Invocation) {
        guard r.unknownOrigins > 0 else { return }
        inv.err +=
            "ledger: left out \(r.unknownOriginEvents) event(s) of \(r.unknownOrigins) origin(s) that hold no key in this ledger (not enrolled); they are taken once an enrolment of theirs arrives\n"
    }

    /// A client of the sync service at `url` (`https://…`, or `http://` to a loopback address).
    static func serviceClient(_ url: String) throws(LedgerError) -> SyncServiceClient {
        guard let parsed = URL(string: url), parsed.host != nil else {
            throw LedgerError(
                .invalidArgument, "\(SyncServiceClient.redacted(url)) is not a usable URL of a sync service (https://HOST[:PORT][/PATH])")
        }
        return SyncServiceClient(baseURL: parsed)
    }

    /// Names, on standard error, what an exchange set aside because it could not verify it.
    static func reportWaiting(_ waiting: [WaitingEvents], here: Bool, _ inv: inout Invocation) {
        for w in waiting.prefix(Self.namedWaiting) {
            inv.err += "ledger: \(here ? "" : "the peer: ")\(w.description); the rest was exchanged\n"
        }
        if waiting.count > Self.namedWaiting {
            let more = waiting.dropFirst(Self.namedWaiting)
            inv.err +=
                "ledger: \(here ? "" : "the peer: ")and \(Self.eventCount(more)) event(s) of \(more.count) more origin(s) wait; the rest was exchanged\n"
        }
    }

    /// The most origins whose waiting events a command names one per line; the rest are summed.
    static let namedWaiting = 20

    /// How many events `waiting` holds, saturating: a stored count is read clamped, so a damaged
    /// one can be as large as `Int.max`.
    static func eventCount(_ waiting: some Sequence<WaitingEvents>) -> Int { waiting.saturatingSum(\.count) }
}
