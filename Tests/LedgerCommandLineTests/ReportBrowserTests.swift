import Foundation
import GoalLedger
import LedgerScenarios
import Testing

@testable import LedgerCommandLine

/// `ledger report` rendered by a real browser: headless Chromium dumps the DOM the page builds
/// and takes a screenshot; `Tools/check-report` (Python) validates the page with html5lib's
/// strict parser and each SVG as XML, counts cells, lanes and marks in the DOM, and counts the
/// screenshot's pixels of the report's colours. Chromium and html5lib are installed by
/// `Tools/setup`; without them these tests fail, saying so.
///
/// `LEDGER_REPORT_SCREENSHOT=docs/report.png swift test --filter ReportBrowser` also copies the
/// demo report's screenshot there (the one the README shows).
@Suite(.serialized) struct ReportBrowserTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let run = "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1"
    static let read = "4F2B8D10-6A7C-4E9D-8B1A-0C2D3E4F5A62"
    static let meditate = "7E3A1C44-1B2D-4C6E-9F10-2A3B4C5D6E71"
    static let lostHistoryGoal = "33333333-3333-4333-8333-333333333333"

    /// The demo's store: the demo's events, a second device editing the same title while apart,
    /// a sync, and the demo's year of two daily habits (as `Tools/demo` builds it).
    static func demoStore(_ f: CLIFixture) throws {
        f.now = "2026-11-05T19:30:00Z"
        let tablet = f.root + "/tablet"
        let steps: [(CommandLineTool.Result, String)] = [
            (f.run(["init", "--device", "phone"]), "init"),
            (f.run(["append", "--file", repository.appendingPathComponent("Tools/demo-events.jsonl").path]), "demo events"),
            (
                CommandLineTool.run(
                    ["--store", tablet, "--now", f.now, "clone", f.store, "--device", "tablet"], environment: [:], input: { Data() }),
                "clone"
            ),
            (
                f.run(
                    ["append"],
                    input: #"{"type":"goalEdited","goal":"\#(run)","title":"Run 7 km","at":"2026-11-05T20:00:00Z"}"#),
                "phone edit"
            ),
            (
                CommandLineTool.run(
                    ["--store", tablet, "--now", f.now, "append"], environment: [:],
                    input: {
                        Data(
                            """
                            {"type":"deviceConfigured","timeZone":"Asia/Tokyo","firstWeekday":2,"locale":"ja_JP","at":"2026-11-05T20:04:00Z"}
                            {"type":"goalEdited","goal":"\(run)","title":"Run 8 km","at":"2026-11-05T20:05:00Z"}
                            {"type":"progressRecorded","goal":"\(run)","amount":3,"at":"2026-11-05T20:06:00Z"}
                            """.utf8)
                    }), "tablet edit"
            ),
            (f.run(["sync", tablet]), "sync"),
            (f.run(["append", "--file", repository.appendingPathComponent("Tools/demo-history.jsonl").path]), "history"),
        ]
        for (r, what) in steps where r.exitCode != 0 { throw LedgerError(.internal, "\(what): \(r.stderr)") }
    }

    /// Renders `page` in headless Chromium (DOM dump and a screenshot of `size`), then checks it.
    static func render(_ page: String, size: (Int, Int), colors: [String], in directory: String) throws -> JSONValue {
        let chromium = try #require(chromiumPath(), "chromium is not installed: run Tools/setup (it installs Debian's chromium)")
        let dom = directory + "/dom.html"
        let png = directory + "/screenshot.png"
        let common = [
            "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-color-profile=srgb",
            "--user-data-dir=\(directory)/profile",
        ]
        let url = URL(fileURLWithPath: page).absoluteString
        let dumped = try runProcess(chromium, common + ["--dump-dom", url])
        #expect(dumped.status == 0, "chromium --dump-dom failed: \(dumped.stderr)")
        try dumped.stdout.write(to: URL(fileURLWithPath: dom))
        let shot = try runProcess(chromium, common + ["--screenshot=\(png)", "--window-size=\(size.0),\(size.1)", url])
        #expect(shot.status == 0 && FileManager.default.fileExists(atPath: png), "chromium --screenshot failed: \(shot.stderr)")
        return try check(page, dom: dom, png: png, colors: colors)
    }

    /// `Tools/check-report` on a page (and optionally its DOM dump and screenshot).
    static func check(_ page: String, dom: String = "-", png: String = "-", colors: [String] = []) throws -> JSONValue {
        let checked = try runProcess(
            "/usr/bin/env", ["python3", repository.appendingPathComponent("Tools/check-report").path, page, dom, png] + colors)
        guard checked.status == 0 else {
            throw LedgerError(
                .internal,
                "Tools/check-report failed (is html5lib installed? Tools/setup installs it): \(String(decoding: checked.stderr, as: UTF8.self))"
            )
        }
        return try JSONParser.parse(Array(checked.stdout))
    }

    static func chromiumPath() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for dir in path.split(separator: ":").map(String.init) + ["/usr/bin"] {
            let path = dir + "/chromium"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    static func runProcess(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: Data, stderr: Data) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "UTC"
        environment["LANG"] = "C"
        p.environment = environment
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // Read both pipes while the child runs, so a large DOM never blocks it.
        nonisolated(unsafe) var errData = Data()
        let reader = Thread { errData = err.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        while !reader.isFinished { usleep(1000) }
        return (p.terminationStatus, outData, errData)
    }

    static func number(_ v: JSONValue?) -> Double {
        if case .number(let n)? = v { return n }
        return -1
    }

    static func strings(_ v: JSONValue?) -> [String] {
        guard case .array(let items)? = v else { return [] }
        return items.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
    }

    static func goals(_ result: JSONValue) -> [String: JSONValue] {
        guard case .array(let items)? = result["goals"] else { return [:] }
        var out: [String: JSONValue] = [:]
        for g in items { if case .string(let id)? = g["goal"] { out[id] = g } }
        return out
    }

    @Test func theDemoReportRendersInChromiumWithItsCellsLanesAndColours() throws {
        let f = CLIFixture()
        try Self.demoStore(f)
        let page = f.root + "/report.html"
        let r = f.run(["report", "--goal", Self.run, "--goal", Self.read, "--goal", Self.meditate, "--out", page])
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(r.stdout == page + "\n")
        // Heat-map level 4, empty cells, progress marks and bars, the target line, the winner.
        let colors = ["#1b5e30", "#ebedf0", "#0969da", "#1a7f37", "#8250df", "#bc4c00"]
        let result = try Self.render(page, size: (1280, 1400), colors: colors, in: f.root)
        #expect(Self.strings(result["htmlErrors"]) == [], "the page is not valid HTML")
        #expect(Self.strings(result["svgErrors"]) == [], "an SVG is not well-formed XML")
        #expect(Self.number(result["svgCount"]) >= 9)

        let goals = Self.goals(result)
        #expect(goals.count == 3)
        // 2026-11-05 is a Thursday in Berlin, and the phone's weeks start on Monday: 52 whole
        // weeks, then Monday … Thursday.
        for (id, g) in goals { #expect(Self.number(g["cells"]) == Double(52 * 7 + 4), "calendar cells of \(id)") }
        #expect(Self.strings(goals[Self.run]?["lanes"]) == ["phone", "tablet"])
        #expect(Self.strings(goals[Self.read]?["lanes"]) == ["phone"])
        #expect(Self.number(goals[Self.run]?["kinds"]?["edited"]) == 3)
        // A year of the daily habit is capped to its latest events.
        #expect(Self.number(goals[Self.meditate]?["kinds"]?["progress"]) == 120)

        #expect(Self.number(result["width"]) == 1280 && Self.number(result["height"]) == 1400)
        #expect(Self.number(result["distinctColors"]) > 50, "the screenshot looks blank")
        for c in colors { #expect(Self.number(result["pixels"]?[c]) > 20, "no pixels of \(c) in the screenshot") }

        try Self.keepScreenshot(f.root + "/screenshot.png")
    }

    /// With `LEDGER_REPORT_SCREENSHOT=docs/report.png`, copies a screenshot there (`suffix`
    /// before the extension for the others).
    static func keepScreenshot(_ png: String, suffix: String = "") throws {
        guard let target = ProcessInfo.processInfo.environment["LEDGER_REPORT_SCREENSHOT"] else { return }
        var destination = target.hasPrefix("/") ? target : repository.appendingPathComponent(target).path
        if !suffix.isEmpty { destination = String(destination.dropLast(4)) + suffix + ".png" }
        try? FileManager.default.removeItem(atPath: destination)
        try FileManager.default.copyItem(atPath: png, toPath: destination)
    }

    @Test func theLostHistoryScenarioShowsBothDevicesAndTheRecoveredEntry() throws {
        let f = CLIFixture()
        let file = ScenarioTests.folder.appendingPathComponent("15-lost-history-recovered-by-migration.json").path
        let json = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        let stores = f.root + "/scenario"
        try FileManager.default.createDirectory(atPath: stores, withIntermediateDirectories: true)
        let outcome = try ScenarioRunner.run(try Scenario(json: json, name: "15"), in: stores)
        #expect(outcome.passed, "\(outcome.failures)")

        let page = f.root + "/lost-history.html"
        let r = CommandLineTool.run(
            ["--store", stores + "/phone", "--now", "2026-10-04T12:00:00Z", "report", "--out", page], environment: [:], input: { Data() })
        #expect(r.exitCode == 0, "\(r.stderr)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("A0000000-0000-4000-8000-000000000003"), "the recovered entry is named on the page")

        let recovered = "#9a6700"
        let result = try Self.render(page, size: (1280, 900), colors: [recovered, "#ebedf0", "#1f2328"], in: f.root)
        #expect(Self.strings(result["htmlErrors"]) == [])
        #expect(Self.strings(result["svgErrors"]) == [])
        let goal = try #require(Self.goals(result)[Self.lostHistoryGoal])
        // Sunday 2026-10-04 in Berlin with weeks from Sunday (the scenario's default): 52 weeks and one day.
        #expect(Self.number(goal["cells"]) == Double(52 * 7 + 1))
        #expect(Self.strings(goal["lanes"]) == ["phone", "tablet"])
        // a3, which the schema-1 view had lost, recovered by migration (and removed later).
        #expect(Self.number(goal["recovered"]) == 1)
        #expect(Self.number(goal["kinds"]?["history"]) == 3)
        #expect(Self.number(result["pixels"]?[recovered]) > 10, "the recovered mark is not drawn")
        #expect(Self.number(result["distinctColors"]) > 20)
        try Self.keepScreenshot(f.root + "/screenshot.png", suffix: "-lost-history")
    }

    @Test func hostileTextStaysTextAndTheJapanesePageIsValidToo() throws {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        let goal = "C0000000-0000-4000-8000-000000000001"
        let title = #"<script>alert(\"x\")</script> & 'q' \u05e9\u05dc\u05d5\u05dd ]]>"#
        let lines = [
            #"{"type":"deviceConfigured","timeZone":"Asia/Tokyo","firstWeekday":2,"locale":"ja_JP","at":"2026-11-01T00:00:00Z"}"#,
            #"{"type":"goalCreated","goal":"\#(goal)","title":"\#(title)","cadence":"weekly","progress":{"kind":"measurable","target":3,"unit":"<b>&amp;"},"tags":["</svg><svg onload=x>","a\"b"],"reminder":{"hour":8},"at":"2026-11-01T00:00:00Z"}"#,
            #"{"type":"progressRecorded","goal":"\#(goal)","amount":2,"at":"2026-11-03T00:00:00Z"}"#,
        ]
        let appended = f.run(["append"], input: lines.joined(separator: "\n"))
        try #require(appended.exitCode == 0, "\(appended.stderr)")
        let page = f.root + "/hostile.html"
        #expect(f.run(["report", "--out", page]).exitCode == 0)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(!html.contains("<script"))
        #expect(!html.contains("onload=x>"))
        #expect(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39; שלום"))
        #expect(html.contains("<html lang=\"ja\">"))
        #expect(html.contains("目標台帳レポート"))
        #expect(html.contains("今後7日間のリマインダー"))
        let result = try Self.check(page)
        #expect(Self.strings(result["htmlErrors"]) == [], "the page is not valid HTML")
        #expect(Self.strings(result["svgErrors"]) == [])
    }
}
