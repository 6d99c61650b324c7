import Foundation

/// A device's notification permission, as it reported it (`notificationAuthorization`).
public struct NotificationAuthorization: Equatable, Sendable {
    /// The permission, as the OS names it.
    public var status: AuthorizationStatus

    /// A report of `status`.
    public init(status: AuthorizationStatus) { self.status = status }
}

extension NotificationAuthorization: DeviceEventPayload {
    static let schemas = [1, 2]

    init(json r: inout ObjectReader) throws(FieldError) {
        guard let s = try r.enumeration("status", AuthorizationStatus.self) else { throw FieldError("status", "is required") }
        self.init(status: s)
    }

    var jsonMembers: [(String, JSONValue)] { [("status", .string(status.rawValue))] }

    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        _ = try r.varint()
        self.init(status: try AuthorizationStatus.decode(try r.u8(), "status"))
    }

    func encode(into w: inout ByteWriter) {
        w.varint(0)
        w.u8(status.storedCode)
    }

    /// Nothing to check: the status is one of the enum's.
    func checkWellFormed(_ stage: GateStage) throws(FieldError) {}

    /// A device may always report its permission.
    mutating func prepare(as type: EventType, _ c: LocalContext) throws(FieldError) {}

    /// Not about a goal: no conflicts.
    func registerWrites(as type: EventType) -> [RegisterWrite] { [] }
    func yieldsToDeletion(as type: EventType) -> Bool { false }

    /// The latest permission the device reported wins.
    func fold(into device: inout DeviceState, _ stamp: Stamp) { device.authorization.offer(status, stamp) }
    var trustChange: TrustChange? { nil }
}
