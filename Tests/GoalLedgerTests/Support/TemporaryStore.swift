import Foundation
import LMDB

@testable import GoalLedger

/// A fresh directory under the system's temporary folder, removed when the test ends.
final class TemporaryDirectory {
    let path: String
    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-test-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A store of its own for one test.
struct TemporaryStore {
    let directory = TemporaryDirectory()
    let store: LedgerStore

    /// `signed: false` makes a store of a ledger founded before events were signed, which
    /// accepts other devices' unsigned events (for tests that import synthetic histories).
    init(device: String = "phone", signed: Bool = true) throws {
        store = try LedgerStore.create(at: directory.path + "/store", device: device, signed: signed)
    }
}

/// A small deterministic random generator (SplitMix64), so property tests are repeatable by seed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func uuid() -> UUID {
        let a = next()
        let b = next()
        return withUnsafeBytes(of: (a, b)) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }
}

func instant(_ text: String) -> Instant { Instant(rfc3339: text)! }
func day(_ text: String) -> Day { Day(iso: text)! }

/// Parses one JSON event line for tests.
func draft(_ line: String) throws -> EventDraft { try EventDraft(line: line, number: 1) }

/// The error decoding `json` as an event gives, or nil when it decodes.
func decodeError(_ json: JSONValue, schema: Int = LedgerStore.currentSchema) -> FieldError? {
    do throws(FieldError) {
        _ = try EventDraft(json: json, schema: schema)
        return nil
    } catch {
        return error
    }
}

extension LedgerStore {
    /// Every key and value of every database, to show that a refused operation changed nothing.
    func snapshot() throws -> [String: [[UInt8]]] {
        var dbs: [(String, LMDB.Database)] = [
            ("meta", layout.meta), ("events", layout.events), ("ids", layout.ids), ("recentIds", layout.recentIDs), ("origins", layout.origins),
            ("originHeads", layout.originHeads), ("goalPositions", layout.goalPositions), ("deviceEvents", layout.deviceEvents),
            ("trust", layout.trust),
        ]
        for (g, t) in layout.projections.enumerated() {
            dbs += [("p\(g).goals", t.goals), ("p\(g).removed", t.removed), ("p\(g).devices", t.devices)]
        }
        return try env.read { txn in
            var out: [String: [[UInt8]]] = [:]
            for (name, db) in dbs {
                var rows: [[UInt8]] = []
                try txn.scan(db) { k, v in
                    // Notes on what waits are not the store's data.
                    if name == "meta" && (k.starts(with: MetaKey.waiting) || k.starts(with: MetaKey.waitingSince)) { return true }
                    rows.append(Array(k) + [0xFF] + Array(v))
                    return true
                }
                out[name] = rows
            }
            return out
        }
    }
}

/// Lines of JSON events as a batch for `append`.
func drafts(_ lines: [String]) throws -> [EventDraft] {
    try lines.enumerated().map { try EventDraft(line: $0.element, number: $0.offset + 1) }
}

/// The ledger error `body` throws (nil when it succeeds; other errors are recorded as issues).
func ledgerError(_ body: () throws -> Void) -> LedgerError? {
    do {
        try body()
        return nil
    } catch let e as LedgerError {
        return e
    } catch {
        return LedgerError(.internal, "unexpected error \(error)")
    }
}
