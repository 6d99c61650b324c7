import Foundation
import LMDB

/// The ledger's trust as the `trust` table holds it: a projection of the log's enrolments and
/// revocations (`TrustFold`), rewritten whole whenever a trust event is written and re-derived
/// from the log by `rebuild` and `verify`, never edited in place.
///
/// Rows: `k` name 0 from → key; `p` name → depth (u8) and the enroller's name; `r` name →
/// revoked after (u64); `c` name → the last sequence of the origin that counts (u64), present
/// when lower than its head would allow (revoked, or signed by a key it no longer holds);
/// `F` → the founder's name and key.
enum TrustTable {
    static func keyPrefix(_ device: String) -> [UInt8] { [UInt8(ascii: "k")] + Array(device.utf8) + [0] }
    static func cutoffKey(_ device: String) -> [UInt8] { [UInt8(ascii: "c")] + Array(device.utf8) }
    static let founderKey = [UInt8(ascii: "F")]

    /// The trust state the table holds.
    static func load(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> TrustState {
        var state = TrustState()
        state.founderless = try founder(txn, layout) == nil
        try txn.scan(layout.trust) { key, value in
            guard let tag = key.first, key.count > 1 else { return true }
            switch tag {
            case UInt8(ascii: "k"):
                guard key.count > 10 else { return true }
                let name = String(decoding: key[1..<(key.count - 9)], as: UTF8.self)
                let from = UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...]))
                state.devices[name, default: TrustState.Device(keys: [], parent: nil, depth: 0)].keys.append(
                    .init(from: from, key: Array(value)))
            case UInt8(ascii: "p"):
                let name = String(decoding: key.dropFirst(), as: UTF8.self)
                state.devices[name, default: TrustState.Device(keys: [], parent: nil, depth: 0)].depth = Int(value.first ?? 0)
                if value.count > 1 { state.devices[name]!.parent = String(decoding: value.dropFirst(), as: UTF8.self) }
            case UInt8(ascii: "r"):
                let name = String(decoding: key.dropFirst(), as: UTF8.self)
                state.devices[name, default: TrustState.Device(keys: [], parent: nil, depth: 0)].revokedAfter = UInt64(
                    bigEndianBytes: value)
            default:
                break
            }
            return true
        }
        for name in state.devices.keys { state.devices[name]!.keys.sort { $0.from < $1.from } }
        return state
    }

    /// Replaces the table's trust rows with `state` and `cutoffs`.
    static func write(_ state: TrustState, cutoffs: [String: UInt64], _ txn: borrowing Transaction, _ layout: StoreLayout) throws {
        let founder = try txn.get(layout.trust, key: founderKey)
        try txn.clear(layout.trust)
        if let founder { try txn.put(layout.trust, key: founderKey, value: founder) }
        for (name, d) in state.devices {
            for k in d.keys { try txn.put(layout.trust, key: keyPrefix(name) + k.from.bigEndianBytes, value: k.key) }
            try txn.put(
                layout.trust, key: [UInt8(ascii: "p")] + Array(name.utf8), value: [UInt8(min(d.depth, 255))] + Array((d.parent ?? "").utf8))
            if let after = d.revokedAfter {
                try txn.put(layout.trust, key: [UInt8(ascii: "r")] + Array(name.utf8), value: after.bigEndianBytes)
            }
        }
        for (name, c) in cutoffs { try txn.put(layout.trust, key: cutoffKey(name), value: c.bigEndianBytes) }
    }

    /// The founder of a ledger founded signed, once this store knows it.
    static func founder(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> (name: String, key: [UInt8])? {
        guard let v = try txn.get(layout.trust, key: founderKey), v.count > 32 else { return nil }
        return (String(decoding: v.dropFirst(32), as: UTF8.self), Array(v.prefix(32)))
    }

    static func recordFounder(_ name: String, _ key: [UInt8], _ txn: borrowing Transaction, _ layout: StoreLayout) throws {
        try txn.put(layout.trust, key: founderKey, value: key + Array(name.utf8))
    }

    /// The keys of `device`, each with the first sequence it signs.
    static func keys(of device: String, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [(from: UInt64, key: [UInt8])] {
        let prefix = keyPrefix(device)
        var out: [(UInt64, [UInt8])] = []
        try txn.scan(layout.trust, from: prefix) { key, value in
            guard key.count == prefix.count + 8, key.prefix(prefix.count).elementsEqual(prefix) else { return false }
            out.append((UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[prefix.count...])), Array(value)))
            return true
        }
        return out
    }

    /// For each origin whose later events do not count, the last that does: what every
    /// projection folds and every exchange sends up to.
    static func revocations(_ txn: borrowing Transaction, _ layout: StoreLayout) throws -> [String: UInt64] {
        var out: [String: UInt64] = [:]
        try txn.scan(layout.trust, from: [UInt8(ascii: "c")]) { key, value in
            guard key.first == UInt8(ascii: "c") else { return false }
            out[String(decoding: key.dropFirst(), as: UTF8.self)] = UInt64(bigEndianBytes: value)
            return true
        }
        return out
    }

    /// The last sequence of `device` that counts, when its later events do not.
    static func revokedAfter(_ device: String, _ txn: borrowing Transaction, _ layout: StoreLayout) throws -> UInt64? {
        try StoredProjection.u64(txn, layout.trust, cutoffKey(device))
    }
}
