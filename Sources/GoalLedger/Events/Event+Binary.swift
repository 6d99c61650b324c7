import Foundation

/// The stored form of an event.
///
///     byte 0       codec version (1 or 2)
///     bytes 1…4    CRC-32C of everything after it, little-endian
///     id (16) · hlc (8, big-endian) · at (zig-zag varint ms) · sequence (varint)
///     · origin (string) · schema (1) · type (1) · payload
///     version 2 only, after the payload: flags (varint: 1 deletionsSeen, 2 previousHash,
///     4 signature), then deletionsSeen (varint count, then device (string) · sequence
///     (varint), devices in UTF-8 byte order) · previousHash (32) · signer's public key (32)
///     and signature (64)
///
/// An event that carries none of those is written as version 1, one that carries any as
/// version 2, so a record decoded and encoded again keeps its bytes whichever ledger wrote it.
///
/// Payload fields are written in a fixed order per type; optional fields are announced by a
/// presence bitmask (varint) that comes first. New optional fields take new bits, so older
/// records stay readable; a change of layout takes a new codec version.
package enum EventCodec {
    public static let version: UInt8 = 2

    public static func encode(_ e: Event) -> [UInt8] { encode(e, checksum: true) }

    /// The record; without `checksum`, its checksum bytes are left zero (for hashing, which
    /// covers only what follows them).
    static func encode(_ e: Event, checksum: Bool) -> [UInt8] {
        var w = ByteWriter(capacity: 96)
        let extended = e.deletionsSeen != nil || e.previousHash != nil || e.signature != nil
        w.u8(extended ? 2 : 1)
        w.u8(0)
        w.u8(0)
        w.u8(0)
        w.u8(0)
        w.uuid(e.id)
        w.u64BE(e.hlc.rawValue)
        w.instant(e.at)
        w.varint(e.sequence)
        w.string(e.origin)
        w.u8(e.schema)
        w.u8(e.type.rawValue)
        e.payload.encode(into: &w)
        if extended {
            w.varint((e.deletionsSeen == nil ? 0 : 1) | (e.previousHash == nil ? 0 : 2) | (e.signature == nil ? 0 : 4))
            if let seen = e.deletionsSeen {
                w.varint(UInt64(seen.count))
                for (device, sequence) in seen.sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
                    w.string(device)
                    w.varint(sequence)
                }
            }
            if let h = e.previousHash { w.bytes.append(contentsOf: h) }
            if let s = e.signature {
                w.bytes.append(contentsOf: e.signer ?? [UInt8](repeating: 0, count: 32))
                w.bytes.append(contentsOf: s)
            }
        }
        guard checksum else { return w.bytes }
        let crc = w.bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[5...])) }
        for i in 0..<4 { w.bytes[1 + i] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * i)) }
        return w.bytes
    }

    /// Decodes a stored record, checking its checksum first.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) -> Event {
        guard bytes.count >= 5 else { throw RecordDecodingError(reason: "record shorter than its header") }
        let recordVersion = bytes[0]
        guard (1...version).contains(recordVersion) else { throw RecordDecodingError(reason: "unknown codec version \(bytes[0])") }
        let stored = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[1 + $1]) << UInt32(8 * $1) }
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[5...])) == stored else {
            throw RecordDecodingError(reason: "checksum mismatch")
        }
        var r = ByteReader(bytes)
        r.index = 5
        let id = try r.uuid()
        let hlc = HLC(rawValue: try r.u64BE())
        let at = try r.instant()
        let sequence = try r.varint()
        let origin = try r.string()
        let schema = try r.u8()
        let code = try r.u8()
        guard let type = EventType(rawValue: code) else { throw RecordDecodingError(reason: "unknown event type \(code)") }
        let payload = try Payload.decode(type, from: &r)
        var deletionsSeen: [String: UInt64]?
        var previousHash: [UInt8]?
        var signature: [UInt8]?
        var signer: [UInt8]?
        if recordVersion >= 2 {
            let flags = try r.varint()
            guard flags != 0, flags < 8 else { throw RecordDecodingError(reason: "unknown record extensions \(flags)") }
            if flags & 1 != 0 {
                var seen: [String: UInt64] = [:]
                let count = try r.varint()
                guard count <= UInt64(r.bytes.count - r.index) else { throw RecordDecodingError(reason: "deletionsSeen count beyond the record") }
                for _ in 0..<count {
                    let device = try r.string()
                    guard seen[device] == nil else { throw RecordDecodingError(reason: "deletionsSeen names \(device) twice") }
                    seen[device] = try r.varint()
                }
                deletionsSeen = seen
            }
            if flags & 2 != 0 { previousHash = try r.fixed(32) }
            if flags & 4 != 0 {
                signer = try r.fixed(32)
                signature = try r.fixed(64)
            }
        }
        guard r.isAtEnd else { throw RecordDecodingError(reason: "trailing bytes after the payload") }
        return Event(
            id: id, origin: origin, sequence: sequence, hlc: hlc, at: at, schema: schema, payload: payload, deletionsSeen: deletionsSeen,
            previousHash: previousHash, signature: signature, signer: signer)
    }

    public static func decode(_ bytes: [UInt8]) throws(RecordDecodingError) -> Event {
        do {
            return try bytes.withUnsafeBytes { try decode($0) }
        } catch let e as RecordDecodingError {
            throw e
        } catch {
            throw RecordDecodingError(reason: "\(error)")
        }
    }
}

