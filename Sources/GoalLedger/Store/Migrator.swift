import Foundation

/// The store's migrations as data, in the manner of GRDB's `DatabaseMigrator`: ordered
/// identifiers, each applied in its own transaction together with the record that it was
/// applied (`migration:<identifier>` in `meta`), forward only. A store that records a
/// migration this code does not know is newer than the code and is refused.
///
/// Stored events are never rewritten: the log is byte for byte the same before and after. What
/// changes is how it is read (schema 2 upcasts schema-1 history writes to record-level changes).
public enum Migrator {
    /// Every migration, in the order they are applied.
    public static let migrations: [Migration] = [
        Migration(identifier: "2-record-level-progress") { txn in
            // Schema 2: per-entry progress events; schema-1 history writes are upcast when read.
            try txn.put(txn.layout.meta, key: MetaKey.schema, value: UInt64(2).bigEndianBytes)
        },
        // The device signs its events from here on: `migrate` then gives it a key and appends
        // its enrolment, which marks the first signed sequence (events before stay unsigned).
        Migration(identifier: "3-signed-events") { _ in },
    ]

    static func key(_ identifier: String) -> [UInt8] { Array("migration:\(identifier)".utf8) }
}
