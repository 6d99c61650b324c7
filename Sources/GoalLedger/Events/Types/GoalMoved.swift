import Foundation

/// Where a move puts a goal in the person's order, relative to the goals it holds.
public enum GoalPlacement: Hashable, Sendable {
    /// Before every other goal.
    case first
    /// After every other goal.
    case last
    /// Right after the goal given.
    case after(UUID)
    /// Right before the goal given.
    case before(UUID)

    /// The goal named as the anchor, if any.
    public var anchor: UUID? {
        switch self {
        case .first, .last: nil
        case .after(let g), .before(let g): g
        }
    }

    /// The anchor's member in the JSON form (`after` for first, `before` for last).
    var field: String {
        switch self {
        case .first, .after: "after"
        case .last, .before: "before"
        }
    }
}

/// Moves a goal in the person's order (`goalMoved`, schema 2): writes the goal's position
/// register (``GoalRegister/position``) with a ``PositionKey`` the store computes at append
/// between the keys of the goals the move lands between. A caller names the place
/// (``placement``); the stored event keeps both the place and the key, and every store sorts by
/// the key, so devices holding the same events list goals in the same order.
///
/// When no key short enough fits between the neighbours, the store renumbers: the same batch
/// holds a `goalMoved` for every live goal, with fresh, evenly spread keys and no placement.
public struct GoalMoved: Equatable, Sendable {
    /// The goal moved.
    public var goal: UUID
    /// Where the caller put it; nil for a move the store wrote to renumber the goals.
    public var placement: GoalPlacement?
    /// The goal's new key (filled in at append).
    public internal(set) var key: PositionKey?
    /// The position write the author replaced: the goal's last move, or its creation (filled
    /// in at append).
    public internal(set) var replaces: UUID?

    /// A move of `goal` to `placement`.
    public init(goal: UUID, placement: GoalPlacement) {
        self.goal = goal
        self.placement = placement
    }

    init(goal: UUID, placement: GoalPlacement?, key: PositionKey?, replaces: UUID?) {
        self.goal = goal
        self.placement = placement
        self.key = key
        self.replaces = replaces
    }
}

extension GoalMoved: GoalEventPayload {
    static let schemas = [2]

    /// Exactly one of `after` (a goal id, or null for first) and `before` (a goal id, or null
    /// for last).
    init(json r: inout ObjectReader) throws(FieldError) {
        let goal = try r.goal()
        let after = try Self.anchor("after", &r)
        let before = try Self.anchor("before", &r)
        let placement: GoalPlacement
        switch (after, before) {
        case (.some, .some): throw FieldError("before", "give either after or before, not both")
        case (nil, nil):
            throw FieldError("after", "is required (or before): the goal to move after, or null to move it first")
        case (.some(let a), nil): placement = a.map(GoalPlacement.after) ?? .first
        case (nil, .some(let b)): placement = b.map(GoalPlacement.before) ?? .last
        }
        self.init(goal: goal, placement: placement)
    }

    /// A member that is a goal id or null: `.some(nil)` for null, nil when absent.
    private static func anchor(_ key: String, _ r: inout ObjectReader) throws(FieldError) -> UUID?? {
        guard let v = r.raw(key) else { return nil }
        switch v {
        case .null: return .some(nil)
        case .string(let s):
            guard let id = UUID.parse(s) else { throw FieldError(key, "must be a goal id (UUID) or null, got \"\(s)\"") }
            return .some(id)
        default: throw FieldError(key, "must be a goal id (UUID) or null, got \(v.typeName)")
        }
    }

    var jsonMembers: [(String, JSONValue)] {
        var m: [(String, JSONValue)] = [("goal", .id(goal))]
        if let p = placement { m.append((p.field, .id(p.anchor))) }
        if let k = key { m.append(("key", .string(k.description))) }
        if let r = replaces { m.append(("replaces", .id(r))) }
        return m
    }

    /// A presence bitmask (`placement`, `key`, `replaces`), the goal, the placement (a code:
    /// 0 first, 1 last, 2 after, 3 before; then the anchor), the key (a count, then its bytes),
    /// then the replaced write.
    init(binary r: inout ByteReader) throws(RecordDecodingError) {
        let bits = try r.varint()
        guard bits & ~7 == 0 else { throw RecordDecodingError(reason: "goalMoved carries a placement, a key and a replaced write only") }
        var f = PresenceReader(bits)
        let hasPlacement = f.take()
        let hasKey = f.take()
        let hasReplaces = f.take()
        let goal = try r.uuid()
        var placement: GoalPlacement?
        if hasPlacement {
            switch try r.u8() {
            case 0: placement = .first
            case 1: placement = .last
            case 2: placement = .after(try r.uuid())
            case 3: placement = .before(try r.uuid())
            case let c: throw RecordDecodingError(reason: "unknown placement code \(c)")
            }
        }
        var key: PositionKey?
        if hasKey {
            let n = try r.varint()
            guard n <= UInt64(PositionKey.maximumLength) else { throw RecordDecodingError(reason: "a position key of \(n) bytes") }
            key = PositionKey(try r.fixed(Int(n)))
        }
        self.init(goal: goal, placement: placement, key: key, replaces: hasReplaces ? try r.uuid() : nil)
    }

    func encode(into w: inout ByteWriter) {
        var f = Presence()
        f.mark(placement != nil)
        f.mark(key != nil)
        f.mark(replaces != nil)
        w.varint(f.bits)
        w.uuid(goal)
        switch placement {
        case nil: break
        case .first: w.u8(0)
        case .last: w.u8(1)
        case .after(let g):
            w.u8(2)
            w.uuid(g)
        case .before(let g):
            w.u8(3)
            w.uuid(g)
        }
        if let key {
            w.varint(UInt64(key.bytes.count))
            w.bytes += key.bytes
        }
        if let r = replaces { w.uuid(r) }
    }

    /// The anchor is another goal; the key within its limits. A draft names a place; a stored
    /// move carries its key.
    func checkWellFormed(_ stage: GateStage) throws(FieldError) {
        if let p = placement, p.anchor == goal { throw FieldError(p.field, "must name another goal than the one moved") }
        if let key { try key.check(field: "key") }
        switch stage {
        case .draft:
            if placement == nil { throw FieldError("after", "is required (or before): the goal to move after, or null to move it first") }
        case .stored:
            if key == nil { throw FieldError("key", "is required in a stored goalMoved (the store fills it in at append)") }
        }
    }

    /// Records the position write replaced; the key is the store's, computed before the rules
    /// run (`LedgerStore.place`).
    mutating func prepare(as type: EventType, goal state: borrowing GoalState, _ c: LocalContext) throws(FieldError) {
        guard let key else { throw FieldError("key", "no position was computed for the move") }
        try key.check(field: "key")
        replaces = state.stamp(of: .position)?.event
    }

    func registerWrites(as type: EventType) -> [RegisterWrite] {
        [RegisterWrite(register: .position, replaces: replaces, value: key.map { .string($0.description) } ?? .null)]
    }

    /// A move changes the goal.
    func yieldsToDeletion(as type: EventType) -> Bool { true }

    func audit(as type: EventType, _ step: inout AuditStep, before: GoalState, after: GoalState, lost: Set<UUID>) -> AuditWrites {
        AuditWrites(facts: [.register(.position)], replaced: [.position: replaces])
    }
}

extension Payload {
    /// A `goalMoved` of `goal` to `placement` (its key is filled in at append).
    public static func goalMoved(_ goal: UUID, to placement: GoalPlacement) -> Payload {
        .goalMoved(GoalMoved(goal: goal, placement: placement))
    }
}
