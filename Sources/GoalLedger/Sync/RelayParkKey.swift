import Foundation

/// Where a record kept aside from a relay blob is stored: its origin and sequence.
struct RelayParkKey: Hashable {
    let origin: String
    let sequence: UInt64

    init(_ origin: String, _ sequence: UInt64) {
        self.origin = origin
        self.sequence = sequence
    }

    /// Reads a stored key; nil when it is not one.
    init?(stored key: [UInt8]) {
        let rest = key.dropFirst(MetaKey.relayParked.count)
        guard rest.count > 9, rest[rest.endIndex - 9] == 0 else { return nil }
        let name = String(decoding: rest.dropLast(9), as: UTF8.self)
        guard DeviceName.isValid(name) else { return nil }
        origin = name
        sequence = Array(rest.suffix(8)).withUnsafeBytes { UInt64(bigEndianBytes: $0) }
    }

    /// The meta key.
    var stored: [UInt8] { MetaKey.relayParked + Array(origin.utf8) + [0] + sequence.bigEndianBytes }
}
