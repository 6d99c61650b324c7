import Foundation

// The device index: the positions of the events about no goal (enrolments, revocations, a
// device's settings), the trust fold's input.
extension StoreTransaction {
    /// Keys the device index by position alone (the format-5 upgrade: format 4 and before keyed
    /// it by the device's name, a zero byte and the position; a row already of 8 bytes is kept
    /// as it is). A row of neither form is left out (damage, which `verify` names).
    func rekeyDeviceIndex() throws {
        var positions: [UInt64] = []
        try scan(layout.deviceEvents) { key, _ in
            if key.count == 8 {
                positions.append(UInt64(bigEndianBytes: key))
            } else if key.count > 9 {
                positions.append(UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...])))
            }
            return true
        }
        positions.sort()
        try clear(layout.deviceEvents)
        var previous: UInt64?
        for p in positions where p != previous {
            try put(layout.deviceEvents, key: p.bigEndianBytes, value: [], options: .append)
            previous = p
        }
    }
}
