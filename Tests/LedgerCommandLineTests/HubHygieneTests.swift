import Foundation
import GoalLedger
import HubTestSupport
import LedgerCommandLine
import PostgreSQL
import Testing

/// What no other session or role can do to a sync (stall it), what the hub's owner can take
/// back (a role's ledger), and what no message repeats (a password).
struct HubHygieneTests {
    func requireBinary() throws {
        try #require(FileManager.default.isExecutableFile(atPath: ledgerExecutable().path), "build the ledger executable first")
    }

    /// `ledger hub …` in-process.
    func hubCommand(_ args: [String]) -> CommandLineTool.Result {
        CommandLineTool.run(["hub"] + args, environment: [:], input: { Data() })
    }

    @Test func anotherSessionHoldingTheLedgersLockDelaysASyncWithinItsBoundAndNeverStallsIt() throws {
        try requireBinary()
        let hub = try HubFixture()
        hub.seed()
        hub.run("phone", ["append"], input: HubFixture.progress(2))
        let ledger = UUID(uuidString: try hub.ledgerID("phone"))!
        let before = hub.state("phone")
        let hostage = try hub.admin()
        try hostage.query("SELECT pg_advisory_lock(hashtextextended($1::text, 20261102))", [.uuid(ledger)])
        let start = Date()
        let r = try hub.child("phone", ["sync", hub.url], environment: ["LEDGER_HUB_LOCK_TIMEOUT": "1"])
        let waited = Date().timeIntervalSince(start)
        #expect(r.status == 5, "\(r.stderr)")
        #expect(
            r.stderr.contains("ledger \(ledger.uuidString) is locked on the hub") && r.stderr.contains("by another session")
                && r.stderr.contains("try again"), "\(r.stderr)")
        #expect(waited >= 1 && waited < 10, "waited \(waited) s")
        let unchanged = same(hub.state("phone"), before)
        #expect(unchanged)
        #expect(try hub.count() == 21)
        // Released, the next sync goes through.
        try hostage.query("SELECT pg_advisory_unlock(hashtextextended($1::text, 20261102))", [.uuid(ledger)])
        let again = try hub.child("phone", ["sync", hub.url], environment: ["LEDGER_HUB_LOCK_TIMEOUT": "1"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try hub.count() == 23)
    }

