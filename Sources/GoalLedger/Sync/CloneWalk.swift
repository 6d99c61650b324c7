import Foundation

/// Where a clone is in the source's log: each origin's next sequence to copy and the last one,
/// and the next event of each origin read ahead. Chunks follow the canonical order (clock, then
/// origin), the order one import of the whole log writes, except where a chunk finishes an
/// origin's signed run; every event comes after what it rests on (its chain's predecessor, its
/// device's enrolment, which its clock follows), so each chunk verifies against the chunks
/// before it, and a store that holds the first chunks holds a prefix of each origin.
struct CloneWalk {
    /// Per origin: the next sequence to read, and the last to copy (its head when the clone
    /// began, or the revoked device's last counted sequence).
    var next: [String: UInt64]
    let last: [String: UInt64]
    /// Per origin, its next event and record, read but not yet copied.
    var ahead: [String: (event: Event, record: [UInt8])] = [:]

    /// Whether every event is copied.
    var isDone: Bool { ahead.isEmpty && next.allSatisfy { $0.value > (last[$0.key] ?? 0) } }
}
