import Foundation
import GoalLedger
import LedgerCommandLine
import Testing

/// `append` reads only as far as its input can hold events: a line longer than any event is
/// refused as soon as it is read, from a pipe, a device or a file.
struct BoundedInputTests {
    static let now = "2026-11-05T12:00:00Z"

    func requireBinary() throws {
        try #require(FileManager.default.isExecutableFile(atPath: ledgerExecutable().path), "build the ledger executable first")
    }

    /// Runs `script` with `sh -c`, `$0` the built `ledger`, within `seconds` (then it is killed):
    /// its status, standard output and error, and whether it finished in time.
    func shell(_ script: String, seconds: Double = 30) throws -> (status: Int32, stdout: String, stderr: String, inTime: Bool) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", script, ledgerExecutable().path]
        p.environment = ProcessInfo.processInfo.environment.merging(["TZ": "UTC", "LANG": "C", "LC_ALL": "C"]) { $1 }
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(seconds)
        var inTime = true
        while p.isRunning {
            if Date() > deadline {
                inTime = false
                kill(-p.processIdentifier, SIGKILL)
                p.terminate()
                break
            }
            usleep(20_000)
        }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self), inTime)
    }

    @Test func anEndlessInputWithoutALineEndIsRefusedAtOnce() throws {
        try requireBinary()
        let dir = CLIFixture()
        let store = dir.root + "/s"
        #expect(try shell(#""$0" --store "\#(store)" --now \#(Self.now) init --device phone"#).status == 0)
        for script in [
            #"exec "$0" --store "\#(store)" --now \#(Self.now) append < /dev/zero"#,
            #"exec "$0" --store "\#(store)" --now \#(Self.now) append --file /dev/zero"#,
            #"exec "$0" --store "\#(store)" --now \#(Self.now) append --expect-version 0 < /dev/zero"#,
            #"head -c 3000000 /dev/zero | tr '\0' ' ' | "$0" --store "\#(store)" --now \#(Self.now) append"#,
        ] {
            let r = try shell(script)
            #expect(r.inTime, "\(script) was still reading")
            #expect(r.status == 3, "\(script): \(r.stderr)")
            #expect(r.stderr.contains("line 1: the line is longer than 1048576 bytes"), Comment(rawValue: r.stderr))
        }
        #expect(try shell(#""$0" --store "\#(store)" log"#).stdout.isEmpty, "nothing was written")
    }

    @Test func endlessInputThatIsNotEventsStopsAtItsFirstLine() throws {
        try requireBinary()
        let dir = CLIFixture()
        let store = dir.root + "/s"
        #expect(try shell(#""$0" --store "\#(store)" --now \#(Self.now) init --device phone"#).status == 0)
        for (script, message) in [
            (#"yes garbage | "$0" --store "\#(store)" --now \#(Self.now) append"#, "line 1: malformed JSON"),
            (#"yes garbage | "$0" --store "\#(store)" --now \#(Self.now) append --expect-version 0"#, "line 1: malformed JSON"),
            (#"yes '{"type":"goalCreated"}' | "$0" --store "\#(store)" --now \#(Self.now) append --expect-version 0"#, "line 1: field \"goal\""),
        ] {
            let r = try shell(script)
            #expect(r.inTime, "\(script) was still reading")
            #expect(r.status == 3, "\(script): \(r.stderr)")
            #expect(r.stderr.contains(message), Comment(rawValue: r.stderr))
        }
        #expect(try shell(#""$0" --store "\#(store)" log"#).stdout.isEmpty, "nothing was written")
    }

    @Test func aLineTooLongIsNamedAndNothingBeforeItIsWritten() throws {
        try requireBinary()
        let dir = CLIFixture()
        let store = dir.root + "/s"
        let goal = "5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9E11"
        let created = #"{"type":"goalCreated","goal":"\#(goal)","title":"Read","cadence":"daily","progress":{"kind":"outcome"}}"#
        let file = dir.root + "/lines"
        try Data((created + "\n" + String(repeating: " ", count: 2 << 20) + "\n").utf8).write(to: URL(fileURLWithPath: file))
        #expect(try shell(#""$0" --store "\#(store)" --now \#(Self.now) init --device phone"#).status == 0)
        for script in [
            #"exec "$0" --store "\#(store)" --now \#(Self.now) append --file "\#(file)""#,
            #"cat "\#(file)" | "$0" --store "\#(store)" --now \#(Self.now) append"#,
        ] {
            let r = try shell(script)
            #expect(r.status == 3, "\(script): \(r.stderr)")
            #expect(r.stderr.contains("line 2: the line is longer than"), Comment(rawValue: r.stderr))
        }
        #expect(try shell(#""$0" --store "\#(store)" goals --json"#).stdout.contains(#""Read""#) == false, "nothing was written")
        // The same event through a pipe, in lines of ordinary length, is appended.
        let piped = try shell(#"printf '%s\n' '\#(created)' | "$0" --store "\#(store)" --now \#(Self.now) append"#)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try shell(#""$0" --store "\#(store)" goals --json"#).stdout.contains(#""Read""#))
    }

    /// A line too long after more than a chunk of good lines (read and parsed while the chunk
    /// before is written) still stops the batch: it is named by its line, nothing is written.
    @Test func aLineTooLongAfterManyChunksIsNamedAndNothingIsWritten() throws {
        try requireBinary()
        let dir = CLIFixture()
        let store = dir.root + "/s"
        let good = 30_000
        var text = ""
        for i in 0..<good {
            let goal = String(format: "5E0B1E4A-3C6A-4A44-9F1A-%012X", i)
            text += #"{"type":"goalCreated","goal":"\#(goal)","title":"Goal \#(i)","cadence":"daily","progress":{"kind":"outcome"}}"# + "\n"
        }
        #expect(text.utf8.count > 3 << 20, "the good lines span more than a chunk (2 MiB)")
        let file = dir.root + "/lines"
        try Data((text + String(repeating: " ", count: 2 << 20) + "\n").utf8).write(to: URL(fileURLWithPath: file))
        #expect(try shell(#""$0" --store "\#(store)" --now \#(Self.now) init --device phone"#).status == 0)
        for script in [
            #"exec "$0" --store "\#(store)" --now \#(Self.now) append --file "\#(file)""#,
            #"cat "\#(file)" | "$0" --store "\#(store)" --now \#(Self.now) append"#,
        ] {
            let r = try shell(script, seconds: 120)
            #expect(r.status == 3, "\(script): \(r.stderr)")
            #expect(r.stderr.contains("line \(good + 1): the line is longer than"), Comment(rawValue: r.stderr))
        }
        #expect(try shell(#""$0" --store "\#(store)" status --json"#).stdout.contains(#""events":0"#), "nothing was written")
    }
}
