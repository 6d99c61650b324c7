import Foundation
import LMDB

/// A place where a store's file is damaged below the ledger: a page of LMDB's B+trees, found by
/// walking the file without LMDB (``LedgerStore/checkPages(at:limit:)``).
public struct StoreDamage: Sendable, Equatable, CustomStringConvertible {
    /// The damaged page's number; nil when the damage is the file's as a whole (its size, its
    /// meta pages).
    public var page: Int?
    /// The table the page belongs to (`events`, `goalPositions`, `the free list`, …) when known.
    public var table: String?
    /// What is wrong, in a phrase.
    public var problem: String

    init(_ d: DataFile.Damage) {
        page = d.page
        table = d.table
        problem = d.problem
    }

    /// "page 12 (events): …".
    public var description: String { DataFile.Damage(page: page, table: table, problem: problem).description }
}
