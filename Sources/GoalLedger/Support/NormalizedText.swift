import Foundation

/// Text that the fold uses as a set member or a sort key (a tag), in one canonical form.
///
/// Two devices can write the same tag in different Unicode forms (`é` composed, or `e` and a
/// combining accent). Swift's `String` compares them as equal, but the bytes differ, so a fold
/// keyed by `String` keeps whichever form arrived first and two stores that hold the same
/// events print different bytes. Here the text is normalized to NFC once, and equality, hashing
/// and order are those of its UTF-8 bytes: independent of arrival order, locale and the
/// standard library's comparison rules. NFC is stable across Unicode versions for assigned
/// characters, so devices on different systems agree.
public struct NormalizedText: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The NFC form.
    public let value: String

    /// `text`, normalized to NFC.
    public init(_ text: String) { value = Self.nfc(text) }

    /// `text` in Unicode normalization form C.
    public static func nfc(_ text: String) -> String {
        // Most tags are ASCII, which is its own NFC form.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        return text.precomposedStringWithCanonicalMapping
    }

    public static func == (a: NormalizedText, b: NormalizedText) -> Bool { a.value.utf8.elementsEqual(b.value.utf8) }

    public func hash(into hasher: inout Hasher) {
        // The bytes in one call, from the string's own storage where it holds them contiguously
        // (a native string does), else from a copy: equal texts feed equal bytes either way.
        if value.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            Array(value.utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
        }
        hasher.combine(0xFF as UInt8)  // not a UTF-8 byte: ends the text
    }

    public static func < (a: NormalizedText, b: NormalizedText) -> Bool { a.value.utf8.lexicographicallyPrecedes(b.value.utf8) }

    public var description: String { value }
}

extension String {
    /// Order by UTF-8 bytes: what every sorted output uses, so that the order never depends on
    /// a locale or on `String`'s Unicode-aware comparison.
    public static func bytesPrecede(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
}
