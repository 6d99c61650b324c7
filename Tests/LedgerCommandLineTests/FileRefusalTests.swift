import Foundation
import GoalLedger
import LedgerCommandLine
import Testing

/// `export`, `report` and `backup` write a new path or replace a regular file, never a
/// directory, a device, a FIFO or a symbolic link; `import` reads a pipe as `append` does.
struct FileRefusalTests {
    static let goal = "5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9E11"
    static let created = #"{"type":"goalCreated","goal":"\#(goal)","title":"Read","cadence":"daily","progress":{"kind":"outcome"}}"#

    /// A store with one goal, and a directory, a FIFO, a symbolic link and (as root) a device
    /// node in its fixture's directory.
    static func fixture() throws -> (CLIFixture, [String: String]) {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        #expect(f.run(["append"], input: created).exitCode == 0)
        var targets = ["directory": f.root + "/directory", "FIFO": f.root + "/fifo", "symbolic link": f.root + "/link"]
        try FileManager.default.createDirectory(atPath: targets["directory"]!, withIntermediateDirectories: false)
        #expect(mkfifo(targets["FIFO"]!, 0o600) == 0)
        FileManager.default.createFile(atPath: f.root + "/target", contents: Data("kept".utf8))
        #expect(symlink(f.root + "/target", targets["symbolic link"]!) == 0)
        if geteuid() == 0 {
            // A copy of /dev/null's node, in the fixture's own directory.
            var null = stat()
            if stat("/dev/null", &null) == 0, mknod(f.root + "/device", S_IFCHR | 0o600, null.st_rdev) == 0 {
                targets["device"] = f.root + "/device"
            }
        }
        return (f, targets)
    }

    static func kind(_ path: String) -> mode_t {
        var s = stat()
        guard lstat(path, &s) == 0 else { return 0 }
        return s.st_mode & S_IFMT
    }

    @Test func exportAndReportReplaceNothingButARegularFile() throws {
        let (f, targets) = try Self.fixture()
        for (what, path) in targets {
            let before = Self.kind(path)
            for args in [["export", "--out", path], ["report", "--out", path]] {
                let r = f.run(args)
                #expect(r.exitCode == 3, "\(args) over a \(what): \(r.stderr)")
                #expect(r.stderr.contains(path) && r.stderr.contains("only a regular file or a new path is replaced"), "\(r.stderr)")
                #expect(Self.kind(path) == before, "\(args) replaced the \(what)")
            }
            let backup = f.run(["backup", path])
            #expect(backup.exitCode == 3, "backup over a \(what): \(backup.stderr)")
            #expect(Self.kind(path) == before, "backup replaced the \(what)")
        }
        #expect(try String(contentsOfFile: f.root + "/target", encoding: .utf8) == "kept")
        // A regular file and a new path are written.
        FileManager.default.createFile(atPath: f.root + "/old.ledger", contents: Data("old".utf8))
        #expect(f.run(["export", "--out", f.root + "/old.ledger"]).exitCode == 0)
        #expect(f.run(["export", "--out", f.root + "/new.ledger"]).exitCode == 0)
        #expect(f.run(["report", "--out", f.root + "/report.html"]).exitCode == 0)
    }

    @Test func importReadsAPipeAndAFIFO() throws {
        let bounded = BoundedInputTests()
        try bounded.requireBinary()
        let (f, _) = try Self.fixture()
        let file = f.root + "/events.ledger"
        #expect(f.run(["export", "--out", file]).exitCode == 0)
        for (name, script) in [
            ("pipe", #"cat "\#(file)" | "$0" --store "\#(f.root)/a" import /dev/stdin"#),
            ("FIFO", #"mkfifo "\#(f.root)/in" && (cat "\#(file)" > "\#(f.root)/in" &) && "$0" --store "\#(f.root)/b" import "\#(f.root)/in""#),
        ] {
            let store = f.root + "/" + (name == "pipe" ? "a" : "b")
            #expect(CLIFixture.runAt(store, ["clone", f.store, "--device", name.lowercased()]).exitCode == 0)
            let r = try bounded.shell(script)
            #expect(r.inTime && r.status == 0, "\(name): \(r.stderr)")
            #expect(r.stdout.contains("already here"), "\(name): \(r.stdout)")
        }
        // What is not an export is refused at its first bytes, without reading on.
        let zero = try bounded.shell(#"exec "$0" --store "\#(f.store)" import /dev/zero"#)
        #expect(zero.inTime && zero.status == 3, "\(zero.stderr)")
        #expect(zero.stderr.contains("/dev/zero is not a usable export"), "\(zero.stderr)")
    }
}