    @Test func aTableLockedByAnotherSessionFailsASyncAtTheHubsLockTimeout() throws {
        try requireBinary()
        let hub = try HubFixture()
        hub.seed()
        hub.run("phone", ["append"], input: HubFixture.progress(1))
        let hostage = try hub.admin()
        try hostage.execute("BEGIN; LOCK TABLE hub.heads IN ACCESS EXCLUSIVE MODE")
        let start = Date()
        let r = try hub.child("phone", ["sync", hub.url], environment: ["LEDGER_HUB_LOCK_TIMEOUT": "1"])
        let waited = Date().timeIntervalSince(start)
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("is locked by another session") && r.stderr.contains("try again"), "\(r.stderr)")
        #expect(waited >= 1 && waited < 10, "waited \(waited) s")
        try hostage.execute("ROLLBACK")
        #expect(try hub.child("phone", ["sync", hub.url]).status == 0)
    }

    @Test func revokeTakesOneLedgerFromARoleAndLeavesItsOthers() throws {
        let hub = try HubFixture()
        hub.seed("phone")
        hub.seed("desk")
        let role = TestServer.roleName("carol")
        let ledgerA = try hub.ledgerID("phone")
        let ledgerB = try hub.ledgerID("desk")
        for ledger in [ledgerA, ledgerB] { #expect(hubCommand(["grant", hub.url, "--ledger", ledger, "--role", role]).exitCode == 0) }
        let url = hub.url(as: role)
        let c = try Connection(url)
        let a = UUID(uuidString: ledgerA)!
        let b = UUID(uuidString: ledgerB)!
        let count = "SELECT count(*) FROM hub.events WHERE ledger = $1"
        #expect(try c.query(count, [.uuid(a)]).int64(0, 0) == 21)

        let revoked = hubCommand(["revoke", hub.url, "--ledger", ledgerA, "--role", role])
        #expect(revoked.exitCode == 0, "\(revoked.stderr)")
        #expect(revoked.stdout.contains("role \(role) may no longer reach ledger \(ledgerA)"), "\(revoked.stdout)")
        // Ledger A: nothing to read, nothing to write, through SQL or the command.
        #expect(try c.query(count, [.uuid(a)]).int64(0, 0) == 0)
        #expect(try c.query("SELECT count(*) FROM hub.heads WHERE ledger = $1", [.uuid(a)]).int64(0, 0) == 0)
        do {
            try c.execute("INSERT INTO hub.events SELECT '\(ledgerA)', 'x', 1, gen_random_uuid(), hlc, record FROM hub.events LIMIT 1")
            Issue.record("a revoked role inserted into its former ledger")
        } catch {
            #expect(error.sqlState == "42501", "\(error)")
        }
        hub.run("phone", ["append"], input: HubFixture.progress(1))
        let push = hub.run("phone", ["sync", url])
        #expect(push.exitCode == 5 && push.stderr.contains("row-level security"), "\(push.stderr)")
        let clone = hub.run("intruder", ["clone", url, "--ledger", ledgerA, "--device", "intruder"])
        #expect(clone.exitCode == 5 && clone.stderr.contains("holds no events"), "\(clone.stderr)")
        // Ledger B: as before.
        #expect(try c.query(count, [.uuid(b)]).int64(0, 0) == 21)
        hub.run("desk", ["append"], input: HubFixture.progress(1))
        let desk = hub.run("desk", ["sync", url])
        #expect(desk.exitCode == 0, "\(desk.stderr)")
        #expect(try c.query(count, [.uuid(b)]).int64(0, 0) == 22)

        // Again: nothing to revoke, said so.
        let again = hubCommand(["revoke", hub.url, "--ledger", ledgerA, "--role", role, "--json"])
        #expect(again.exitCode == 0)
        #expect(try JSONParser.parse(again.stdout)["revoked"] == .bool(false))
        // Its last ledger gone, the role loses the schema too.
        #expect(hubCommand(["revoke", hub.url, "--ledger", ledgerB, "--role", role]).exitCode == 0)
        do {
            try c.query(count, [.uuid(b)])
            Issue.record("a role with no ledger read the events table")
        } catch {
            #expect(error.sqlState == "42501", "\(error)")
        }
        // Revoking is the owner's, and the help says how.
        #expect(hubCommand(["revoke", url, "--ledger", ledgerA, "--role", role]).exitCode == 5)
        #expect(hubCommand(["revoke", hub.url, "--role", role]).exitCode == 2)
        let help = hubCommand(["--help"]).stdout
        #expect(help.contains("revoke URL --ledger ID --role NAME") && help.contains("no longer reach"), "\(help)")
    }

    @Test func grantWarnsWhenItCreatesALoginRoleWithoutAPassword() throws {
        let hub = try HubFixture()
        hub.seed()
        let role = TestServer.roleName("dave")
        let ledger = try hub.ledgerID("phone")
        let first = hubCommand(["grant", hub.url, "--ledger", ledger, "--role", role])
        #expect(first.exitCode == 0)
        #expect(first.stderr.contains("warning: role \(role) was created with LOGIN and no password"), "\(first.stderr)")
        #expect(!first.stdout.contains("warning"))
        let second = hubCommand(["grant", hub.url, "--ledger", ledger, "--role", role])
        #expect(second.exitCode == 0 && second.stderr.isEmpty, "\(second.stderr)")
    }

    @Test func noSyncOrHubMessageRepeatsAPasswordInAnySpelling() throws {
        let hub = try HubFixture()
        hub.seed()
        let nowhere = hub.root + "/no-server"
        let spellings = [
            "postgresql://phone:s3cret@/hub?host=\(nowhere)",
            "postgresql://phone:s3%63ret@/hub?host=\(nowhere)",
            "postgresql:///hub?host=\(nowhere)&password=s3cret",
            "postgresql:///hub?host=\(nowhere)&password=first&password=s3cret",
            "postgresql:///hub?host=\(nowhere)&pass%77ord=s3cret",
            "postgresql://phone:s3cret%zz@/hub?host=\(nowhere)",
            "postgresql:///hub?host=\(nowhere)&password=s3cret%zz",
            "postgres://phone:s3cret@[::1/hub",
            // The right server, with a password it does not ask for, and a refusal after connecting.
            "postgresql://nobody_here:s3cret@/\(hub.database)?host=\(hub.socketDirectory)",
        ]
        for url in spellings {
            for args in [["sync", url], ["hub", "init", url], ["hub", "grant", url, "--ledger", UUID().uuidString, "--role", "x"]] {
                let r = hub.run("phone", args)
                #expect(r.exitCode == 5, "\(args): \(r.stderr)")
                #expect(!r.stderr.contains("s3cret") && !r.stderr.contains("s3%63ret"), "\(r.stderr)")
            }
        }
        let typo = hubCommand(["init", "postgresq://phone:s3cret@db.example/hub"])
        #expect(typo.exitCode == 2 && !typo.stderr.contains("s3cret"), "\(typo.stderr)")
    }
}
