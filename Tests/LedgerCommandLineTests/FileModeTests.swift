import Foundation
import GoalLedger
import LedgerCommandLine
import Testing

/// What `init`, `backup` and `report` write is the owner's alone, whatever the umask, and a
/// directory others can reach is refused rather than written into.
struct FileModeTests {
    func requireBinary() throws {
        try #require(FileManager.default.isExecutableFile(atPath: ledgerExecutable().path), "build the ledger executable first")
    }

    /// Runs the built `ledger` with umask 000, so that only the modes it asks for protect what
    /// it writes.
    func runWithOpenUmask(_ args: [String]) throws -> (status: Int32, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", #"umask 000 && exec "$0" "$@""#, ledgerExecutable().path, "--now", "2026-11-05T12:00:00Z"] + args
        p.environment = ProcessInfo.processInfo.environment.merging(["TZ": "UTC", "LANG": "C"]) { $1 }
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: e, as: UTF8.self))
    }

    static func mode(_ path: String) -> Int {
        var s = stat()
        guard stat(path, &s) == 0 else { return -1 }
        return Int(s.st_mode & 0o7777)
    }

    static func directory(_ path: String, mode: mode_t) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        #expect(chmod(path, mode) == 0)
    }

    @Test func initAndBackupWriteOwnerOnlyFilesEvenUnderAnOpenUmask() throws {
        try requireBinary()
        let f = CLIFixture()
        let store = f.root + "/store"
        let created = try runWithOpenUmask(["--store", store, "init", "--device", "phone"])
        #expect(created.status == 0, "\(created.stderr)")
        for (path, mode) in [(store, 0o700), (store + "/data.mdb", 0o600), (store + "/lock.mdb", 0o600), (store + "/device.key", 0o600)] {
            #expect(Self.mode(path) == mode, "\(path): \(String(Self.mode(path), radix: 8))")
        }
        let backup = f.root + "/backup"
        let copied = try runWithOpenUmask(["--store", store, "backup", backup, "--with-key"])
        #expect(copied.status == 0, "\(copied.stderr)")
        for (path, mode) in [(backup, 0o700), (backup + "/data.mdb", 0o600), (backup + "/lock.mdb", 0o600), (backup + "/device.key", 0o600)] {
            #expect(Self.mode(path) == mode, "\(path): \(String(Self.mode(path), radix: 8))")
        }
        // An owner-only empty directory is taken.
        let empty = f.root + "/empty"
        try Self.directory(empty, mode: 0o700)
        #expect(try runWithOpenUmask(["--store", store, "backup", empty]).status == 0)
        #expect(Self.mode(empty + "/data.mdb") == 0o600)
        #expect(try LedgerStore.open(at: empty).lastPosition() == 0)
    }

    @Test(arguments: [0o755, 0o750, 0o705, 0o770, 0o701, 0o1777] as [mode_t])
    func aDirectoryOthersCanReachIsRefusedByInitAndBackupAndLeftEmpty(_ mode: mode_t) throws {
        let f = CLIFixture()
        #expect(f.run(["init", "--device", "phone"]).exitCode == 0)
        let shared = f.root + "/shared"
        try Self.directory(shared, mode: mode)
        let octal = String(mode & 0o777, radix: 8)
        for args in [["backup", shared], ["--store", shared, "init", "--device", "laptop"]] {
            let r = CommandLineTool.run(
                args[0] == "backup" ? ["--store", f.store] + args : args, environment: [:], input: { Data() })
            #expect(r.exitCode == 3, "\(args): \(r.stderr)")
            #expect(
                r.stderr.contains("\(shared) can be read or written by group or others (mode 0\(octal))")
                    && r.stderr.contains("chmod 700 \(shared)"), "\(r.stderr)")
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: shared)) ?? ["?"]) == [])
            #expect(Self.mode(shared) == Int(mode))
        }
    }
}
