import Foundation
import GoalLedger
import HubTestSupport
import LedgerCommandLine
import PostgreSQL
import Synchronization
import Testing

/// Devices syncing with one hub at once, and a hub or a device failing in the middle.
struct HubFaultTests {
    func requireBinary() throws {
        try #require(FileManager.default.isExecutableFile(atPath: ledgerExecutable().path), "build the ledger executable first")
    }

    @Test func threeDevicesSyncingAtOnceRepeatedlyConverge() throws {
        let hub = try HubFixture()
        hub.seed("phone")
        let ledger = try hub.ledgerID("phone")
        let devices = ["phone", "tablet", "watch"]
        _ = ledger
        for d in devices.dropFirst() { #expect(try hub.join(d)) }
        let rounds = 5
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: devices.count) { i in
            for round in 0..<rounds {
                let appended = hub.run(devices[i], ["append"], input: HubFixture.progress(20, from: round * 20))
                let synced = hub.run(devices[i], ["sync", hub.url])
                if appended.exitCode != 0 || synced.exitCode != 0 {
                    failures.withLock { $0.append("\(devices[i]) round \(round): \(appended.stderr)\(synced.stderr)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        // One more pass each brings everyone everything.
        for d in devices { #expect(hub.run(d, ["sync", hub.url]).exitCode == 0) }
        let replays = devices.map { hub.run($0, ["replay", "--json"]).stdout }
        #expect(Set(replays).count == 1)
        for d in devices {
            #expect(hub.run(d, ["verify"]).exitCode == 0, "\(d)")
            let status = try JSONParser.parse(hub.run(d, ["status", "--json"]).stdout)
            #expect(status["events"] == .number(Double(23 + devices.count * rounds * 20)))
        }
        // 21 seeded events, two enrolments, the rounds.
        #expect(try hub.count() == 23 + devices.count * rounds * 20)
    }

    @Test func twoProcessesSyncingOneStoreAtOnceBothFinishAndNothingIsDuplicated() throws {
        try requireBinary()
        let hub = try HubFixture()
        hub.seed("phone")
        #expect(try hub.join("tablet"))
        hub.run("tablet", ["append"], input: HubFixture.progress(2_000))
        hub.run("tablet", ["sync", hub.url])
        hub.run("phone", ["append"], input: HubFixture.progress(2_000, from: 5))
        let results = Mutex<[Int: (status: Int32, stdout: String, stderr: String)]>([:])
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            let r = try? hub.child("phone", ["sync", hub.url])
            results.withLock { $0[i] = r }
        }
        for i in 0..<2 {
            let r = results.withLock { $0[i] }
            #expect(r?.status == 0, "\(r?.stderr ?? "did not run")")
        }
        let store = try LedgerStore.open(at: hub.path("phone"))
        #expect(try store.lastPosition() == 4_022)
        #expect(try store.verify().isClean)
        #expect(try hub.count() == 4_022)
        hub.run("tablet", ["sync", hub.url])
        let unchanged1 = same(hub.run("phone", ["replay", "--json"]).stdout, hub.run("tablet", ["replay", "--json"]).stdout)
        #expect(unchanged1)
    }

    /// The server is stopped at once (as in a crash) at several moments of a sync that pushes
    /// and pulls: the sync fails with exit 5 and libpq's reason and the store is unchanged, or it
    /// had finished; the hub holds the whole push or none of it; the next sync completes.
    @Test func aServerStoppedInTheMiddleOfASyncLeavesBothSidesWholeAndTheNextSyncCompletes() throws {
        try requireBinary()
        let directory = try TestServer.script(["start", "--owner", String(getpid())])
        defer { _ = try? TestServer.script(["stop", directory]) }
        let events = 3_000
        func prepare() throws -> HubFixture {
            let hub = try HubFixture(socketDirectory: directory)
            hub.seed("tablet")
            #expect(try hub.join("phone", sponsor: "tablet"))
            hub.run("tablet", ["append"], input: HubFixture.progress(events))
            hub.run("tablet", ["sync", hub.url])
            hub.run("phone", ["append"], input: HubFixture.progress(events, from: 3))
            return hub
        }
        // How long a whole sync takes here.
        let calibration = try prepare()
        let started = Date()
        #expect(try calibration.child("phone", ["sync", calibration.url]).status == 0)
        let duration = Date().timeIntervalSince(started)
        var interrupted = 0
        for fraction in [0.1, 0.3, 0.5, 0.7, 0.9] {
            let hub = try prepare()
            let before = hub.state("phone")
            let p = Process()
            p.executableURL = ledgerExecutable()
            p.arguments = ["--store", hub.path("phone"), "sync", hub.url]
            let err = Pipe()
            p.standardOutput = FileHandle.nullDevice
            p.standardError = err
            try p.run()
            Thread.sleep(forTimeInterval: duration * fraction)
            try TestServer.script(["halt", directory])
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            try TestServer.script(["start", directory])
            #expect(p.terminationStatus == 0 || p.terminationStatus == 5, "at \(fraction): exit \(p.terminationStatus) \(stderr)")
            let pushed = try hub.count("SELECT count(*) FROM hub.events WHERE origin = 'phone'")
            #expect(pushed == 0 || pushed == events, "at \(fraction): the hub holds \(pushed) of the push")
            if p.terminationStatus == 5 {
                interrupted += 1
                #expect(stderr.contains("the hub at"), "\(stderr)")
                let unchanged2 = same(hub.state("phone"), before)
                #expect(unchanged2, "at \(fraction): the store changed")
            }
            let again = hub.run("phone", ["sync", hub.url])
            #expect(again.exitCode == 0, "at \(fraction): \(again.stderr)")
            let tablet = hub.run("tablet", ["sync", hub.url])
            #expect(tablet.exitCode == 0, "at \(fraction): the tablet's sync: \(tablet.stderr)")
            let unchanged3 = same(hub.run("phone", ["replay", "--json"]).stdout, hub.run("tablet", ["replay", "--json"]).stdout)
            #expect(
                unchanged3,
                "at \(fraction): phone \(hub.run("phone", ["status"]).stdout) tablet \(hub.run("tablet", ["status"]).stdout); the tablet's sync: \(tablet.stdout)")
            #expect(hub.run("phone", ["verify"]).exitCode == 0)
            #expect(try hub.count() == 22 + 2 * events)
        }
        #expect(interrupted > 0, "no stop landed inside a sync")
    }

    /// A push the hub acknowledged survives a crash of the server right after it. The
    /// throwaway server runs with `synchronous_commit = off` (a commit reaches its write-ahead
    /// log up to a fraction of a second later, and a crash in between loses it); each hub
    /// transaction asks for it on. Before, a device's push could be gone from the hub after a
    /// crash though its sync had reported it, and the devices pulling from the hub went without
    /// it until that device synced again.
    @Test func aPushTheHubAcknowledgedSurvivesACrashRightAfterIt() throws {
        try requireBinary()
        let directory = try TestServer.script(["start", "--owner", String(getpid())])
        defer { _ = try? TestServer.script(["stop", directory]) }
        let hub = try HubFixture(socketDirectory: directory)
        hub.seed("phone")
        for round in 0..<3 {
            #expect(hub.run("phone", ["append"], input: HubFixture.progress(200, from: round * 200)).exitCode == 0)
            let synced = hub.run("phone", ["sync", hub.url])
            #expect(synced.exitCode == 0, "\(synced.stderr)")
            try TestServer.script(["halt", directory])
            try TestServer.script(["start", directory])
            let held = try LedgerStore.open(at: hub.path("phone")).lastPosition()
            #expect(try hub.count() == Int(held), "round \(round): the phone holds \(held) events")
        }
    }

    @Test func killedPullsLeaveAStoreThatOpensAndVerifies() throws {
        try requireBinary()
        let hub = try HubFixture()
        hub.seed("phone")
        #expect(try hub.join("tablet"))
        hub.run("tablet", ["append"], input: HubFixture.progress(3_000))
        hub.run("tablet", ["sync", hub.url])
        let pristine = hub.root + "/pristine"
        try FileManager.default.copyItem(atPath: hub.path("phone"), toPath: pristine)
        func restore() throws {
            try? FileManager.default.removeItem(atPath: hub.path("phone"))
            try FileManager.default.copyItem(atPath: pristine, toPath: hub.path("phone"))
        }
        var loop = KillLoop(seed: 0x4B1D)
        let arguments = ["--store", hub.path("phone"), "sync", hub.url]
        try restore()
        let duration = try loop.calibrate(arguments)
        var outcomes = [0, 0]
        try loop.run(times: 30, duration: duration, prepare: { _ in try restore() }, arguments: arguments) { o in
            let store = try LedgerStore.open(at: hub.path("phone"))
            let count = try store.lastPosition()
            #expect(count == 22 || count == 3_022, "attempt \(o.attempt): \(count) events")
            if !o.stdout.isEmpty { #expect(count == 3_022, "attempt \(o.attempt): a reported pull is missing") }
            outcomes[count == 22 ? 0 : 1] += 1
            let report = try store.verify()
            #expect(report.isClean, "attempt \(o.attempt): \(report.problems.prefix(3))")
        }
        #expect(outcomes[0] > 0, "no kill landed before the pull committed: \(outcomes)")
        // The hub is untouched by the kills, and a last sync completes.
        #expect(hub.run("phone", ["sync", hub.url]).exitCode == 0)
        #expect(try hub.count() == 3_022)
    }
}
