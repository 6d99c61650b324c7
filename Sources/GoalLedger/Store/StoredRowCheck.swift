import Foundation

/// The readers of the store's own rows, run on arbitrary bytes for the fuzzer: a damaged disk or
/// a copied store is outside input too. Each reader must refuse what is not of its form by
/// returning nil or throwing, never trap; what it accepts must read back the same once written
/// again. A broken invariant is returned as its description (nil when all hold).
///
/// The input's first byte chooses the row, its second the key's length (at most the rest);
/// the key follows, then the value.
package enum StoredRowCheck {
    package static func run(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count >= 2 else { return nil }
        let keyCount = min(Int(bytes[1]), bytes.count - 2)
        let key = UnsafeRawBufferPointer(rebasing: bytes[2..<2 + keyCount])
        let value = UnsafeRawBufferPointer(rebasing: bytes[(2 + keyCount)...])
        switch bytes[0] % 5 {
        case 0: return goalPositions(key, value)
        case 1: return idPosition(value)
        case 2: return originRun(key, value)
        case 3:
            _ = try? PendingTable.entry(key: key, value: value)
            return nil
        default:
            guard let header = try? ProjectionCodec.decodeHeader(value, id: UUID()) else {
                if (try? ProjectionCodec.decodeHeader(value, id: UUID(), allTagAdds: false)) != nil {
                    return "a goal header refused whole is read without its tag adds"
                }
                return nil
            }
            _ = try? ProjectionCodec.decodeHeader(value, id: header.id, allTagAdds: false)
            return nil
        }
    }

    /// A row of the goal index: positions strictly rising from 1, a count no smaller than the
    /// row's, and the same row once written again.
    static func goalPositions(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> String? {
        var row = GoalPositionRow.Decoded()
        guard row.read(key: key, value: value) else { return nil }
        guard row.positions.first.map({ $0 >= 1 }) == true, zip(row.positions, row.positions.dropFirst()).allSatisfy({ $0 < $1 }),
            row.total >= UInt64(row.positions.count)
        else { return "a goal index row read as positions that are not strictly rising from 1" }
        var w = ByteWriter()
        for (a, b) in zip(row.positions, row.positions.dropFirst()) { w.varint(b - a) }
        let again = GoalPositionRow.value(total: row.total, distances: w.bytes)
        var reread = GoalPositionRow.Decoded()
        let same = again.withUnsafeBytes { reread.read(key: key, value: $0) } && reread.positions == row.positions && reread.total == row.total
        return same ? nil : "a goal index row written again reads differently"
    }

    /// A value of the id index: a position from 1, written again to the same bytes.
    static func idPosition(_ value: UnsafeRawBufferPointer) -> String? {
        guard let p = IDIndex.position(value) else { return nil }
        guard p >= 1 else { return "the id index read position 0" }
        return IDIndex.withValue(p) { $0.elementsEqual(value) } ? nil : "an id index value written again differs"
    }

    /// A row of the origin index under the prefix of origin "o": its last position and sequence
    /// without overflow, and the same value written again.
    static func originRun(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> String? {
        guard let run = OriginRun(prefix: Array("o".utf8) + [0], key: key, value: value) else { return nil }
        guard run.position(of: run.next - 1) != nil, run.value.elementsEqual(value) else {
            return "an origin run read back differs or does not hold its last sequence"
        }
        return nil
    }
}
