import Foundation

/// The event types, with their stable one-byte codes in the binary encoding.
public enum EventType: UInt8, CaseIterable, Sendable {
    /// ``GoalCreated``: a new goal.
    case goalCreated = 1
    /// ``GoalEdited``: goal fields changed.
    case goalEdited = 2
    /// ``GoalDeleted``: a goal deleted.
    case goalDeleted = 3
    /// ``GoalRestored``: a deleted goal restored.
    case goalRestored = 4
    /// ``ReminderSet``: a goal's reminder set.
    case reminderSet = 5
    /// ``ReminderCleared``: a goal's reminder cleared.
    case reminderCleared = 6
    /// ``ProgressRecorded``: one progress entry (schema 2).
    case progressRecorded = 7
    /// ``ProgressRemoved``: a progress entry removed (schema 2).
    case progressRemoved = 8
    /// ``TagAdded``: a tag added to a goal.
    case tagAdded = 9
    /// ``TagRemoved``: a tag removed from a goal.
    case tagRemoved = 10
    /// ``DeviceConfigured``: a device's settings.
    case deviceConfigured = 11
    /// ``NotificationAuthorization``: a device's notification permission.
    case notificationAuthorization = 12
    /// ``ProgressHistoryReplaced``: a goal's whole progress history (schema 1 only).
    case progressHistoryReplaced = 13
    /// ``DeviceEnrolled``: a device's signing key enrolled (written by the store only).
    case deviceEnrolled = 14
    /// ``DeviceRevoked``: a device revoked.
    case deviceRevoked = 15
    /// ``GoalMoved``: a goal moved in the person's order (schema 2).
    case goalMoved = 16

    /// The type's name in the JSON form.
    public var name: String {
        switch self {
        case .goalCreated: return "goalCreated"
        case .goalEdited: return "goalEdited"
        case .goalDeleted: return "goalDeleted"
        case .goalRestored: return "goalRestored"
        case .reminderSet: return "reminderSet"
        case .reminderCleared: return "reminderCleared"
        case .progressRecorded: return "progressRecorded"
        case .progressRemoved: return "progressRemoved"
        case .tagAdded: return "tagAdded"
        case .tagRemoved: return "tagRemoved"
        case .deviceConfigured: return "deviceConfigured"
        case .notificationAuthorization: return "notificationAuthorization"
        case .progressHistoryReplaced: return "progressHistoryReplaced"
        case .deviceEnrolled: return "deviceEnrolled"
        case .deviceRevoked: return "deviceRevoked"
        case .goalMoved: return "goalMoved"
        }
    }

    /// The payload type of events of this type.
    var payloadType: any EventPayload.Type {
        switch self {
        case .goalCreated: return GoalCreated.self
        case .goalEdited: return GoalEdited.self
        case .goalDeleted: return GoalDeleted.self
        case .goalRestored: return GoalRestored.self
        case .reminderSet: return ReminderSet.self
        case .reminderCleared: return ReminderCleared.self
        case .progressRecorded: return ProgressRecorded.self
        case .progressRemoved: return ProgressRemoved.self
        case .tagAdded: return TagAdded.self
        case .tagRemoved: return TagRemoved.self
        case .deviceConfigured: return DeviceConfigured.self
        case .notificationAuthorization: return NotificationAuthorization.self
        case .progressHistoryReplaced: return ProgressHistoryReplaced.self
        case .deviceEnrolled: return DeviceEnrolled.self
        case .deviceRevoked: return DeviceRevoked.self
        case .goalMoved: return GoalMoved.self
        }
    }

    /// A payload of this type, read by `m` (a decoder of the binary or the JSON form).
    func make<M: PayloadMaker>(_ m: inout M) throws(M.Failure) -> Payload {
        switch self {
        case .goalCreated: return .goalCreated(try m.make(GoalCreated.self))
        case .goalEdited: return .goalEdited(try m.make(GoalEdited.self))
        case .goalDeleted: return .goalDeleted(try m.make(GoalDeleted.self))
        case .goalRestored: return .goalRestored(try m.make(GoalRestored.self))
        case .reminderSet: return .reminderSet(try m.make(ReminderSet.self))
        case .reminderCleared: return .reminderCleared(try m.make(ReminderCleared.self))
        case .progressRecorded: return .progressRecorded(try m.make(ProgressRecorded.self))
        case .progressRemoved: return .progressRemoved(try m.make(ProgressRemoved.self))
        case .tagAdded: return .tagAdded(try m.make(TagAdded.self))
        case .tagRemoved: return .tagRemoved(try m.make(TagRemoved.self))
        case .deviceConfigured: return .deviceConfigured(try m.make(DeviceConfigured.self))
        case .notificationAuthorization: return .notificationAuthorization(try m.make(NotificationAuthorization.self))
        case .progressHistoryReplaced: return .progressHistoryReplaced(try m.make(ProgressHistoryReplaced.self))
        case .deviceEnrolled: return .deviceEnrolled(try m.make(DeviceEnrolled.self))
        case .deviceRevoked: return .deviceRevoked(try m.make(DeviceRevoked.self))
        case .goalMoved: return .goalMoved(try m.make(GoalMoved.self))
        }
    }

    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })

    /// The event types of each schema's catalog, in code order. Each payload type lists its
    /// schemas explicitly (`EventPayload.schemas`), so that a new type joins a schema only by
    /// saying so.
    public static func catalog(schema: Int) -> [EventType] {
        allCases.filter { $0.schemas.contains(schema) }
    }

    /// The type named `name` in the JSON form, if any.
    public init?(name: String) {
        guard let t = Self.byName[name] else { return nil }
        self = t
    }

    /// Each type with its name's UTF-8 bytes.
    private static let utf8Names = allCases.map { (Array($0.name.utf8), $0) }

    /// The type whose name is the UTF-8 text `bytes`, if any (as `init(name:)`, without making
    /// a string of them).
    init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard let found = Self.utf8Names.first(where: { $0.0.elementsEqual(bytes) }) else { return nil }
        self = found.1
    }
}
