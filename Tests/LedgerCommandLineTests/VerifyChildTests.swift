import Foundation
import GoalLedger
import Testing

@testable import LedgerCommandLine

/// `verify` runs the ledger's walk in a child process so that LMDB stopping on damage the page
/// walk could not see kills only the child. What the parent makes of its child, with a stand-in
/// child (a shell script) that says where it is and then dies as LMDB would make it die, or
/// ends as the real one does.
struct VerifyChildTests {
    /// A stand-in child: `body` as a shell script, executable. Written through a descriptor
    /// closed on exec: a process another test starts meanwhile would otherwise inherit it open
    /// for writing, and running the script would fail ("text file busy") for as long as that
    /// process lives.
    func child(_ body: String, in dir: CLIFixture) throws -> String {
        let path = dir.root + "/child-\(UUID().uuidString)"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        let bytes = Array(("#!/bin/sh\n" + body + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { throw CocoaError(.fileWriteUnknown) }
        return path
    }

    func invocation(_ store: String) -> Invocation {
        var inv = Invocation(environment: ["TZ": "UTC", "LANG": "C"], readInput: { Data() })
        inv.options["--store"] = store
        return inv
    }

    /// A child killed by a signal is damage where its last progress line put it: in the log
    /// after a position, or in a later check; the child's other lines pass on, its progress
    /// lines do not.
    @Test(arguments: [
        ("log 6145", "in the log after position 6145"),
        ("projections 900", "in the projections check (after the log's 900 events)"),
    ])
    func aChildKilledByASignalIsDamageWhereItsProgressStopped(_ last: String, _ place: String) throws {
        let dir = CLIFixture()
        let script = try child(
            """
            echo 'ledger: a notice' >&2
            echo '\(VerifyCommand.progressPrefix)log 1' >&2
            echo '\(VerifyCommand.progressPrefix)\(last)' >&2
            kill -SEGV $$
            """, in: dir)
        var inv = invocation(dir.store)
        do {
            try VerifyCommand.runChild(script, &inv)
            Issue.record("a child killed by a signal passed")
        } catch {
            #expect(error.code == .store, "\(error)")
            #expect(error.message.contains("damaged at a page LMDB could not read, \(place) (the ledger's walk stopped there)"), "\(error.message)")
        }
        #expect(inv.err == "ledger: a notice\n")
    }

    /// Without a progress line, the damage has no place; a child that ends by its own guard
    /// (exit 5, naming such a page) is the same damage, said once.
    @Test func aChildStoppedBeforeAnyProgressOrByItsGuardIsDamageSaidOnce() throws {
        let dir = CLIFixture()
        for body in ["kill -BUS $$", "echo 'ledger: the store at s is damaged at a page LMDB could not read' >&2; exit 5"] {
            var inv = invocation(dir.store)
            let script = try child(body, in: dir)
            do {
                try VerifyCommand.runChild(script, &inv)
                Issue.record("\(body) passed")
            } catch {
                #expect(error.code == .store)
                #expect(error.message.contains("damaged at a page LMDB could not read (the ledger's walk stopped there)"), "\(error.message)")
            }
            #expect(inv.err.isEmpty, "\(inv.err)")
        }
    }

    /// A child that ends by itself passes its output on; its exit code becomes the error's.
    @Test func aChildThatEndsPassesItsOutputAndExitCodeOn() throws {
        let dir = CLIFixture()
        var inv = invocation(dir.store)
        try VerifyCommand.runChild(try child("echo 'ok: 3 events'; echo '\(VerifyCommand.progressPrefix)log 1' >&2", in: dir), &inv)
        #expect(inv.out == "ok: 3 events\n")
        #expect(inv.err.isEmpty)
        let failing = try child("echo 'ledger: verify found 2 problems in s' >&2; exit 5", in: dir)
        do {
            try VerifyCommand.runChild(failing, &inv)
            Issue.record("a failing child passed")
        } catch {
            #expect(error.code == .store && error.message == "verify found 2 problems in s", "\(error)")
        }
    }
}
