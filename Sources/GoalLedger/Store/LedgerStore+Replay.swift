import Foundation

extension LedgerStore {
    /// The name of the active projection generation's table `name` (`p0.goals` or `p1.goals`),
    /// for the benchmark's raw baselines.
    package func activeTableName(_ name: String) throws(LedgerError) -> String {
        try readTransaction { txn in "p\(try txn.projectionStatus().generation).\(name)" }
    }
}
