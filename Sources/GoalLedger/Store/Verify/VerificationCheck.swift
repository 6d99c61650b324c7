import Foundation

/// The checks `verify` makes, in the order it makes them, each comparing one part of the store
/// with the log (or the log with itself).
public enum VerificationCheck: String, CaseIterable, Sendable {
    /// The log itself: every key is a position, the positions run 1, 2, 3, … without gaps, and
    /// every record passes its checksum and decodes.
    case log
    /// The log's indexes (by event id, by origin and sequence, by goal, by device) hold each
    /// event of the log at its position, and nothing the log does not explain.
    case indexes
    /// Each origin's sequences run 1, 2, 3, … without gaps, and the head recorded for each origin
    /// is its last sequence in the log.
    case origins
    /// The trust table (each device's keys, who enrolled it, its revocation, the sequence its
    /// events count through) equals trust re-derived from the log.
    case trust
    /// Each origin's hash chain links, every signature verifies, and those within what counts
    /// were made by the key trust gives the origin.
    case chains
    /// The stored projection equals a fresh replay row for row: its version and checkpoint, the
    /// goals, removed entries and devices, the pending tables, the set-aside events and the
    /// digest (`rebuild` repairs a difference).
    case projections
}
