import Foundation

/// A device's public key enters the ledger: events of `device` from sequence `from` on are
/// signed with it. Written by `init` (a device enrolling itself, the ledger's first trust), by
/// `clone` (the source device enrolling the new one) and by the migration that starts signing.
public struct DeviceEnrolled: Equatable, Sendable {
    /// The device enrolled.
    public var device: String
    /// The Ed25519 public key (32 bytes).
    public var publicKey: [UInt8]
    /// The first sequence of `device` the key signs.
    public var from: UInt64

    /// The enrolment of `publicKey` for `device` from sequence `from` on.
    public init(device: String, publicKey: [UInt8], from: UInt64) {
        self.device = device
        self.publicKey = publicKey
        self.from = from
    }
}

extension DeviceEnrolled: DeviceEventPayload {
    static let schemas = [1, 2]

    /// Why a caller cannot append one.
    private static let neverAppended = "deviceEnrolled is written by the store itself when it is created, cloned or migrated, never appended"

    /// Never read from what a caller appends (the schemas leave it out).
    init(json r: inout ObjectReader) throws(FieldError) {
        throw FieldError("type", Self.neverAppended)
    }

    var jsonMembers: [(String, JSONValue)] {
        [("enrolled", .string(device)), ("publicKey", .string(Hex.string(publicKey))), ("from", .number(Double(from)))]
    }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        _ = try r.varint()
        self.init(device: try r.string(), publicKey: try r.fixed(32), from: try r.varint())
    }

    func encode(into w: inout ByteWriter) {
        w.varint(0)
        w.string(device)
        w.bytes.append(contentsOf: publicKey)
        w.varint(from)
    }

    func checkWellFormed(_ stage: GateStage) throws(FieldError) {
        try FieldRules.deviceName(device, field: "enrolled")
        guard publicKey.count == 32 else { throw FieldError("publicKey", "must be 32 bytes, got \(publicKey.count)") }
        guard from >= 1 else { throw FieldError("from", "must be at least 1") }
    }

    /// Only the store itself enrols (init, clone, migrate).
    mutating func prepare(as type: EventType, _ c: LocalContext) throws(FieldError) {
        guard c.enrolling else { throw FieldError("type", Self.neverAppended) }
    }

    /// Not about a goal: no conflicts.
    func registerWrites(as type: EventType) -> [RegisterWrite] { [] }
    func yieldsToDeletion(as type: EventType) -> Bool { false }

    /// Trust, not device settings: see `trustChange`.
    func fold(into device: inout DeviceState, _ stamp: Stamp) {}
    var trustChange: TrustChange? { .enrolled(device: device, from: from, publicKey: publicKey) }
}
