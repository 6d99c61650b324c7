import Foundation

/// Who wrote a value: the event and its canonical position. Ties (which a well-formed log never
/// has) fall back to the event id, so the winner never depends on arrival order.
public struct Stamp: Comparable, Hashable, Sendable {
    public var key: CanonicalKey
    public var event: UUID

    public init(_ e: Event) {
        key = e.key
        event = e.id
    }

    public static func < (a: Stamp, b: Stamp) -> Bool {
        if a.key != b.key { return a.key < b.key }
        return a.event.bytes.lexicographicallyPrecedes(b.event.bytes)
    }
}

/// A last-writer-wins register: the value written by the greatest stamp in canonical order.
public struct Register<Value: Equatable & Sendable>: Equatable, Sendable {
    public private(set) var value: Value
    public private(set) var stamp: Stamp

    public init(_ value: Value, _ stamp: Stamp) {
        self.value = value
        self.stamp = stamp
    }

    /// Keeps the write with the greater stamp, whatever order writes are offered in.
    mutating func offer(_ value: Value, _ stamp: Stamp) {
        if self.stamp < stamp {
            self.value = value
            self.stamp = stamp
        }
    }
}

extension Optional {
    mutating func offer<V>(_ value: V, _ stamp: Stamp) where Wrapped == Register<V> {
        if self == nil { self = Register(value, stamp) } else { self!.offer(value, stamp) }
    }
}
