import Foundation
import GoalLedger
import Testing

@testable import LedgerCommandLine

/// Text from a store reaches a terminal as text: escape sequences in titles, details, units,
/// tags and values are printed as visible escapes by every text printer, never acted on.
struct TerminalTextTests {
    static let goal = "D0000000-0000-4000-8000-000000000001"
    /// OSC 52 (set the clipboard), a screen clear, a C1 CSI, a bell, a fake line, a bidi override.
    static let hostile = #"Run\u001b]52;c;ZWNobyBwd25lZA==\u0007\u001b[2J\u009b31mX\u000a#99 fake\u202e"#

    /// Within a unit's 32 characters: a screen clear and a C1 CSI.
    static let shortHostile = #"km\u001b[2J\u009b1m"#

    static func fixture() throws -> CLIFixture {
        let f = CLIFixture()
        try #require(f.run(["init", "--device", "phone"]).exitCode == 0)
        let lines = [
            #"{"type":"goalCreated","goal":"\#(goal)","title":"\#(hostile)","details":"d\#(hostile)","cadence":"daily","progress":{"kind":"measurable","target":5,"unit":"\#(Self.shortHostile)"},"tags":["t\#(hostile)"],"reminder":{"hour":7},"at":"2026-11-05T10:00:00Z"}"#,
            #"{"type":"progressRecorded","goal":"\#(goal)","amount":2,"at":"2026-11-05T10:05:00Z"}"#,
            #"{"type":"goalEdited","goal":"\#(goal)","title":"e\#(hostile)","at":"2026-11-05T10:10:00Z"}"#,
        ]
        let r = f.run(["append"], input: lines.joined(separator: "\n"))
        try #require(r.exitCode == 0, "\(r.stderr)")
        return f
    }

    /// Whether `text` holds anything a terminal acts on other than the line feeds ending lines.
    static func actionable(_ text: String) -> [String] {
        text.unicodeScalars.filter { $0 != "\n" && TerminalText.needsEscape($0) }.map { String(format: "U+%04X", $0.value) }
    }

    @Test(arguments: [["goals"], ["show", goal], ["log"], ["audit", goal], ["replay"], ["pending"]])
    func everyTextPrinterEscapesControlCharactersFromTheStore(_ command: [String]) throws {
        let f = try Self.fixture()
        let r = f.run(command)
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(Self.actionable(r.stdout) == [], "\(command): \(r.stdout.debugDescription)")
        // Shown, inert.
        #expect(r.stdout.contains("]52;c;ZWNobyBwd25lZA=="), "\(r.stdout)")
        if ["goals", "show", "replay"].contains(command[0]) {
            // As written, each control as its code point (log and audit print values as JSON,
            // whose escapes come first).
            #expect(r.stdout.contains(#"\u{1B}]52;c;ZWNobyBwd25lZA==\u{7}\u{1B}[2J\u{9B}31mX\u{A}#99 fake\u{202E}"#), "\(r.stdout)")
            #expect(r.stdout.contains(#"km\u{1B}[2J\u{9B}1m"#), "\(r.stdout)")
        }
        // The fake line stays inside its own.
        #expect(!r.stdout.split(separator: "\n").contains { $0.hasPrefix("#99 fake") })
        // JSON escapes on its own, unchanged.
        if command != ["pending"] {
            let json = f.run(command + ["--json"])
            #expect(json.exitCode == 0)
            #expect(Self.actionable(json.stdout).allSatisfy { ["U+009B", "U+202E"].contains($0) }, "\(json.stdout.debugDescription)")
        }
    }

    @Test func conflictsEscapeBothSidesValues() throws {
        let f = try Self.fixture()
        let tablet = f.root + "/tablet"
        #expect(CLIFixture.runAt(tablet, ["clone", f.store, "--device", "tablet"]).exitCode == 0)
        let edit = { (title: String) in #"{"type":"goalEdited","goal":"\#(Self.goal)","title":"\#(title)","at":"2026-11-05T11:00:00Z"}"# }
        #expect(f.run(["append"], input: edit("phone\(Self.hostile)")).exitCode == 0)
        #expect(CLIFixture.runAt(tablet, ["append"], input: edit("tablet\(Self.hostile)")).exitCode == 0)
        #expect(f.run(["sync", tablet]).exitCode == 0)
        let r = f.run(["conflicts"])
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(r.stdout.contains("title:"), "\(r.stdout)")
        #expect(Self.actionable(r.stdout) == [], "\(r.stdout.debugDescription)")
        let audit = f.run(["audit", Self.goal])
        #expect(audit.stdout.contains("conflicts:") && Self.actionable(audit.stdout) == [], "\(audit.stdout.debugDescription)")
    }

    @Test func escapingKeepsOrdinaryTextAndShowsEachControlAsItsCodePoint() {
        #expect(TerminalText.escaped("Läufe 5 km → 東京 שלום 🏃") == "Läufe 5 km → 東京 שלום 🏃")
        #expect(TerminalText.escaped("a\u{1B}[2Jb\u{9B}c\u{7F}\td\r\n") == #"a\u{1B}[2Jb\u{9B}c\u{7F}\u{9}d\u{D}\u{A}"#)
        #expect(TerminalText.escaped("x\u{2067}y\u{2028}", keepingLineBreaks: true) == #"x\u{2067}y\u{2028}"#)
        #expect(TerminalText.escaped("one\ntwo\u{1B}", keepingLineBreaks: true) == "one\ntwo\\u{1B}")
    }
}
