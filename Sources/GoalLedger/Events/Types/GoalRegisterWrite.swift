import Foundation

/// The members `goalDeleted`, `goalRestored` and `reminderCleared` have in common, in one form:
/// `Payload.goalDeleted(_:)`, `Payload.goalRestored(_:)` and `Payload.reminderCleared(_:)` take
/// it and build the event type's own payload (``GoalDeleted``, ``GoalRestored``,
/// ``ReminderCleared``). Only a deletion records `seen`; the others leave it out.
public struct GoalRegisterWrite: Equatable, Sendable {
    /// The goal written.
    public var goal: UUID
    /// The write of the register the author replaced (filled in at append).
    public var replaces: UUID?
    /// For `goalDeleted`: the last origin sequence of each device its author's store held
    /// (filled in at append).
    public var seen: [String: UInt64] = [:]

    /// A write of `goal`'s register, replacing `replaces`.
    public init(goal: UUID, replaces: UUID? = nil, seen: [String: UInt64] = [:]) {
        self.goal = goal
        self.replaces = replaces
        self.seen = seen
    }
}

extension Payload {
    /// A `goalDeleted` of `write`'s goal, with its `replaces` and `seen`.
    public static func goalDeleted(_ write: GoalRegisterWrite) -> Payload {
        .goalDeleted(GoalDeleted(goal: write.goal, replaces: write.replaces, seen: write.seen))
    }

    /// A `goalRestored` of `write`'s goal, with its `replaces`.
    public static func goalRestored(_ write: GoalRegisterWrite) -> Payload {
        .goalRestored(GoalRestored(goal: write.goal, replaces: write.replaces))
    }

    /// A `reminderCleared` of `write`'s goal, with its `replaces`.
    public static func reminderCleared(_ write: GoalRegisterWrite) -> Payload {
        .reminderCleared(ReminderCleared(goal: write.goal, replaces: write.replaces))
    }
}

/// The JSON and stored form of a payload that is a goal and the register write it replaced
/// (`goalRestored`, `reminderCleared`): a presence bitmask, the goal, then the replaced write.
/// The bitmask is the one `goalDeleted` writes, whose second bit (its `seen`) these types never
/// set.
struct GoalWriteForm {
    var goal: UUID
    var replaces: UUID?

    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = [("goal", .id(goal))]
        if let r = replaces { m.append(("replaces", .id(r))) }
        return m
    }

    init(goal: UUID, replaces: UUID?) {
        self.goal = goal
        self.replaces = replaces
    }

    /// Reads the form of an event of type `type`, refusing bits it never sets.
    init(binary r: inout ByteReader, of type: String) throws(RecordDecodingError) {
        let bits = try r.varint()
        guard bits & ~1 == 0 else { throw RecordDecodingError(reason: "\(type) carries only a goal and the write it replaced") }
        goal = try r.uuid()
        replaces = bits & 1 != 0 ? try r.uuid() : nil
    }

    func encode(into w: inout ByteWriter) {
        w.varint(replaces == nil ? 0 : 1)
        w.uuid(goal)
        if let r = replaces { w.uuid(r) }
    }
}
