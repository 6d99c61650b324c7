import Foundation
import Synchronization

/// Ids for appended events: time-ordered version-7 UUIDs (RFC 9562) made from the event's clock
/// reading: its milliseconds in the first 48 bits, its counter in the next 16 (the 12 bits of
/// `rand_a` and the 4 after the variant, the RFC's counter method), then 58 random bits from a
/// xoshiro256** generator seeded once per process from the system's random source (`UUID()`
/// reads the random device for every id, which showed in profiles of large appends; ids need to
/// be unique, not secret).
///
/// A store's clock only moves forward, so the ids it makes only grow: a commit adds them at one
/// end of the id index instead of at random pages all over it, each of which the commit would
/// copy and write again. The time in an id says no more than the event's own clock, which it
/// carries in the clear. Two devices reading the same millisecond and counter still differ in
/// 58 random bits.
enum EventIDs {
    private static let state = Mutex<(UInt64, UInt64, UInt64, UInt64)>({
        var system = SystemRandomNumberGenerator()
        return (system.next(), system.next(), system.next(), system.next() | 1)
    }())

    /// A new id for an event whose clock reads `clock`.
    static func next(clock: HLC) -> UUID {
        let a = state.withLock { s -> UInt64 in
            let result = ((s.1 &* 5) << 7 | (s.1 &* 5) >> 57) &* 9
            let t = s.1 << 17
            s.2 ^= s.0
            s.3 ^= s.1
            s.1 ^= s.2
            s.0 ^= s.3
            s.2 ^= t
            s.3 = s.3 << 45 | s.3 >> 19
            return result
        }
        // Milliseconds in 48 bits (a reading past them, beyond the year 10889, is clamped), then
        // the version, the counter's high 12 bits, the variant, its low 4 bits and 58 random bits.
        let milliseconds = min(UInt64(clamping: max(0, clock.milliseconds)), (1 << 48) - 1)
        let counter = UInt64(clock.counter)
        let high = milliseconds << 16 | 0x7000 | counter >> 4
        let low = 0x8000_0000_0000_0000 | (counter & 0xF) << 58 | a >> 6
        var bytes = (high.bigEndian, low.bigEndian)
        return withUnsafeBytes(of: &bytes) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }
}
