import Foundation

extension UInt32 {
    var bigEndianBytes: [UInt8] { withUnsafeBytes(of: bigEndian) { Array($0) } }

    init(bigEndianBytes b: UnsafeRawBufferPointer) {
        self = b.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
