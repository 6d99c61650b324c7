import Foundation
import LedgerFuzzing
import Testing

/// Every committed corpus input of every fuzz target (`Tests/FuzzCorpus/TARGET/`) runs through
/// its target in-process: the inputs that once crashed (`crash-…`) stay fixed, and the seeds
/// stay valid inputs of the readers they seed.
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FuzzCorpus").path

    static func files(_ target: FuzzTarget) -> [String] {
        let dir = corpus + "/" + target.rawValue
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { !$0.hasPrefix(".") }.sorted().map {
            dir + "/" + $0
        }
    }

    @Test(arguments: FuzzTarget.allCases)
    func corpusRunsWithoutCrash(_ target: FuzzTarget) throws {
        let files = Self.files(target)
        #expect(files.count >= 3, "the corpus of \(target.rawValue) is (nearly) empty")
        try target.prepare()
        for file in files {
            let data = try #require(FileManager.default.contents(atPath: file))
            target.run(Array(data))
        }
    }

    @Test func everyTargetHasACorpusDirectory() {
        let dirs = Set((try? FileManager.default.contentsOfDirectory(atPath: Self.corpus)) ?? [])
        #expect(dirs.isSuperset(of: FuzzTarget.allCases.map(\.rawValue)))
    }
}
