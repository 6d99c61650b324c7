import Foundation

/// A device leaves the ledger: its events after sequence `after` (the last its revoker's store
/// held, filled in at append) are refused by every store that learns of the revocation.
public struct DeviceRevoked: Equatable, Sendable {
    /// The device revoked.
    public var device: String
    /// The last sequence of `device` that counts (filled in at append).
    public var after: UInt64
    /// The devices below `device` in the enrolment tree, revoked with it, each with the last
    /// of its sequences that counts (filled in at append: the last its revoker's store held).
    public var descendants: [String: UInt64]

    /// The revocation of `device` after its sequence `after`.
    public init(device: String, after: UInt64 = 0, descendants: [String: UInt64] = [:]) {
        self.device = device
        self.after = after
        self.descendants = descendants
    }
}

extension DeviceRevoked: DeviceEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) {
        self.init(device: try r.string("revoked", required: true)!)
    }

    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = [("revoked", .string(device)), ("after", .number(Double(after)))]
        if !descendants.isEmpty { m.append(("descendants", .sequences(descendants))) }
        return m
    }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        var f = PresenceReader(try r.varint())
        self.init(device: try r.string(), after: try r.varint())
        if f.take() {
            for _ in 0..<(try r.count()) {
                let name = try r.string()
                descendants[name] = try r.varint()
            }
        }
    }

    func encode(into w: inout ByteWriter) {
        var f = Presence()
        f.mark(!descendants.isEmpty)
        w.varint(f.bits)
        w.string(device)
        w.varint(after)
        if !descendants.isEmpty {
            w.varint(UInt64(descendants.count))
            for (name, sequence) in descendants.sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
                w.string(name)
                w.varint(sequence)
            }
        }
    }

    func checkWellFormed(_ stage: GateStage) throws(FieldError) { try FieldRules.deviceName(device, field: "revoked") }

    /// A device below the author in the enrolment tree (or, between roots of a ledger founded
    /// before signing, another root); its last sequence in the author's store is where it
    /// stops counting, and so for each device below it.
    mutating func prepare(as type: EventType, _ c: LocalContext) throws(FieldError) {
        guard device != c.author.name else { throw FieldError("revoked", "a device cannot revoke itself; revoke it from another device") }
        let trust = c.trust
        let seen = c.seen()
        guard let target = trust.devices[device] else {
            throw FieldError(
                "revoked", seen[device] == nil ? "the ledger has no device \"\(device)\"" : "device \"\(device)\" holds no key to revoke")
        }
        guard let author = trust.devices[c.author.name] else {
            throw FieldError("revoked", "this device holds no key, so it cannot revoke \"\(device)\"")
        }
        let peers = author.depth == 0 && target.depth == 0 && author.parent == nil && target.parent == nil && trust.founderless
        guard peers || trust.descendants(of: c.author.name).contains(device) else {
            throw FieldError(
                "revoked",
                "\"\(device)\" was not enrolled below \(c.author.name): only a device above it in the enrolment tree may revoke it")
        }
        guard target.revokedAfter == nil else { throw FieldError("revoked", "\"\(device)\" is revoked already") }
        after = seen[device] ?? 0
        descendants = Dictionary(uniqueKeysWithValues: trust.descendants(of: device).map { ($0, seen[$0] ?? 0) })
    }

    /// Not about a goal: no conflicts.
    func registerWrites(as type: EventType) -> [RegisterWrite] { [] }
    func yieldsToDeletion(as type: EventType) -> Bool { false }

    /// Trust, not device settings: see `trustChange`.
    func fold(into device: inout DeviceState, _ stamp: Stamp) {}
    var trustChange: TrustChange? { .revoked(device: device, after: after, descendants: descendants) }
}
