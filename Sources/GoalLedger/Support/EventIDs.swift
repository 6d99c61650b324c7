import Foundation
import Synchronization

/// Ids for appended events: random version-4 UUIDs from a xoshiro256** generator seeded once per
/// process from the system's random source. `UUID()` reads the random device for every id,
/// which showed in profiles of large appends; ids need to be unique, not secret.
enum EventIDs {
    private static let state = Mutex<(UInt64, UInt64, UInt64, UInt64)>({
        var system = SystemRandomNumberGenerator()
        return (system.next(), system.next(), system.next(), system.next() | 1)
    }())

    static func next() -> UUID {
        let (a, b) = state.withLock { s -> (UInt64, UInt64) in
            func step(_ s: inout (UInt64, UInt64, UInt64, UInt64)) -> UInt64 {
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
            return (step(&s), step(&s))
        }
        var bytes = (a.bigEndian, b.bigEndian)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 9562 variant
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }
}
