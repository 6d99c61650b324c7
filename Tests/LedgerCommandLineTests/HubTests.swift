import Foundation
import GoalLedger
import HubTestSupport
import LedgerCommandLine
import PostgreSQL
import Testing

struct HubTests {
    @Test func hubInitRecordsItsMigrationsAndANewerHubIsRefused() throws {
        let hub = try HubFixture(initialized: false)
        let first = try JSONParser.parse(
            CommandLineTool.run(["hub", "init", hub.url, "--json"], environment: [:], input: { Data() }).stdout)
        #expect(first["applied"] == .array([.string("1-events-heads-access"), .string("2-sync-service"), .string("3-nonce-expiry"), .string("4-ledger-bytes"), .string("5-service-trust-index")]))
        let again = CommandLineTool.run(["hub", "init", hub.url], environment: [:], input: { Data() })
        #expect(again.exitCode == 0)
        #expect(again.stdout.contains("is current"))
        // Sixteen hash partitions by ledger.
        #expect(try hub.count("SELECT count(*) FROM pg_inherits WHERE inhparent = 'hub.events'::regclass") == 16)
        #expect(
            try hub.count("SELECT count(*) FROM pg_partitioned_table WHERE partrelid = 'hub.events'::regclass AND partstrat = 'h'") == 1)
        hub.seed()
        try hub.admin().execute("INSERT INTO hub.migrations VALUES ('9-from-the-future')")
        for args in [["hub", "init", hub.url], ["sync", hub.url]] {
            let before = hub.state("phone")
            let r = hub.run("phone", args)
            #expect(r.exitCode == 5, "\(args)")
            #expect(r.stderr.contains("records migration \"9-from-the-future\"") && r.stderr.contains("newer"), "\(r.stderr)")
            let unchanged1 = same(hub.state("phone"), before)
            #expect(unchanged1)
        }
    }

    @Test func aDatabaseWithoutAHubSchemaIsRefused() throws {
        let hub = try HubFixture(initialized: false)
        hub.run("phone", ["init", "--device", "phone"])
        let r = hub.run("phone", ["sync", hub.url])
        #expect(r.exitCode == 5)
        #expect(r.stderr.contains("ledger hub init"), "\(r.stderr)")
    }

    @Test func syncPushesAndPullsWhatEachSideLacksAndASecondSyncMovesNothing() throws {
        let hub = try HubFixture()
        hub.run("phone", ["init", "--device", "phone"])
        hub.run("phone", ["append"], input: everyKindOfGoal.joined(separator: "\n"))
        let first = try JSONParser.parse(hub.run("phone", ["sync", hub.url, "--json"]).stdout)
        #expect(first["pushed"] == .number(21) && first["pulled"] == .number(0))
        let ledger = try hub.ledgerID("phone")
        let clone = hub.run("laptop", ["clone", hub.url, "--ledger", ledger, "--device", "laptop"])
        #expect(clone.exitCode == 0, "\(clone.stderr)")
        #expect(clone.stdout.contains("21 events"))
        // The laptop cannot append until an enrolled device vouches for it.
        #expect(clone.stderr.contains("device enrol laptop --key"))
        #expect(hub.run("laptop", ["append"], input: HubFixture.progress(1)).exitCode == 5)
        #expect(try hub.pair("laptop"))
        hub.run("laptop", ["append"], input: HubFixture.progress(5))
        hub.run("phone", ["append"], input: HubFixture.progress(3, from: 5))
        let laptop = try JSONParser.parse(hub.run("laptop", ["sync", hub.url, "--json"]).stdout)
        #expect(laptop["pushed"] == .number(5) && laptop["pulled"] == .number(0))
        // $LEDGER_HUB is the default peer.
        let phone = try JSONParser.parse(hub.run("phone", ["sync", "--json"], environment: ["LEDGER_HUB": hub.url]).stdout)
        #expect(phone["pushed"] == .number(3) && phone["pulled"] == .number(5))
        let last = try JSONParser.parse(hub.run("laptop", ["sync", hub.url, "--json"]).stdout)
        #expect(last["pushed"] == .number(0) && last["pulled"] == .number(3))
        for device in ["phone", "laptop"] {
            let again = try JSONParser.parse(hub.run(device, ["sync", hub.url, "--json"]).stdout)
            #expect(again["pushed"] == .number(0) && again["pulled"] == .number(0), "second sync of \(device)")
            #expect(hub.run(device, ["verify"]).exitCode == 0)
        }
        let unchanged2 = same(hub.run("phone", ["replay", "--json"]).stdout, hub.run("laptop", ["replay", "--json"]).stdout)
        #expect(unchanged2)
        #expect(try hub.count() == 30)
        #expect(try hub.count("SELECT count(*) FROM hub.heads WHERE ledger = $1", [.uuid(UUID(uuidString: ledger)!)]) == 2)
        // Without a peer or $LEDGER_HUB, sync says what it needs.
        #expect(hub.run("phone", ["sync"]).exitCode == 2)
    }

    @Test func libpqsEnvironmentCompletesTheURL() throws {
        try #require(FileManager.default.isExecutableFile(atPath: ledgerExecutable().path), "build the ledger executable first")
        let hub = try HubFixture()
        hub.seed()
        hub.run("phone", ["append"], input: HubFixture.progress(2))
        // No host and no user in the URL: PGHOST and PGUSER supply them.
        let r = try hub.child(
            "phone", ["sync", "postgresql:///\(hub.database)"], environment: ["PGHOST": hub.socketDirectory, "PGUSER": "postgres"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("sent 2"), "\(r.stdout)")
    }

    @Test func cloneFromAHubRefusesATakenDeviceOrAnUnknownLedgerAndLeavesNothing() throws {
        let hub = try HubFixture()
        hub.seed()
        let ledger = try hub.ledgerID("phone")
        let taken = hub.run("other", ["clone", hub.url, "--ledger", ledger, "--device", "phone"])
        #expect(taken.exitCode == 2)
        #expect(taken.stderr.contains("already belongs"))
        let unknown = hub.run("other", ["clone", hub.url, "--ledger", UUID().uuidString, "--device", "other"])
        #expect(unknown.exitCode == 5)
        #expect(unknown.stderr.contains("holds no events of ledger"))
        #expect(hub.run("other", ["clone", hub.url, "--device", "other"]).exitCode == 2)
        #expect(!FileManager.default.fileExists(atPath: hub.path("other")))
    }

    @Test func anUnreachableHubIsExit5WithLibpqsReasonAndTheStoreUnchanged() throws {
        let hub = try HubFixture()
        hub.seed()
        hub.run("phone", ["append"], input: HubFixture.progress(2))
        let before = hub.state("phone")
        let nowhere = hub.root + "/no-server"
        let r = hub.run("phone", ["sync", "postgresql:///hub?host=\(nowhere)"])
        #expect(r.exitCode == 5)
        #expect(r.stderr.contains("cannot reach the hub") && r.stderr.contains("\(nowhere)/.s.PGSQL.5432"), "\(r.stderr)")
        let unchanged3 = same(hub.state("phone"), before)
        #expect(unchanged3)
        // A password in the URL never reaches a message.
        let secret = hub.run("phone", ["sync", "postgresql://phone:s3cret@/hub?host=\(nowhere)"])
        #expect(secret.exitCode == 5)
        #expect(!secret.stderr.contains("s3cret"), "\(secret.stderr)")
    }

    // MARK: Refusals

    /// The store's replay and log, without its status (which names what waits).
    func data(_ hub: HubFixture, _ device: String) -> String {
        hub.run(device, ["replay", "--json"]).stdout + hub.run(device, ["log", "--json"]).stdout
    }

    @Test func aDivergedHistoryWaitsNamingTheEventAndNothingOfItIsWrittenOnEitherSide() throws {
        let hub = try HubFixture()
        hub.seed()
        // The phone is restored from an old copy after it had synced one more event: it writes
        // sequence 22 again, with other content.
        try FileManager.default.copyItem(atPath: hub.path("phone"), toPath: hub.path("restored"))
        let synced = try JSONParser.parse(hub.run("phone", ["append", "--json"], input: HubFixture.progress(1)).stdout)
        hub.run("phone", ["sync", hub.url])
        hub.run("restored", ["append"], input: HubFixture.progress(2, from: 7))
        let hubBefore = try hub.hubState()
        let before = data(hub, "restored")
        let r = hub.run("restored", ["sync", hub.url])
        #expect(r.exitCode == 0, "\(r.stderr)")
        guard case .string(let id) = synced["id"] else { throw LedgerError(.internal, "no id") }
        #expect(r.stderr.contains(id) && r.stderr.contains("phone/22") && r.stderr.contains("diverged"), "\(r.stderr)")
        let unchanged4 = same(try hub.hubState(), hubBefore)
        #expect(unchanged4)
        let unchanged5 = same(data(hub, "restored"), before)
        #expect(unchanged5)
        #expect(hub.run("restored", ["status"]).stdout.contains("waiting  phone/22"))

        // The other way round: the hub is ahead; the pull's first event is the one that differs.
        hub.run("phone", ["append"], input: HubFixture.progress(2, from: 20))
        hub.run("phone", ["sync", hub.url])
        let hubBefore2 = try hub.hubState()
        let r2 = hub.run("restored", ["sync", hub.url])
        #expect(r2.exitCode == 0)
        #expect(r2.stderr.contains("phone/23") && r2.stderr.contains("two histories"), "\(r2.stderr)")
        let unchanged6 = same(try hub.hubState(), hubBefore2)
        #expect(unchanged6)
        let unchanged7 = same(data(hub, "restored"), before)
        #expect(unchanged7)
    }

    enum Alteration: String, CaseIterable { case flippedByte, recordOfAnotherOrigin }

    @Test(arguments: Alteration.allCases)
    func aRecordAlteredInTheHubWaitsAndTheRestOfTheExchangeGoesOn(_ alteration: Alteration) throws {
        let hub = try HubFixture()
        hub.seed()
        let ledger = try hub.ledgerID("phone")
        #expect(try hub.join("laptop"))
        hub.run("phone", ["append"], input: HubFixture.progress(10))
        hub.run("phone", ["sync", hub.url])
        hub.run("laptop", ["append"], input: HubFixture.progress(1))
        let admin = try hub.admin()
        let row = try admin.query(
            "SELECT event_id, record FROM hub.events WHERE ledger = $1 AND origin = 'phone' AND sequence = 25",
            [.uuid(UUID(uuidString: ledger)!)])
        let id = row.uuid(0, 0)!
        var record = row.bytes(0, 1)
        switch alteration {
        case .flippedByte:
            record[record.count - 2] ^= 0x20
        case .recordOfAnotherOrigin:
            // A well-formed record (its checksum recomputed) whose origin is not the row's.
            var e = try EventCodec.decode(record)
            e.origin = "tablet"
            record = EventCodec.encode(e)
        }
        try admin.query(
            "UPDATE hub.events SET record = $1 WHERE ledger = $2 AND origin = 'phone' AND sequence = 25",
            [.bytea(record), .uuid(UUID(uuidString: ledger)!)])
        let r = hub.run("laptop", ["sync", hub.url])
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(r.stderr.contains("phone/25 (event \(id.uuidString))"), "\(r.stderr)")
        #expect(r.stderr.contains(alteration == .flippedByte ? "checksum" : "the record is tablet/25"), "\(r.stderr)")
        // The phone's batch that the bad record closed waits, named by status; the laptop's own
        // event went.
        let laptop = try LedgerStore.open(at: hub.path("laptop"))
        #expect(try laptop.originHeads()["phone"] == 22)
        #expect(try laptop.waitingEvents().map(\.sequence) == [23])
        #expect(try laptop.verify().isClean)
        let hubHeads = try hub.admin().execute("SELECT head FROM hub.heads WHERE origin = 'laptop'")
        #expect(hubHeads.rowCount == 1)
        // A new device clones all the rest.
        let clone = hub.run("tablet", ["clone", hub.url, "--ledger", ledger, "--device", "tablet"])
        #expect(clone.exitCode == 0 && clone.stderr.contains("phone/25"), "\(clone.stderr)")
        #expect(try LedgerStore.open(at: hub.path("tablet")).originHeads()["phone"] == 22)
    }

    /// A privileged role on the hub writes a well-formed event under the phone's name (the next
    /// sequence, a correct checksum, a believable clock, even the right previous hash): it is
    /// not signed by the phone's key, so every store that pulls it refuses it, naming it.
    @Test func anEventForgedInTheHubUnderAnotherDevicesNameWaitsInEveryPullingStore() throws {
        let hub = try HubFixture()
        hub.seed()
        #expect(try hub.join("laptop"))
        let ledger = UUID(uuidString: try hub.ledgerID("phone"))!
        let phone = try LedgerStore.open(at: hub.path("phone"))
        let head = try #require(try phone.originHeads()["phone"])
        let last = try #require(try phone.events(missingFrom: ["phone": head]).first { $0.origin == "phone" })
        var forged = last
        forged.id = UUID()
        forged.sequence = head + 1
        forged.hlc = HLC(rawValue: last.hlc.rawValue + 1)
        forged.payload = .tagAdded(TagAdded(goal: UUID(uuidString: goalIDs[0])!, tag: "forged"))
        forged.previousHash = EventChain.hash(last)
        forged.signature = nil
        forged.signer = nil
        try hub.admin().query(
            "INSERT INTO hub.events (ledger, origin, sequence, event_id, hlc, record) VALUES ($1, 'phone', $2, $3, $4, $5)",
            [
                .uuid(ledger), .int64(Int64(forged.sequence)), .uuid(forged.id), .int64(Int64(bitPattern: forged.hlc.rawValue)),
                .bytea(EventCodec.encode(forged)),
            ])
        let before = data(hub, "laptop")
        let r = hub.run("laptop", ["sync", hub.url])
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(r.stderr.contains("phone/\(head + 1)"), "\(r.stderr)")
        let unchanged = same(data(hub, "laptop"), before)
        #expect(unchanged)
        #expect(try LedgerStore.open(at: hub.path("laptop")).verify().isClean)
        // A new device clones the ledger, without the forged event, which it names.
        let clone = hub.run("tablet", ["clone", hub.url, "--ledger", ledger.uuidString, "--device", "tablet"])
        #expect(clone.exitCode == 0 && clone.stderr.contains("phone/\(head + 1)"), "\(clone.stderr)")
        #expect(try LedgerStore.open(at: hub.path("tablet")).originHeads()["phone"] == head)
    }

    /// A store restored from a backup appends again once it has exchanged events with the hub,
    /// even when the hub had nothing new for it.
    @Test func aRestoredStoreAppendsAgainAfterASyncWithNothingToPull() throws {
        let hub = try HubFixture()
        hub.seed()
        #expect(hub.run("phone", ["backup", hub.path("restored"), "--with-key"]).exitCode == 0)
        let refused = hub.run("restored", ["append"], input: HubFixture.progress(1))
        #expect(refused.exitCode == 5 && refused.stderr.contains("restored from a backup"), "\(refused.stderr)")
        #expect(hub.run("restored", ["sync", hub.url]).exitCode == 0)
        #expect(hub.run("restored", ["append"], input: HubFixture.progress(1)).exitCode == 0)
        #expect(hub.run("restored", ["sync", hub.url]).exitCode == 0)
        #expect(hub.run("restored", ["verify"]).exitCode == 0)
    }

    @Test func theHubItselfRefusesGapsTakenSequencesReusedIdsAndRecordsThatContradictTheirColumns() throws {
        let hub = try HubFixture()
        hub.seed()
        let ledger = UUID(uuidString: try hub.ledgerID("phone"))!
        let store = try LedgerStore.open(at: hub.path("phone"))
        let last = try #require(try store.event(origin: "phone", sequence: 21))
        let admin = try hub.admin()
        func push(_ events: [Event], columns: ((Event) -> (UUID, Int64))? = nil) throws -> PostgreSQLError? {
            try admin.execute("BEGIN")
            defer { _ = try? admin.execute("ROLLBACK") }
            do {
                try admin.copyIn("COPY hub.events (ledger, origin, sequence, event_id, hlc, record) FROM STDIN (FORMAT binary)") { w in
                    for e in events {
                        try w.row(fields: 6)
                        w.uuid(ledger)
                        w.text(e.origin)
                        w.int64(Int64(e.sequence))
                        let (id, hlc) = columns?(e) ?? (e.id, Int64(bitPattern: e.hlc.rawValue))
                        w.uuid(id)
                        w.int64(hlc)
                        w.bytes(EventCodec.encode(e))
                    }
                }
                return nil
            } catch let e as PostgreSQLError {
                return e
            }
        }
        func next(_ sequence: UInt64, id: UUID = UUID()) -> Event {
            var e = last
            e.sequence = sequence
            e.id = id
            e.hlc = HLC(rawValue: last.hlc.rawValue + sequence)
            return e
        }
        let before = try hub.hubState()
        // A sound push is taken (and rolled back by the helper).
        #expect(try push([next(22), next(23)]) == nil)
        let gap = try #require(try push([next(22), next(24, id: UUID(uuidString: "99999999-9999-4999-8999-999999999999")!)]))
        #expect(gap.sqlState == "23514")
        #expect(
            gap.message.contains("origin phone jumps from sequence 22 to 24 at event 99999999-9999-4999-8999-999999999999"),
            "\(gap.message)")
        let gapAtStart = try #require(try push([next(23)]))
        #expect(gapAtStart.message.contains("jumps from sequence 21 to 23"), "\(gapAtStart.message)")
        let taken = try #require(try push([next(21)]))
        #expect(taken.sqlState == "23505" && taken.detail?.contains("phone, 21") == true, "\(taken)")
        let reused = try #require(try push([next(22, id: last.id)]))
        #expect(reused.sqlState == "23505" && reused.detail?.contains(last.id.uuidString.lowercased()) == true, "\(reused)")
        let contradicting = try #require(try push([next(22)], columns: { _ in (UUID(), 5) }))
        #expect(contradicting.sqlState == "23514" && contradicting.constraint == "record_matches_columns", "\(contradicting)")
        let unchanged10 = same(try hub.hubState(), before)
        #expect(unchanged10)
    }

    // MARK: Access

    @Test func eachRoleReadsAndWritesOnlyTheLedgerItWasGranted() throws {
        let hub = try HubFixture()
        hub.seed("phone")
        hub.seed("desk")  // another person's ledger on the same hub
        let a = TestServer.roleName("alice")
        let b = TestServer.roleName("bob")
        let ledgerA = try hub.ledgerID("phone")
        let ledgerB = try hub.ledgerID("desk")
        let granted = CommandLineTool.run(["hub", "grant", hub.url, "--ledger", ledgerA, "--role", a], environment: [:], input: { Data() })
        #expect(granted.exitCode == 0, "\(granted.stderr)")
        #expect(granted.stdout.contains("(created)"))
        #expect(
            CommandLineTool.run(["hub", "grant", hub.url, "--ledger", ledgerB, "--role", b], environment: [:], input: { Data() }).exitCode
                == 0)

        for (role, ownLedger, ownDevice, other, otherDevice) in [
            (a, ledgerA, "phone", ledgerB, "desk"), (b, ledgerB, "desk", ledgerA, "phone"),
        ] {
            let url = hub.url(as: role)
            // Its own ledger: sync and clone work.
            hub.run(ownDevice, ["append"], input: HubFixture.progress(1))
            let own = hub.run(ownDevice, ["sync", url])
            #expect(own.exitCode == 0, "\(own.stderr)")
            #expect(hub.run("\(role)-clone", ["clone", url, "--ledger", ownLedger, "--device", "clone"]).exitCode == 0)
            // The other ledger: nothing to see, nothing to write.
            let clone = hub.run("\(role)-other", ["clone", url, "--ledger", other, "--device", "intruder"])
            #expect(clone.exitCode == 5 && clone.stderr.contains("holds no events"), "\(clone.stderr)")
            hub.run(otherDevice, ["append"], input: HubFixture.progress(1, from: 3))
            let before = try hub.hubState()
            let push = hub.run(otherDevice, ["sync", url])
            #expect(push.exitCode == 5)
            #expect(push.stderr.contains("row-level security"), "\(push.stderr)")
            let unchanged11 = same(try hub.hubState(), before)
            #expect(unchanged11)
            hub.run(otherDevice, ["sync", hub.url])

            let c = try Connection(url)
            let ownID = UUID(uuidString: ownLedger)!
            let otherID = UUID(uuidString: other)!
            #expect(try c.query("SELECT count(*) FROM hub.events WHERE ledger <> $1", [.uuid(ownID)]).int64(0, 0) == 0)
            #expect(try c.query("SELECT count(*) FROM hub.events").int64(0, 0) > 0)
            #expect(try c.query("SELECT count(*) FROM hub.heads WHERE ledger = $1", [.uuid(otherID)]).int64(0, 0) == 0)
            #expect(try c.query("SELECT count(*) FROM hub.access").int64(0, 0) == 1)
            let refused = [
                "INSERT INTO hub.events SELECT '\(other)', origin, sequence + 1000, gen_random_uuid(), hlc, record FROM hub.events LIMIT 1",
                "UPDATE hub.events SET hlc = hlc",
                "DELETE FROM hub.events",
                "UPDATE hub.heads SET head = 0",
                "INSERT INTO hub.access VALUES ('\(other)', current_user)",
                "SELECT count(*) FROM hub.events_p00",
                "CREATE TABLE hub.mine (x int)",
                "ALTER TABLE hub.events ADD COLUMN x int",
                "DROP TABLE hub.heads",
                "ALTER TABLE hub.events DISABLE ROW LEVEL SECURITY",
                "DROP POLICY own_ledgers_read ON hub.events",
            ]
            for sql in refused {
                do {
                    try c.execute(sql)
                    Issue.record("role \(role) was allowed: \(sql)")
                } catch {
                    #expect(error.sqlState == "42501", "\(sql): \(error)")
                }
            }
            // Granting is the owner's: a device role cannot grant itself another ledger.
            let grant = CommandLineTool.run(["hub", "grant", url, "--ledger", other, "--role", role], environment: [:], input: { Data() })
            #expect(grant.exitCode == 5, "\(grant.stderr)")
        }
    }
}
