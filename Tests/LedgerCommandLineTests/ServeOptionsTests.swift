import Foundation
import LedgerCommandLine
import LedgerSync
import Testing

@testable import GoalLedger

/// The limits of `ledger serve` as the command line sets them, against the real executable on
/// loopback, with `ledger sync URL` as the client: founding closed, pulls in pages, a rotated
/// device, the request rate.
struct ServeOptionsTests {
    let now = Instant(rfc3339: "2026-11-05T12:00:00Z")!

    @Test func theServeCommandsLimitsHoldForTheSyncCommand() throws {
        let f = try ServiceFixture()
        let dir = CLIFixture()
        func ledger(_ store: String, _ args: [String], input: String = "") -> CommandLineTool.Result {
            CLIFixture.runAt(dir.root + "/" + store, args, input: input)
        }
        #expect(ledger("phone", ["init", "--device", "phone"]).exitCode == 0)
        #expect(ledger("stranger", ["init", "--device", "stranger"]).exitCode == 0)
        let phone = try LedgerStore.open(at: dir.root + "/phone")
        let key = Hex.string(try #require(try phone.reading { try $0.publicKey() }))
        let (service, base) = try startLedgerServe(
            f.serviceURL, ["--founding", "closed", "--founder-key", key, "--max-pull-events", "20", "--requests-per-minute", "600"])
        defer {
            service.terminate()
            service.waitUntilExit()
        }
        // The stranger may not found a ledger here; the phone may.
        let refused = ledger("stranger", ["sync", base])
        #expect(refused.exitCode == 5 && refused.stderr.contains("does not keep ledger"), "\(refused.stderr)")
        let goal = "5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9E11"
        let lines = [#"{"type":"goalCreated","goal":"\#(goal)","title":"Read","cadence":"daily","progress":{"kind":"measurable","target":10}}"#]
            + (0..<30).map { _ in #"{"type":"progressRecorded","goal":"\#(goal)","amount":1}"# }
        // Thirty-one batches of one event: more than a page of 20.
        for line in lines { #expect(ledger("phone", ["append"], input: line).exitCode == 0) }
        #expect(ledger("phone", ["sync", base]).exitCode == 0)
        // A new device, enrolled by the phone, clones through the service in pages.
        let tablet = dir.root + "/tablet"
        let clone = CLIFixture.runAt(tablet, ["clone", base, "--ledger", phone.ledgerID.uuidString, "--device", "tablet"])
        #expect(clone.exitCode == 5)
        let hex = Set("0123456789abcdefABCDEF")
        let tabletKey = try #require(
            clone.stderr.split(whereSeparator: { !hex.contains($0) }).first { $0.count == 64 }.map(String.init), "\(clone.stderr)")
        #expect(ledger("phone", ["device", "enrol", "tablet", "--key", tabletKey]).exitCode == 0)
        #expect(ledger("phone", ["sync", base]).exitCode == 0)
        let pulled = CLIFixture.runAt(tablet, ["sync", base])
        #expect(pulled.exitCode == 0, "\(pulled.stderr)")
        #expect(CLIFixture.runAt(tablet, ["log"]).stdout == ledger("phone", ["log"]).stdout)
        // The tablet rotates its key and syncs at once; the phone learns the new key.
        #expect(CLIFixture.runAt(tablet, ["device", "rotate"]).exitCode == 0)
        let rotated = CLIFixture.runAt(tablet, ["sync", base])
        #expect(rotated.exitCode == 0, "\(rotated.stderr)")
        #expect(ledger("phone", ["sync", base]).exitCode == 0)
        // The founder rotates too; from then on its first key opens nothing, even through the
        // founder's `device-key` path.
        let first = try #require(try phone.keys.key(ledger: phone.ledgerID, device: "phone"))
        f.base = base
        #expect(try f.signed(phone, "pull", body: phone.syncState().encoded(), key: first).status == 200)
        #expect(ledger("phone", ["device", "rotate"]).exitCode == 0)
        #expect(ledger("phone", ["sync", base]).exitCode == 0)
        #expect(try f.signed(phone, "pull", body: phone.syncState().encoded(), key: first).status == 401)
        #expect(CLIFixture.runAt(tablet, ["sync", base]).exitCode == 0)
        let digests = [ledger("phone", ["status", "--json"]), CLIFixture.runAt(tablet, ["status", "--json"])].map { r in
            (try? JSONParser.parse(r.stdout))?["digest"]
        }
        #expect(digests[0] != nil && digests[0] == digests[1])
    }
}
