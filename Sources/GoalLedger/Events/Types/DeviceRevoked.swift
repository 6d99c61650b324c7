import Foundation

/// A device leaves the ledger: its events after sequence `after` (the last its revoker's store
/// held, filled in at append) are refused by every store that learns of the revocation.
public struct DeviceRevoked: Equatable, Sendable {
    /// The device revoked.
    public var device: String
    /// The last sequence of `device` that counts (filled in at append).
    public var after: UInt64

    /// The revocation of `device` after its sequence `after`.
    public init(device: String, after: UInt64 = 0) {
        self.device = device
        self.after = after
    }
}

extension DeviceRevoked: DeviceEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) {
        self.init(device: try r.string("revoked", required: true)!)
    }

    var jsonMembers: [(String, JSONValue)] { [("revoked", .string(device)), ("after", .number(Double(after)))] }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        _ = try r.varint()
        self.init(device: try r.string(), after: try r.varint())
    }

    func encode(into w: inout ByteWriter) {
        w.varint(0)
        w.string(device)
        w.varint(after)
    }

    func checkWellFormed(_ stage: GateStage) throws(FieldError) { try FieldRules.deviceName(device, field: "revoked") }

    /// Another device the ledger holds; its last sequence there is where it stops counting.
    mutating func prepare(as type: EventType, _ c: LocalContext) throws(FieldError) {
        guard device != c.author.name else { throw FieldError("revoked", "a device cannot revoke itself; revoke it from another device") }
        guard let head = c.seen()[device] else { throw FieldError("revoked", "the ledger has no device \"\(device)\"") }
        after = head
    }

    /// Not about a goal: no conflicts.
    func registerWrites(as type: EventType) -> [RegisterWrite] { [] }
    func yieldsToDeletion(as type: EventType) -> Bool { false }

    /// Trust, not device settings: see `trustChange`.
    func fold(into device: inout DeviceState, _ stamp: Stamp) {}
    var trustChange: TrustChange? { .revoked(device: device, after: after) }
}
