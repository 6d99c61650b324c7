import Foundation
import Testing

@testable import LedgerBenchmarks

/// A quick run at tiny sizes: every figure is produced, with its baseline. Speed is not checked
/// here; `Tools/bench` measures it.
struct BenchmarkTests {
    @Test func aQuickRunProducesEveryFigure() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let figures = try Benchmark(sizes: .quick, directory: dir, executable: nil).run()
        let names = figures.map(\.name)
        for expected in [
            "append (1000/commit)", "append (10000/commit)", "replay", "rebuild", "store size (live pages)", "store size (file)",
            "sync (1000 events)", "migrate (3000 events)",
            "reconcile full (20 goals)", "reconcile incremental (20 goals)", "reconcile full (200 goals)",
            "reconcile incremental (200 goals)", "pending (3000 events)", "reconcile after a change (3000 events)",
        ] {
            #expect(names.contains(expected), "missing \(expected) in \(names)")
        }
        for f in figures where f.baselineName != nil {
            #expect(f.value > 0 && (f.baseline ?? 0) > 0, "\(f.name)")
        }
        let sync = try #require(figures.first { $0.name.hasPrefix("sync (") })
        #expect(sync.note.contains("moved 1000, then 0"))
    }
}
