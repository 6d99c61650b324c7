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
        var flags: UInt64 = 0
        let present = [
            g.progressKind != nil, g.title != nil, g.details != nil, g.cadence != nil, g.targetDate != nil,
            g.target != nil, g.unit != nil, g.reminder != nil, g.deletion != nil, g.reminderDevices != nil,
        ]
        for (i, p) in present.enumerated() where p { flags |= 1 << UInt64(i) }
        w.varint(flags)
        if let r = g.progressKind {
            stamp(r.stamp, &w)
            w.u8(r.value.storedCode)
        }
        if let r = g.title {
            stamp(r.stamp, &w)
            w.string(r.value)
        }
        if let r = g.details {
            stamp(r.stamp, &w)
            optionalString(r.value, &w)
        }
        if let r = g.cadence {
            stamp(r.stamp, &w)
            w.u8(r.value.storedCode)
        }
        if let r = g.targetDate {
            stamp(r.stamp, &w)
            w.u8(r.value == nil ? 0 : 1)
            if let d = r.value { w.day(d) }
        }
        if let r = g.target {
            stamp(r.stamp, &w)
            w.u8(r.value == nil ? 0 : 1)
            if let t = r.value { w.double(t) }
        }
        if let r = g.unit {
            stamp(r.stamp, &w)
            optionalString(r.value, &w)
        }
        if let r = g.reminder {
            stamp(r.stamp, &w)
            if let t = r.value {
                w.u8(1)
                w.u8(UInt8(t.hour))
                w.u8(UInt8(t.minute))
            } else {
                w.u8(0)
            }
        }
        if let r = g.deletion {
            stamp(r.stamp, &w)
            w.u8(r.value ? 1 : 0)
        }
        if let r = g.reminderDevices {
            stamp(r.stamp, &w)
            if let names = r.value {
                w.u8(1)
                w.varint(UInt64(names.count))
                for n in names { w.string(n) }
            } else {
                w.u8(0)
            }
        }
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

    static func decodeHeader(_ bytes: UnsafeRawBufferPointer, id: UUID) throws(RecordDecodingError) -> GoalState {
        var r = ByteReader(bytes)
        guard try r.u8() == version else { throw RecordDecodingError(reason: "unknown projection row version") }
        var g = GoalState(id: id)
        _ = try r.u8()  // status: derived from the registers below
        var flags = try r.varint()
        func take() -> Bool {
            defer { flags >>= 1 }
            return flags & 1 != 0
        }
        if take() {
            let s = try stamp(&r)
            g.progressKind = Register(try ProgressKind.decode(try r.u8(), "progress kind"), s)
        }
        if take() {
            let s = try stamp(&r)
            g.title = Register(try r.string(), s)
        }
        if take() {
            let s = try stamp(&r)
            g.details = Register(try optionalString(&r), s)
        }
        if take() {
            let s = try stamp(&r)
            g.cadence = Register(try Cadence.decode(try r.u8(), "cadence"), s)
        }
        if take() {
            let s = try stamp(&r)
            g.targetDate = Register(try r.u8() == 1 ? try r.day() : nil, s)
        }
        if take() {
            let s = try stamp(&r)
            g.target = Register(try r.u8() == 1 ? try r.double() : nil, s)
        }
        if take() {
            let s = try stamp(&r)
            g.unit = Register(try optionalString(&r), s)
        }
        if take() {
            let s = try stamp(&r)
            g.reminder = Register(try r.u8() == 1 ? ReminderTime(unchecked: Int(try r.u8()), Int(try r.u8())) : nil, s)
        }
        if take() {
            let s = try stamp(&r)
            g.deletion = Register(try r.u8() == 1, s)
        }
        if take() {
            let s = try stamp(&r)
            var names: [String]?
            if try r.u8() == 1 {
                let n = try r.varint()
                guard n <= 256 else { throw RecordDecodingError(reason: "too many reminder devices") }
                names = []
                for _ in 0..<n { names!.append(try r.string()) }
            }
            g.reminderDevices = Register(names, s)
        }
        let tagCount = try r.varint()
        for _ in 0..<tagCount {
            let tag = try r.string()
            g.tagAdds[NormalizedText(tag)] = try uuids(&r)
        }
        g.removedTagAdds = try uuids(&r)
        for _ in 0..<(try r.varint()) {
            let device = try r.string()
            g.deletionHeads[device] = try r.varint()
        }
        guard r.isAtEnd else { throw RecordDecodingError(reason: "trailing bytes in a goal row") }
        return g
    }

    /// Whether the goal exists, is deleted, its kind, and whether it was ever deleted or
    /// restored, from a header's first bytes; nil when the goal was never created.
    static func decodeStatus(_ bytes: UnsafeRawBufferPointer) -> (deleted: Bool, kind: ProgressKind, deletionHistory: Bool)? {
        guard bytes.count >= 2, bytes[0] == version, bytes[1] & 1 != 0 else { return nil }
        return (bytes[1] & 2 != 0, bytes[1] & 4 != 0 ? .measurable : .outcome, bytes[1] & 8 != 0)
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

    private static func stamp(_ s: Stamp, _ w: inout ByteWriter) {
        w.u64BE(s.key.hlc.rawValue)
        w.string(s.key.device)
        w.uuid(s.event)
    }

    private static func stamp(_ r: inout ByteReader) throws(RecordDecodingError) -> Stamp {
        let hlc = HLC(rawValue: try r.u64BE())
        let device = try r.string()
        return Stamp(key: CanonicalKey(hlc: hlc, device: device), event: try r.uuid())
    }

    private static func optionalString(_ s: String?, _ w: inout ByteWriter) {
        if let s {
            w.u8(1)
            w.string(s)
        } else {
            w.u8(0)
        }
    }

    private static func optionalString(_ r: inout ByteReader) throws(RecordDecodingError) -> String? {
        try r.u8() == 1 ? try r.string() : nil
    }

    private static func uuids(_ set: Set<UUID>, _ w: inout ByteWriter) {
        w.varint(UInt64(set.count))
        for id in set.map(\.bytes).sorted(by: { $0.lexicographicallyPrecedes($1) }) { w.bytes.append(contentsOf: id) }
    }

    private static func uuids(_ r: inout ByteReader) throws(RecordDecodingError) -> Set<UUID> {
        let n = try r.varint()
        guard n <= UInt64(r.bytes.count - r.index) / 16 else { throw RecordDecodingError(reason: "truncated id set") }
        var out = Set<UUID>()
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
