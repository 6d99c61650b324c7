import Foundation
import Testing

@testable import GoalLedger

/// `AtomicFile`: a file replaced as a whole, owner-only from its first byte, nothing left beside it.
struct AtomicFileTests {
    func directory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("atomic-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func aWriteReplacesTheFileOwnerOnlyAndLeavesNothingBeside() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/center.json"
        try AtomicFile.write(Array("first".utf8), to: path)
        try AtomicFile.write(Array("second, longer".utf8), to: path)
        #expect(FileManager.default.contents(atPath: path) == Data("second, longer".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["center.json"])
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o600)
    }

    @Test func aWriteThatCannotBeMadeSaysWhichStepFailedAndChangesNothing() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect {
            try AtomicFile.write([1, 2, 3], to: dir + "/missing/file")
        } throws: { error in
            (error as? AtomicFile.Failure)?.reason.hasPrefix("creating \(dir)/missing/.file.tmp-") == true
        }
        // Renaming over a directory fails after the bytes were staged: the staged file goes.
        try FileManager.default.createDirectory(atPath: dir + "/taken", withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: dir + "/taken/inside", withIntermediateDirectories: false)
        #expect(throws: AtomicFile.Failure.self) { try AtomicFile.write([1], to: dir + "/taken") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["taken"])
    }
}
