import Foundation

/// The views' summary of a set of live entries (one day's, or a period's): the exact sum of
/// their amounts, how many have an amount and how many a completion, and the latest completion.
struct DaySummary: Equatable {
    /// The latest entry with a completion: by `occurredAt`, then canonical order.
    struct Outcome: Equatable {
        var occurredAt: Instant
        var key: CanonicalKey
        var completed: Bool

        func isAfter(_ other: Outcome) -> Bool {
            occurredAt != other.occurredAt ? occurredAt > other.occurredAt : other.key < key
        }
    }

    /// The sum of the amounts in millionths, exact.
    var micro: Int128 = 0
    var amounts: UInt32 = 0
    var outcomes: UInt32 = 0
    var latest: Outcome?

    var isEmpty: Bool { amounts == 0 && outcomes == 0 }

    // The sums and counts wrap rather than trap: a summary read from a damaged row can hold any
    // value, and an append or a read that adds to it must go on (`verify` names the row). Counts
    // and sums the fold makes stay far from the limits: 2^32 entries in one day of one goal,
    // amounts of at most 2^63 millionths each.

    mutating func add(_ e: ProgressEntry) {
        if let a = e.amount {
            micro &+= a.micros
            amounts &+= 1
        }
        if let c = e.completed {
            outcomes &+= 1
            let o = Outcome(occurredAt: e.occurredAt, key: e.key, completed: c)
            if latest.map({ o.isAfter($0) }) ?? true { latest = o }
        }
    }

    mutating func add(_ s: DaySummary) {
        micro &+= s.micro
        amounts &+= s.amounts
        outcomes &+= s.outcomes
        if let o = s.latest, latest.map({ o.isAfter($0) }) ?? true { latest = o }
    }

    /// Whether the summarized entries include one that counts for a goal of `kind`.
    func hasEntries(_ kind: ProgressKind) -> Bool { kind == .measurable ? amounts > 0 : outcomes > 0 }

    /// The value and completion `GoalView.summarize` gives the same entries.
    func summary(_ kind: ProgressKind, targetMicro: Int64) -> (value: Amount?, completed: Bool) {
        switch kind {
        case .measurable: return (Amount(unchecked: micro), micro >= Int128(targetMicro))
        case .outcome: return (nil, latest?.completed ?? false)
        }
    }

    /// micro (16, big-endian two's complement) · amounts (varint) · outcomes (varint), then when
    /// there is a completion: its flag (u8) · hlc (u64 BE) · occurredAt − the clock's
    /// milliseconds (zig-zag varint) · device (UTF-8, the rest).
    var bytes: [UInt8] {
        var w = ByteWriter(capacity: 40)
        w.u64BE(UInt64(truncatingIfNeeded: micro >> 64))
        w.u64BE(UInt64(truncatingIfNeeded: micro))
        w.varint(UInt64(amounts))
        w.varint(UInt64(outcomes))
        if let o = latest {
            w.u8(o.completed ? 1 : 0)
            w.u64BE(o.key.hlc.rawValue)
            w.signed(o.occurredAt.milliseconds &- o.key.hlc.milliseconds)
            w.bytes += Array(o.key.device.utf8)
        }
        return w.bytes
    }

    init() {}

    init(bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) {
        var r = ByteReader(bytes)
        let high = try r.u64BE()
        let low = try r.u64BE()
        micro = Int128(Int64(bitPattern: high)) << 64 | Int128(low)
        amounts = UInt32(truncatingIfNeeded: try r.varint())
        outcomes = UInt32(truncatingIfNeeded: try r.varint())
        if r.index < bytes.count {
            let completed = try r.u8() == 1
            let hlc = HLC(rawValue: try r.u64BE())
            let occurredAt = Instant(milliseconds: hlc.milliseconds &+ (try r.signed()))
            let device = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[r.index...]), as: UTF8.self)
            latest = Outcome(occurredAt: occurredAt, key: CanonicalKey(hlc: hlc, device: device), completed: completed)
        }
    }
}