private struct Presence {
    var bits: UInt64 = 0
    private var next: UInt64 = 1
    mutating func mark(_ present: Bool) {
        if present { bits |= next }
        next <<= 1
    }
}

private struct PresenceReader {
    let bits: UInt64
    private var next: UInt64 = 1
    init(_ bits: UInt64) { self.bits = bits }
    mutating func take() -> Bool {
        defer { next <<= 1 }
        return bits & next != 0
    }
}

/// A list of strings (reminder devices): a count, then each string.
private func strings(_ list: [String], _ w: inout ByteWriter) {
    w.varint(UInt64(list.count))
    for s in list { w.string(s) }
}

private func strings(_ r: inout ByteReader) throws(RecordDecodingError) -> [String] {
    let n = try r.varint()
    guard n <= 256 else { throw RecordDecodingError(reason: "list too long") }
    var out: [String] = []
    for _ in 0..<n { out.append(try r.string()) }
    return out
}


extension Payload {
    fileprivate func encode(into w: inout ByteWriter) {
        switch self {
        case .goalCreated(let p):
            var f = Presence()
            f.mark(p.details != nil)
            f.mark(p.targetDate != nil)
            f.mark(p.target != nil)
            f.mark(p.unit != nil)
            f.mark(p.reminder != nil)
            f.mark(p.reminderDevices != nil)
            w.varint(f.bits)
            w.uuid(p.goal)
            w.string(p.title)
            w.u8(p.cadence.storedCode)
            w.u8(p.progressKind.storedCode)
            if let d = p.details { w.string(d) }
            if let t = p.targetDate { w.day(t) }
            if let t = p.target { w.double(t) }
            if let u = p.unit { w.string(u) }
            if let r = p.reminder {
                w.u8(UInt8(r.hour))
                w.u8(UInt8(r.minute))
            }
            if let d = p.reminderDevices { strings(d, &w) }
            w.varint(UInt64(p.tags.count))
            for t in p.tags { w.string(t) }
        case .goalEdited(let p):
            // Two bits per clearable field: changed, then has a value.
            var f = Presence()
            f.mark(p.title != nil)
            f.mark(p.details != nil)
            f.mark((p.details ?? nil) != nil)
            f.mark(p.cadence != nil)
            f.mark(p.targetDate != nil)
            f.mark((p.targetDate ?? nil) != nil)
            f.mark(p.target != nil)
            f.mark(p.unit != nil)
            f.mark((p.unit ?? nil) != nil)
            w.varint(f.bits)
            w.uuid(p.goal)
            if let t = p.title { w.string(t) }
            if let d = p.details ?? nil { w.string(d) }
            if let c = p.cadence { w.u8(c.storedCode) }
            if let t = p.targetDate ?? nil { w.day(t) }
            if let t = p.target { w.double(t) }
            if let u = p.unit ?? nil { w.string(u) }
            let replaced = p.replaces.sorted { $0.key < $1.key }
            w.varint(UInt64(replaced.count))
            for (field, id) in replaced {
                w.u8(field.storedCode)
                w.uuid(id)
            }
        case .goalDeleted(let p), .goalRestored(let p), .reminderCleared(let p):
            w.varint((p.replaces == nil ? 0 : 1) | (p.seen.isEmpty ? 0 : 2))
            w.uuid(p.goal)
            if let r = p.replaces { w.uuid(r) }
            if !p.seen.isEmpty {
                let seen = p.seen.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                w.varint(UInt64(seen.count))
                for (device, sequence) in seen {
                    w.string(device)
                    w.varint(sequence)
                }
            }
        case .reminderSet(let p):
            var f = Presence()
            f.mark(p.hour != nil)
            f.mark(p.minute != nil)
            f.mark(p.replaces != nil)
            f.mark(p.devices != nil)
            w.varint(f.bits)
            w.uuid(p.goal)
            if let h = p.hour { w.u8(UInt8(h)) }
            if let m = p.minute { w.u8(UInt8(m)) }
            if let r = p.replaces { w.uuid(r) }
            if let d = p.devices { strings(d, &w) }
        case .progressRecorded(let p):
            var f = Presence()
            f.mark(p.amount != nil)
            f.mark(p.completed != nil)
            f.mark(p.completed == true)
            f.mark(p.occurredAt != nil)
            f.mark(p.day != nil)
            w.varint(f.bits)
            w.uuid(p.goal)
            if let a = p.amount { w.double(a) }
            if let o = p.occurredAt { w.instant(o) }
            if let d = p.day { w.day(d) }
        case .progressRemoved(let p):
            w.varint(0)
            w.uuid(p.goal)
            w.uuid(p.entry)
        case .tagAdded(let p):
            w.varint(0)
            w.uuid(p.goal)
            w.string(p.tag)
        case .tagRemoved(let p):
            w.varint(0)
            w.uuid(p.goal)
            w.string(p.tag)
            w.varint(UInt64(p.observed.count))
            for id in p.observed { w.uuid(id) }
        case .deviceConfigured(let p):
            w.varint(0)
            w.string(p.timeZone)
            w.u8(UInt8(p.firstWeekday))
            w.string(p.locale)
            w.u8(p.strategy.storedCode)
            w.u8(UInt8(p.windowDays))
            w.varint(UInt64(p.capacity))
        case .notificationAuthorization(let p):
            w.varint(0)
            w.u8(p.status.storedCode)
        case .deviceEnrolled(let p):
            w.varint(0)
            w.string(p.device)
            w.bytes.append(contentsOf: p.publicKey)
            w.varint(p.from)
        case .deviceRevoked(let p):
            w.varint(0)
            w.string(p.device)
            w.varint(p.after)
        case .progressHistoryReplaced(let p):
            w.varint(p.base == nil ? 0 : 1)
            w.uuid(p.goal)
            if let b = p.base { w.uuid(b) }
            w.varint(UInt64(p.entries.count))
            for e in p.entries {
                var f = Presence()
                f.mark(e.amount != nil)
                f.mark(e.completed != nil)
                f.mark(e.completed == true)
                f.mark(e.day != nil)
                w.varint(f.bits)
                w.uuid(e.id)
                if let a = e.amount { w.double(a) }
                w.instant(e.occurredAt)
                if let d = e.day { w.day(d) }
            }
        }
    }

