import Foundation

/// Who wrote a value: the event and its canonical position. Ties (which a well-formed log never
/// has) fall back to the event id, so the winner never depends on arrival order.
public struct Stamp: Comparable, Hashable, Sendable {
    /// The writing event's place in canonical order.
    public var key: CanonicalKey
    /// The writing event's id.
    public var event: UUID

    /// The stamp of a value event `e` writes.
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
    /// The value of the winning write.
    public private(set) var value: Value
    /// Who wrote `value`.
    public private(set) var stamp: Stamp

    /// A register holding `value`, written by `stamp`.
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
