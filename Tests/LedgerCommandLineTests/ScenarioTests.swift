import Foundation
import GoalLedger
import HubTestSupport
import Testing

@testable import LedgerCommandLine

struct ScenarioTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Scenarios")

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasSuffix(".json") }.sorted().map { folder.appendingPathComponent($0).path }
    }

    @Test func everyScenarioInTheRepositoryPasses() {
        let files = Self.files
        #expect(files.count >= 12)
        let r = CommandLineTool.run(["scenario", "run"] + files, environment: [:], input: { Data() })
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("\(files.count) passed, 0 failed"), "\(r.stdout)")
    }

    /// The same files, with the same expectations, every sync going through a PostgreSQL hub.
    @Test func everyScenarioInTheRepositoryPassesThroughAHub() throws {
        let files = Self.files
        let url = try TestServer.database()
        let r = CommandLineTool.run(["scenario", "run", "--hub", url] + files, environment: [:], input: { Data() })
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("\(files.count) passed, 0 failed"), "\(r.stdout)")
    }

    /// The same files through the sync service (`ledger serve`): every sync signed by its device.
    /// A ledger founded before signing cannot reach the service (its devices hold no key until
    /// they migrate), so the schema-1 scenario stays out.
    @Test func everySignedScenarioPassesThroughTheSyncService() throws {
        let files = Self.files.filter { !$0.contains("15-lost-history") }
        let f = try ServiceFixture()
        let r = CommandLineTool.run(["scenario", "run", "--hub", f.base] + files, environment: [:], input: { Data() })
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("\(files.count) passed, 0 failed"), "\(r.stdout)")
    }

    @Test func aFailingExpectationSaysWhatWasExpectedAndFound() throws {
        let f = CLIFixture()
        let file = f.root + "/failing.json"
        try #"""
        {"name":"failing","devices":[{"name":"phone"},{"name":"tablet"}],"steps":[
          {"append":"phone","at":"2026-11-02T07:00:00Z","events":[{"type":"goalCreated","goal":"11111111-1111-4111-8111-111111111111","title":"Run"}]},
          {"expect":{"device":"tablet","goal":"11111111-1111-4111-8111-111111111111","exists":true}},
          {"sync":["phone","tablet"]},
          {"expect":{"device":"tablet","goal":"11111111-1111-4111-8111-111111111111","title":"Walk"}}
        ]}
        """#.write(toFile: file, atomically: true, encoding: .utf8)
        let r = f.run(["scenario", "run", file])
        #expect(r.exitCode == 1)
        #expect(
            r.stdout.contains(#"steps[1]: device tablet goal 11111111-1111-4111-8111-111111111111 exists: expected true, found false"#),
            "\(r.stdout)")
        #expect(
            r.stdout.contains(#"steps[3]: device tablet goal 11111111-1111-4111-8111-111111111111 title: expected "Walk", found "Run""#),
            "\(r.stdout)")
        #expect(r.stdout.contains("0 passed, 1 failed"))
    }

    @Test(arguments: [
        (#"{"devices":[],"steps":[]}"#, "devices"),
        (#"{"devices":[{"name":"phone"}],"steps":[{"sync":["phone","ghost"]}]}"#, "steps[0].sync"),
        (
            #"{"devices":[{"name":"phone"}],"steps":[{"append":"phone","at":"2026-11-02T07:00:00Z","events":[{"type":"goalCreated","goal":"11111111-1111-4111-8111-111111111111","title":7}]}]}"#,
            "steps[0].events[0].title"
        ),
        (#"{"devices":[{"name":"phone"}],"steps":[{"teleport":"phone"}]}"#, "steps[0]"),
        (#"{"devices":[{"name":"phone"}],"steps":[{"sync":["phone","hub"]}]}"#, "steps[0].sync[1]"),
        (#"{"hub":true,"devices":[{"name":"hub"}],"steps":[]}"#, "devices[0].name"),
        (#"{"devices":[{"name":"phone","timeZone":"Nowhere/Land"}],"steps":[]}"#, "devices[0].timeZone"),
    ])
    func invalidScenarioFilesNameThePlace(_ text: String, _ place: String) throws {
        let f = CLIFixture()
        let file = f.root + "/bad.json"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let r = f.run(["scenario", "run", file])
        #expect(r.exitCode == 3)
        #expect(r.stderr.contains("bad: \(place)"), "\(r.stderr)")
    }
}
