import Foundation

/// What an event says, by type. Each case's payload type lives in its own file under
/// `Events/Types/` and conforms to `EventPayload`; the switches below are the only places that
/// list the cases (see `docs/extending.md`).
///
/// The cases whose payloads are large and rare (a goal's creation, edit and reminder) are
/// boxed (`indirect`), so that an event is as small as its progress, the most common case:
/// events are moved and copied by the million when a log is read.
public enum Payload: Equatable, Sendable {
    /// A new goal (`goalCreated`).
    indirect case goalCreated(GoalCreated)
    /// A change of goal fields (`goalEdited`).
    indirect case goalEdited(GoalEdited)
    /// A goal deleted (`goalDeleted`): its events stay, and a restore brings it back.
    case goalDeleted(GoalDeleted)
    /// A deleted goal restored (`goalRestored`).
    case goalRestored(GoalRestored)
    /// A goal's reminder set or moved (`reminderSet`).
    indirect case reminderSet(ReminderSet)
    /// A goal's reminder turned off (`reminderCleared`).
    case reminderCleared(ReminderCleared)
    /// One progress entry (`progressRecorded`, schema 2).
    case progressRecorded(ProgressRecorded)
    /// A progress entry taken back (`progressRemoved`, schema 2).
    case progressRemoved(ProgressRemoved)
    /// A tag put on a goal (`tagAdded`).
    case tagAdded(TagAdded)
    /// A tag taken off a goal (`tagRemoved`).
    case tagRemoved(TagRemoved)
    /// A device's settings (`deviceConfigured`).
    case deviceConfigured(DeviceConfigured)
    /// A device's notification permission (`notificationAuthorization`).
    case notificationAuthorization(NotificationAuthorization)
    /// A goal's whole progress history, as schema 1 wrote it (`progressHistoryReplaced`); never
    /// appended to a schema-2 store.
    case progressHistoryReplaced(ProgressHistoryReplaced)
    /// A device's signing key enrolled (`deviceEnrolled`); written by the store itself, never
    /// appended by a caller.
    case deviceEnrolled(DeviceEnrolled)
    /// A device revoked (`deviceRevoked`).
    case deviceRevoked(DeviceRevoked)
    /// A goal moved in the person's order (`goalMoved`, schema 2).
    case goalMoved(GoalMoved)

    /// The event type the payload is the body of.
    public var type: EventType {
        switch self {
        case .goalCreated: return .goalCreated
        case .goalEdited: return .goalEdited
        case .goalDeleted: return .goalDeleted
        case .goalRestored: return .goalRestored
        case .reminderSet: return .reminderSet
        case .reminderCleared: return .reminderCleared
        case .progressRecorded: return .progressRecorded
        case .progressRemoved: return .progressRemoved
        case .tagAdded: return .tagAdded
        case .tagRemoved: return .tagRemoved
        case .deviceConfigured: return .deviceConfigured
        case .notificationAuthorization: return .notificationAuthorization
        case .progressHistoryReplaced: return .progressHistoryReplaced
        case .deviceEnrolled: return .deviceEnrolled
        case .deviceRevoked: return .deviceRevoked
        case .goalMoved: return .goalMoved
        }
    }

    /// Calls `v` with the payload in its concrete type: the one switch every operation on a
    /// payload goes through.
    @inline(__always)
    func visit<V: PayloadVisitor>(_ v: inout V) throws(V.Failure) -> V.Result {
        switch self {
        case .goalCreated(let p): return try v.visit(p, as: .goalCreated)
        case .goalEdited(let p): return try v.visit(p, as: .goalEdited)
        case .goalDeleted(let p): return try v.visit(p, as: .goalDeleted)
        case .goalRestored(let p): return try v.visit(p, as: .goalRestored)
        case .reminderSet(let p): return try v.visit(p, as: .reminderSet)
        case .reminderCleared(let p): return try v.visit(p, as: .reminderCleared)
        case .progressRecorded(let p): return try v.visit(p, as: .progressRecorded)
        case .progressRemoved(let p): return try v.visit(p, as: .progressRemoved)
        case .tagAdded(let p): return try v.visit(p, as: .tagAdded)
        case .tagRemoved(let p): return try v.visit(p, as: .tagRemoved)
        case .deviceConfigured(let p): return try v.visit(p, as: .deviceConfigured)
        case .notificationAuthorization(let p): return try v.visit(p, as: .notificationAuthorization)
        case .progressHistoryReplaced(let p): return try v.visit(p, as: .progressHistoryReplaced)
        case .deviceEnrolled(let p): return try v.visit(p, as: .deviceEnrolled)
        case .deviceRevoked(let p): return try v.visit(p, as: .deviceRevoked)
        case .goalMoved(let p): return try v.visit(p, as: .goalMoved)
        }
    }

    /// Lets `m` change the payload in its concrete type; on a throw the payload is unchanged.
    mutating func modify<M: PayloadModifier>(_ m: inout M) throws(M.Failure) {
        switch self {
        case .goalCreated(let p): self = .goalCreated(try m.modified(p, as: .goalCreated))
        case .goalEdited(let p): self = .goalEdited(try m.modified(p, as: .goalEdited))
        case .goalDeleted(let p): self = .goalDeleted(try m.modified(p, as: .goalDeleted))
        case .goalRestored(let p): self = .goalRestored(try m.modified(p, as: .goalRestored))
        case .reminderSet(let p): self = .reminderSet(try m.modified(p, as: .reminderSet))
        case .reminderCleared(let p): self = .reminderCleared(try m.modified(p, as: .reminderCleared))
        case .progressRecorded(let p): self = .progressRecorded(try m.modified(p, as: .progressRecorded))
        case .progressRemoved(let p): self = .progressRemoved(try m.modified(p, as: .progressRemoved))
        case .tagAdded(let p): self = .tagAdded(try m.modified(p, as: .tagAdded))
        case .tagRemoved(let p): self = .tagRemoved(try m.modified(p, as: .tagRemoved))
        case .deviceConfigured(let p): self = .deviceConfigured(try m.modified(p, as: .deviceConfigured))
        case .notificationAuthorization(let p): self = .notificationAuthorization(try m.modified(p, as: .notificationAuthorization))
        case .progressHistoryReplaced(let p): self = .progressHistoryReplaced(try m.modified(p, as: .progressHistoryReplaced))
        case .deviceEnrolled(let p): self = .deviceEnrolled(try m.modified(p, as: .deviceEnrolled))
        case .deviceRevoked(let p): self = .deviceRevoked(try m.modified(p, as: .deviceRevoked))
        case .goalMoved(let p): self = .goalMoved(try m.modified(p, as: .goalMoved))
        }
    }

    /// The goal the event is about, or nil for device events.
    public var goal: UUID? {
        struct GoalOf: PayloadVisitor {
            @inline(__always)
            func visit<P: EventPayload>(_ payload: P, as type: EventType) -> UUID? { payload.aboutGoal }
        }
        var v = GoalOf()
        return visit(&v)
    }
}