    fileprivate static func decode(_ type: EventType, from r: inout ByteReader) throws(RecordDecodingError) -> Payload {
        var f = PresenceReader(try r.varint())
        let deviceEvent = [.deviceConfigured, .notificationAuthorization, .deviceEnrolled, .deviceRevoked].contains(type)
        let goal = deviceEvent ? UUID() : try r.uuid()
        func count(_ r: inout ByteReader) throws(RecordDecodingError) -> Int {
            let n = try r.varint()
            guard n <= 1 << 20 else { throw RecordDecodingError(reason: "list too long") }
            return Int(n)
        }
        switch type {
        case .goalCreated:
            let hasDetails = f.take()
            let hasDate = f.take()
            let hasTarget = f.take()
            let hasUnit = f.take()
            let hasReminder = f.take()
            let hasDevices = f.take()
            let title = try r.string()
            let cadence = try Cadence.decode(try r.u8(), "cadence")
            let kind = try ProgressKind.decode(try r.u8(), "progress kind")
            var p = GoalCreated(
                goal: goal, title: title, details: nil, cadence: cadence, targetDate: nil,
                progressKind: kind, target: nil, unit: nil, reminder: nil, tags: [])
            if hasDetails { p.details = try r.string() }
            if hasDate { p.targetDate = try r.day() }
            if hasTarget { p.target = try r.double() }
            if hasUnit { p.unit = try r.string() }
            if hasReminder { p.reminder = ReminderTime(hour: Int(try r.u8()), minute: Int(try r.u8())) }
            if hasDevices { p.reminderDevices = try strings(&r) }
            for _ in 0..<(try count(&r)) { p.tags.append(try r.string()) }
            return .goalCreated(p)
        case .goalEdited:
            var p = GoalEdited(goal: goal, replaces: [:])
            let hasTitle = f.take()
            let hasDetails = f.take()
            let detailsValue = f.take()
            let hasCadence = f.take()
            let hasDate = f.take()
            let dateValue = f.take()
            let hasTarget = f.take()
            let hasUnit = f.take()
            let unitValue = f.take()
            if hasTitle { p.title = try r.string() }
            if hasDetails { p.details = .some(detailsValue ? try r.string() : nil) }
            if hasCadence { p.cadence = try Cadence.decode(try r.u8(), "cadence") }
            if hasDate { p.targetDate = .some(dateValue ? try r.day() : nil) }
            if hasTarget { p.target = try r.double() }
            if hasUnit { p.unit = .some(unitValue ? try r.string() : nil) }
            for _ in 0..<(try count(&r)) {
                let field = try GoalField.decode(try r.u8(), "field")
                p.replaces[field] = try r.uuid()
            }
            return .goalEdited(p)
        case .goalDeleted, .goalRestored, .reminderCleared:
            var p = GoalRegisterWrite(goal: goal, replaces: f.take() ? try r.uuid() : nil)
            if f.take() {
                for _ in 0..<(try count(&r)) {
                    let device = try r.string()
                    p.seen[device] = try r.varint()
                }
            }
            return type == .goalDeleted ? .goalDeleted(p) : type == .goalRestored ? .goalRestored(p) : .reminderCleared(p)
        case .reminderSet:
            let hasHour = f.take()
            let hasMinute = f.take()
            let hasReplaces = f.take()
            let hasDevices = f.take()
            var p = ReminderSet(goal: goal)
            if hasHour { p.hour = Int(try r.u8()) }
            if hasMinute { p.minute = Int(try r.u8()) }
            if hasReplaces { p.replaces = try r.uuid() }
            if hasDevices { p.devices = try strings(&r) }
            return .reminderSet(p)
        case .progressRecorded:
            let hasAmount = f.take()
            let hasCompleted = f.take()
            let completed = f.take()
            let hasOccurred = f.take()
            let hasDay = f.take()
            var p = ProgressRecorded(goal: goal)
            if hasAmount { p.amount = try r.double() }
            if hasCompleted { p.completed = completed }
            if hasOccurred { p.occurredAt = try r.instant() }
            if hasDay { p.day = try r.day() }
            return .progressRecorded(p)
        case .progressRemoved:
            return .progressRemoved(ProgressRemoved(goal: goal, entry: try r.uuid()))
        case .tagAdded:
            return .tagAdded(TagAdded(goal: goal, tag: try r.string()))
        case .tagRemoved:
            let tag = try r.string()
            var observed: [UUID] = []
            for _ in 0..<(try count(&r)) { observed.append(try r.uuid()) }
            return .tagRemoved(TagRemoved(goal: goal, tag: tag, observed: observed))
        case .deviceConfigured:
            let tz = try r.string()
            let fw = Int(try r.u8())
            let locale = try r.string()
            let strategy = try NotificationStrategy.decode(try r.u8(), "strategy")
            let window = Int(try r.u8())
            let capacity = Int(clamping: try r.varint())
            return .deviceConfigured(
                DeviceConfigured(
                    timeZone: tz, firstWeekday: fw, locale: locale, strategy: strategy, windowDays: window, capacity: capacity))
        case .notificationAuthorization:
            return .notificationAuthorization(NotificationAuthorization(status: try AuthorizationStatus.decode(try r.u8(), "status")))
        case .progressHistoryReplaced:
            let base = f.take() ? try r.uuid() : nil
            var entries: [HistoryEntry] = []
            for _ in 0..<(try count(&r)) {
                var g = PresenceReader(try r.varint())
                let hasAmount = g.take()
                let hasCompleted = g.take()
                let completed = g.take()
                let hasDay = g.take()
                let id = try r.uuid()
                let amount = hasAmount ? try r.double() : nil
                let occurred = try r.instant()
                entries.append(
                    HistoryEntry(
                        id: id, amount: amount, completed: hasCompleted ? completed : nil, occurredAt: occurred,
                        day: hasDay ? try r.day() : nil))
            }
            return .progressHistoryReplaced(ProgressHistoryReplaced(goal: goal, entries: entries, base: base))
        case .deviceEnrolled:
            return .deviceEnrolled(DeviceEnrolled(device: try r.string(), publicKey: try r.fixed(32), from: try r.varint()))
        case .deviceRevoked:
            return .deviceRevoked(DeviceRevoked(device: try r.string(), after: try r.varint()))
        }
    }
}
