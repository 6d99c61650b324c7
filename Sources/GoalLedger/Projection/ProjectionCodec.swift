import Foundation

/// The stored form of the goal projection's rows. Encodings are canonical (sets are written
/// sorted), so a stored row and a row encoded from a fresh replay are equal exactly when the
/// states are equal: `verify` compares bytes.
///
/// A goal is stored as a header (registers and tags) plus one row per removed entry; its
/// entries are its `progressRecorded` events and its version is the number of its events, both
/// read through the log's goal index, so recording progress writes no projection row.
enum ProjectionCodec {
    static let version: UInt8 = 3

    // MARK: Goal header

    static func encodeHeader(_ g: GoalState) -> [UInt8] {
        var w = ByteWriter(capacity: 256)
        w.u8(version)
        // Status first, so the rules for recording progress read two bytes, not the header.
        var status: UInt8 = 0
        if g.exists { status |= 1 }
        if g.isDeleted { status |= 2 }
        if g.kind == .measurable { status |= 4 }
        if !g.deletionHeads.isEmpty { status |= 8 }
        w.u8(status)
        // The parts present, flagged by their bits, then each in the order of its bit.
        var flags: UInt64 = 0
        var parts = ByteWriter(capacity: 224)
        for part in HeaderPart.stored {
            let present: Bool
            switch part {
            case .progressKind:
                if let r = g.progressKind {
                    stamp(r.stamp, &parts)
                    parts.u8(r.value.storedCode)
                }
                present = g.progressKind != nil
            case .register(let register):
                present = g.encode(register, into: &parts)
            case .reminderDevices:
                if let r = g.reminderDevices {
                    stamp(r.stamp, &parts)
                    if let names = r.value {
                        parts.u8(1)
                        parts.varint(UInt64(names.count))
                        for n in names { parts.string(n) }
                    } else {
                        parts.u8(0)
                    }
                }
                present = g.reminderDevices != nil
            case .createdAt:
                if let r = g.createdAt {
                    stamp(r.stamp, &parts)
                    parts.instant(r.value)
                }
                present = g.createdAt != nil
            }
            if present { flags |= 1 << UInt64(part.bit) }
        }
        w.varint(flags)
        w.bytes += parts.bytes
        let tags = g.tagAdds.sorted { $0.key < $1.key }
        w.varint(UInt64(tags.count))
        for (tag, adds) in tags {
            w.string(tag.value)
            uuids(adds, &w)
        }
        uuids(g.removedTagAdds, &w)
        w.varint(UInt64(g.deletionHeads.count))
        for (device, sequence) in g.deletionHeads.sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
            w.string(device)
            w.varint(sequence)
        }
        return w.bytes
    }

    ///
    /// With `allTagAdds` false (a read that shows goals, not one that folds or removes tags),
    /// a goal without tag removals gets its tags in effect as stored (`GoalState.listedTags`,
    /// already in order) and no `tagAdds`: enough for ``GoalState/tags``, without a set of ids
    /// per tag, a table of them, and a sort (most of a list's cost).
    static func decodeHeader(_ bytes: UnsafeRawBufferPointer, id: UUID, allTagAdds: Bool = true) throws(RecordDecodingError) -> GoalState {
        var r = ByteReader(bytes)
        guard try r.u8() == version else { throw RecordDecodingError(reason: "unknown projection row version") }
        var g = GoalState(id: id)
        _ = try r.u8()  // status: derived from the registers below
        let flags = try r.varint()
        for part in HeaderPart.stored where flags & 1 << UInt64(part.bit) != 0 {
            switch part {
            case .progressKind:
                let s = try stamp(&r)
                g.progressKind = Register(try ProgressKind.decode(try r.u8(), "progress kind"), s)
            case .register(let register):
                try g.decode(register, from: &r)
            case .reminderDevices:
                let s = try stamp(&r)
                var names: [String]?
                if try r.u8() == 1 {
                    let n = try r.varint()
                    guard n <= 256 else { throw RecordDecodingError(reason: "too many reminder devices") }
                    names = []
                    for _ in 0..<n { names!.append(try r.string()) }
                }
                g.reminderDevices = Register(names, s)
            case .createdAt:
                let s = try stamp(&r)
                g.createdAt = Register(try r.instant(), s)
            }
        }
        let tagsAt = r.index
        var light = false
        if !allTagAdds { light = try listedTags(&r, into: &g) }
        if !light {
            r.index = tagsAt
            let tagCount = try r.varint()
            guard tagCount <= UInt64(r.bytes.count - r.index) else { throw RecordDecodingError(reason: "truncated tags") }
            g.tagAdds.reserveCapacity(Int(tagCount))
            for _ in 0..<tagCount {
                let tag = try r.string()
                g.tagAdds[NormalizedText(tag)] = try uuids(&r)
            }
            g.removedTagAdds = try uuids(&r)
        }
        for _ in 0..<(try r.varint()) {
            let device = try r.string()
            g.deletionHeads[device] = try r.varint()
        }
        guard r.isAtEnd else { throw RecordDecodingError(reason: "trailing bytes in a goal row") }
        return g
    }

    /// What a header's first bytes say (`decodeStatus`).
    typealias GoalStatus = (deleted: Bool, kind: ProgressKind, deletionHistory: Bool)

    /// Whether the goal exists, is deleted, its kind, and whether it was ever deleted or
    /// restored, from a header's first bytes; nil when the goal was never created.
    static func decodeStatus(_ bytes: UnsafeRawBufferPointer) -> GoalStatus? {
        guard bytes.count >= 2, bytes[0] == version, bytes[1] & 1 != 0 else { return nil }
        return (bytes[1] & 2 != 0, bytes[1] & 4 != 0 ? .measurable : .outcome, bytes[1] & 8 != 0)
    }

    /// What `decodeStatus` gives for the header `encodeHeader` writes of `g`, without writing it.
    static func status(of g: GoalState) -> GoalStatus? {
        guard g.exists else { return nil }
        return (g.isDeleted, g.kind == .measurable ? .measurable : .outcome, !g.deletionHeads.isEmpty)
    }

    // MARK: Devices

    static func encodeDevice(_ d: DeviceState) -> [UInt8] {
        var w = ByteWriter(capacity: 96)
        w.u8(version)
        if let c = d.configuration {
            w.u8(1)
            stamp(c.stamp, &w)
            c.value.encodeFields(into: &w)
        } else {
            w.u8(0)
        }
        if let a = d.authorization {
            w.u8(1)
            stamp(a.stamp, &w)
            w.u8(a.value.storedCode)
        } else {
            w.u8(0)
        }
        return w.bytes
    }

    static func decodeDevice(_ bytes: UnsafeRawBufferPointer, name: String) throws(RecordDecodingError) -> DeviceState {
        var r = ByteReader(bytes)
        guard try r.u8() == version else { throw RecordDecodingError(reason: "unknown projection row version") }
        var d = DeviceState(name: name)
        if try r.u8() == 1 {
            let s = try stamp(&r)
            d.configuration = Register(try DeviceConfigured(fields: &r), s)
        }
        if try r.u8() == 1 {
            let s = try stamp(&r)
            d.authorization = Register(try AuthorizationStatus.decode(try r.u8(), "authorization"), s)
        }
        guard r.isAtEnd else { throw RecordDecodingError(reason: "trailing bytes in a device row") }
        return d
    }

    // MARK: Parts

    /// A part of a stored goal header: the progress kind, a register (see the register table in
    /// `GoalState.swift`), the reminder's devices, or the creation's wall time.
    enum HeaderPart {
        case progressKind
        case register(GoalRegister)
        case reminderDevices
        case createdAt

        /// The part's bit in the header's flags (``GoalRegister/storedBit`` for a register).
        var bit: Int {
            switch self {
            case .progressKind: 0
            case .register(let r): r.storedBit
            case .reminderDevices: 9
            case .createdAt: 11
            }
        }

        /// Every part, in the order of its bit: the order the header stores them in.
        static let stored: [HeaderPart] =
            ([.progressKind, .reminderDevices, .createdAt] + GoalRegister.allCases.map(HeaderPart.register)).sorted { $0.bit < $1.bit }
    }

    static func stamp(_ s: Stamp, _ w: inout ByteWriter) {
        w.u64BE(s.key.hlc.rawValue)
        w.string(s.key.device)
        w.uuid(s.event)
    }

    static func stamp(_ r: inout ByteReader) throws(RecordDecodingError) -> Stamp {
        let hlc = HLC(rawValue: try r.u64BE())
        let device = try r.string()
        return Stamp(key: CanonicalKey(hlc: hlc, device: device), event: try r.uuid())
    }

    static func optionalString(_ s: String?, _ w: inout ByteWriter) {
        if let s {
            w.u8(1)
            w.string(s)
        } else {
            w.u8(0)
        }
    }

    static func optionalString(_ r: inout ByteReader) throws(RecordDecodingError) -> String? {
        try r.u8() == 1 ? try r.string() : nil
    }

    private static func uuids(_ set: Set<UUID>, _ w: inout ByteWriter) {
        w.varint(UInt64(set.count))
        for id in set.map(\.bytes).sorted(by: { $0.lexicographicallyPrecedes($1) }) { w.bytes.append(contentsOf: id) }
    }

    /// The tags in effect, in their stored order, into `g.listedTags` when the goal has no tag
    /// removals and the row's tags are in strictly increasing order, as `encodeHeader` writes
    /// them (true; `r` is then past the removals); false, having read as far as the removals,
    /// otherwise (the full decode then sorts out whatever the row holds).
    private static func listedTags(_ r: inout ByteReader, into g: inout GoalState) throws(RecordDecodingError) -> Bool {
        let tagCount = try r.varint()
        guard tagCount <= UInt64(r.bytes.count - r.index) else { throw RecordDecodingError(reason: "truncated tags") }
        var live: [String] = []
        live.reserveCapacity(Int(tagCount))
        var previous: NormalizedText?
        var ordered = true
        for _ in 0..<tagCount {
            let tag = NormalizedText(try r.string())
            let n = try r.varint()
            guard n <= UInt64(r.bytes.count - r.index) / 16 else { throw RecordDecodingError(reason: "truncated id set") }
            try r.skip(Int(n) * 16)
            if let previous, !(previous < tag) { ordered = false }
            previous = tag
            if n > 0 { live.append(tag.value) }
        }
        guard ordered, try r.varint() == 0 else { return false }
        g.listedTags = live
        return true
    }

    private static func uuids(_ r: inout ByteReader) throws(RecordDecodingError) -> Set<UUID> {
        let n = try r.varint()
        guard n <= UInt64(r.bytes.count - r.index) / 16 else { throw RecordDecodingError(reason: "truncated id set") }
        if n == 0 { return [] }
        var out = Set<UUID>(minimumCapacity: Int(n))
        for _ in 0..<n { out.insert(try r.uuid()) }
        return out
    }
}

extension Stamp {
    init(key: CanonicalKey, event: UUID) {
        self.key = key
        self.event = event
    }
}

extension GoalState {
    /// ``ProjectionCodec/status(of:)`` of this state, read in place: mutating only so that a
    /// caller can read it through a dictionary's element (`_modify`) without copying the state
    /// and retaining each of its tables. It changes nothing.
    mutating func readStatus() -> ProjectionCodec.GoalStatus? { ProjectionCodec.status(of: self) }
}
