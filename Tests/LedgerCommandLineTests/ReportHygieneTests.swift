import Foundation
import GoalLedger
import Testing

/// The report keeps what a person wrote from reordering the page around it, and is the
/// owner's file alone.
struct ReportHygieneTests {
    static let goal = "C0000000-0000-4000-8000-000000000002"

    /// Unicode scalars of `text` as `U+XXXX`, for messages.
    static func codes(_ text: String) -> String { text.unicodeScalars.map { String(format: "U+%04X", $0.value) }.joined(separator: " ") }

    @Test func bidiControlsInTitlesUnitsTagsAndValuesAreIsolatedAndCannotReorderTheirSurroundings() throws {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        // RLO and RLE never closed, a PDI that would close an isolate early, LRI, RLI.
        let title = #"abc\u202edef\u2069ghi\u2066\u202b"#
        let lines = [
            #"{"type":"goalCreated","goal":"\#(Self.goal)","title":"\#(title)","cadence":"daily","progress":{"kind":"measurable","target":3,"unit":"k\u202em\u2067"},"tags":["t\u202eag"],"reminder":{"hour":8},"at":"2026-11-01T00:00:00Z"}"#,
            #"{"type":"progressRecorded","goal":"\#(Self.goal)","amount":2,"at":"2026-11-03T00:00:00Z"}"#,
            #"{"type":"goalEdited","goal":"\#(Self.goal)","title":"new\u202d\u2068","details":"x\u202ey","at":"2026-11-04T00:00:00Z"}"#,
        ]
        let appended = f.run(["append"], input: lines.joined(separator: "\n"))
        try #require(appended.exitCode == 0, "\(appended.stderr)")
        let page = f.root + "/r.html"
        let r = f.run(["report", "--out", page])
        #expect(r.exitCode == 0, "\(r.stderr)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        // No embedding, override or isolate of the author's is left; the page's own isolates
        // pair up, none inside another.
        let kept = html.unicodeScalars.filter { (0x202A...0x202E).contains($0.value) || $0 == "\u{2066}" || $0 == "\u{2067}" }
        #expect(kept.isEmpty, "\(Self.codes(String(String.UnicodeScalarView(kept))))")
        var depth = 0
        var balanced = true
        for s in html.unicodeScalars {
            if s == "\u{2068}" {
                depth += 1
                if depth > 1 { balanced = false }
            } else if s == "\u{2069}" {
                depth -= 1
                if depth < 0 { balanced = false }
            }
        }
        #expect(balanced && depth == 0)
        // Where the page has no element to isolate it: SVG tooltips and labels, table cells.
        #expect(html.contains("<title>Last 53 weeks: \u{2068}new\u{2069}</title>"), "the calendar's tooltip")
        #expect(html.contains("<title>Recent periods against the target: \u{2068}new\u{2069}</title>"), "the chart's tooltip")
        #expect(html.contains("Target 3 \u{2068}km\u{2069}</text>"), "the chart's target label")
        #expect(html.contains("\u{2068}t" + "ag\u{2069}"), "the tag")
        #expect(html.contains("title: \u{2068}abcdefghi\u{2069} → \u{2068}new\u{2069}"), "the edit in the history")
    }

    @Test func theReportIsOwnerOnlyLikeExportsEvenWhenItReplacesAnotherFile() throws {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        let page = f.root + "/r.html"
        try Data("old".utf8).write(to: URL(fileURLWithPath: page))
        #expect(chmod(page, 0o644) == 0)
        #expect(f.run(["report", "--out", page]).exitCode == 0)
        var s = stat()
        #expect(stat(page, &s) == 0)
        #expect(s.st_mode & 0o777 == 0o600, "mode \(String(s.st_mode & 0o777, radix: 8))")
        let export = f.root + "/e.ledger"
        #expect(f.run(["export", "--out", export]).exitCode == 0)
        #expect(stat(export, &s) == 0 && s.st_mode & 0o777 == 0o600)
    }
}
