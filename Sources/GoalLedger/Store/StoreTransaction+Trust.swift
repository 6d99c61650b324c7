import Foundation

// Trust's rows (`TrustTable` names their keys).
extension StoreTransaction {
    /// The trust state the `trust` table holds.
    func trustState() throws -> TrustState {
        var state = TrustState()
        state.founderless = try founder() == nil
        try lmdb.scan(layout.trust) { key, value in
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
    func writeTrust(_ state: TrustState, cutoffs: [String: UInt64]) throws {
        let founder = try lmdb.get(layout.trust, key: TrustTable.founderKey)
        try lmdb.clear(layout.trust)
        if let founder { try lmdb.put(layout.trust, key: TrustTable.founderKey, value: founder) }
        for (name, d) in state.devices {
            for k in d.keys { try lmdb.put(layout.trust, key: TrustTable.keyPrefix(name) + k.from.bigEndianBytes, value: k.key) }
            try lmdb.put(
                layout.trust, key: [UInt8(ascii: "p")] + Array(name.utf8), value: [UInt8(min(d.depth, 255))] + Array((d.parent ?? "").utf8))
            if let after = d.revokedAfter {
                try lmdb.put(layout.trust, key: [UInt8(ascii: "r")] + Array(name.utf8), value: after.bigEndianBytes)
            }
        }
        for (name, c) in cutoffs { try lmdb.put(layout.trust, key: TrustTable.cutoffKey(name), value: c.bigEndianBytes) }
    }

    /// The founder of a ledger founded signed, once this store knows it.
    func founder() throws -> (name: String, key: [UInt8])? {
        guard let v = try lmdb.get(layout.trust, key: TrustTable.founderKey), v.count > 32 else { return nil }
        return (String(decoding: v.dropFirst(32), as: UTF8.self), Array(v.prefix(32)))
    }

    func recordFounder(_ name: String, _ key: [UInt8]) throws {
        try lmdb.put(layout.trust, key: TrustTable.founderKey, value: key + Array(name.utf8))
    }

    /// The keys of `device`, each with the first sequence it signs.
    func keys(of device: String) throws -> [(from: UInt64, key: [UInt8])] {
        let prefix = TrustTable.keyPrefix(device)
        var out: [(UInt64, [UInt8])] = []
        try lmdb.scan(layout.trust, from: prefix) { key, value in
            guard key.count == prefix.count + 8, key.prefix(prefix.count).elementsEqual(prefix) else { return false }
            out.append((UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[prefix.count...])), Array(value)))
            return true
        }
        return out
    }

    /// For each origin whose later events do not count, the last that does: what every
    /// projection folds and every exchange sends up to.
    func revocations() throws -> [String: UInt64] {
        var out: [String: UInt64] = [:]
        try lmdb.scan(layout.trust, from: [UInt8(ascii: "c")]) { key, value in
            guard key.first == UInt8(ascii: "c") else { return false }
            out[String(decoding: key.dropFirst(), as: UTF8.self)] = UInt64(bigEndianBytes: value)
            return true
        }
        return out
    }

    /// The last sequence of `device` that counts, when its later events do not.
    func revokedAfter(_ device: String) throws -> UInt64? {
        try u64(layout.trust, TrustTable.cutoffKey(device))
    }

    func enrolledDevices() throws -> [EnrolledDevice] {
        try trustState().devices.sorted { String.bytesPrecede($0.key, $1.key) }.compactMap { name, d in
            guard let last = d.keys.last else { return nil }
            return EnrolledDevice(device: name, publicKey: last.key, from: last.from, revokedAfter: d.revokedAfter, enrolledBy: d.parent)
        }
    }

    func waitingEvents() throws -> [WaitingEvents] {
        var out: [WaitingEvents] = []
        try scan(layout.meta, from: MetaKey.waiting) { key, value in
            guard key.starts(with: MetaKey.waiting),
                let w = WaitingEvents(origin: String(decoding: key.dropFirst(MetaKey.waiting.count), as: UTF8.self), stored: value)
            else { return false }
            out.append(w)
            return true
        }
        return out
    }

    /// The hash of `origin`'s event at `sequence` (the chain's start for 0).
    func chainHash(_ origin: String, _ sequence: UInt64) throws -> [UInt8] {
        guard sequence > 0 else { return EventChain.genesis }
        guard let e = try event(origin: origin, sequence: sequence) else { throw LedgerError.damaged("the origin index lacks \(origin)/\(sequence): the store is damaged") }
        return EventChain.hash(e)
    }
}
