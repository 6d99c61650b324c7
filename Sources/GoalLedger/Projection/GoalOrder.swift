import Foundation

/// A goal's place in the person's order, as every store sorts goals: by ``key``, then by
/// ``stamp`` (equal keys come from moves made concurrently on two devices), then by goal id.
/// Devices that hold the same events list goals in the same order.
public struct GoalOrderKey: Comparable, Hashable, Sendable {
    /// The goal's position key, or for a goal never moved `FF` followed by its creation's clock
    /// reading (``PositionKey``).
    public var key: PositionKey
    /// Who wrote the key: the goal's winning `goalMoved`, or its `goalCreated`.
    public var stamp: Stamp
    /// The goal's id.
    public var goal: UUID

    public static func < (a: GoalOrderKey, b: GoalOrderKey) -> Bool {
        if a.key != b.key { return a.key < b.key }
        if a.stamp != b.stamp { return a.stamp < b.stamp }
        return UUID.precedes(a.goal, b.goal)
    }
}

extension GoalOrderKey {
    /// The indices of `keys` in the order of their keys (equal keys in index order).
    ///
    /// Each key's first 8 bytes, read as a big-endian integer with zeros after a shorter key,
    /// order two keys whenever they differ (a key is a prefix of any key it pads equal to), so
    /// most comparisons are of two integers; the whole keys are compared only when those agree.
    static func sortedIndices(_ keys: [GoalOrderKey]) -> [Int] {
        var order: [(prefix: UInt64, index: Int)] = keys.indices.map { i in
            var prefix: UInt64 = 0
            let bytes = keys[i].key.bytes
            for j in 0..<8 { prefix = prefix << 8 | UInt64(j < bytes.count ? bytes[j] : 0) }
            return (prefix, i)
        }
        order.sort { a, b in
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            if keys[a.index] < keys[b.index] { return true }
            if keys[b.index] < keys[a.index] { return false }
            return a.index < b.index
        }
        return order.map(\.index)
    }
}

extension GoalState {
    /// The goal's place in the person's order; nil before its `goalCreated` has been folded.
    public var orderKey: GoalOrderKey? {
        guard let created = progressKind?.stamp else { return nil }
        if let p = position { return GoalOrderKey(key: p.value, stamp: p.stamp, goal: id) }
        return GoalOrderKey(key: .unmoved(createdAt: created.key.hlc), stamp: created, goal: id)
    }
}

/// Where a move puts a goal: the rule that turns a ``GoalPlacement`` into position keys, a pure
/// function of the goals a store holds and the move's clock reading.
enum GoalOrder {
    /// What a move writes: the moved goal's key, and when no key of at most
    /// ``PositionKey/maximumLength`` bytes fits between its new neighbours, fresh keys for the
    /// other live goals too (``renumbered``, in order), the moved goal's taken from the same
    /// spread.
    struct Plan: Equatable {
        var key: PositionKey
        var renumbered: [(goal: UUID, key: PositionKey)] = []

        static func == (a: Plan, b: Plan) -> Bool {
            a.key == b.key && a.renumbered.map(\.goal) == b.renumbered.map(\.goal) && a.renumbered.map(\.key) == b.renumbered.map(\.key)
        }
    }

    /// The live goals of `goals` (created, not deleted) in the person's order.
    static func ordered(_ goals: [GoalState]) -> [GoalState] {
        goals.compactMap { g in g.isDeleted ? nil : g.orderKey.map { (g, $0) } }.sorted { $0.1 < $1.1 }.map(\.0)
    }

    /// The keys a move of `goal` to `placement` writes, among `goals` (every goal the store
    /// holds; deleted and uncreated ones are skipped), by a move whose clock reading is `next`.
    ///
    /// - Moving to the end (`last`, or after the last goal) writes the key a goal created by
    ///   the move would sort by (`FF` and `next`), so a goal created after the move still goes
    ///   after it; if another device's key already sorts later, the last key with one more digit.
    /// - Elsewhere, the shortest key strictly between the neighbours'.
    /// - Renumbering when no such key fits within the limit, or the neighbours' keys are equal.
    ///
    /// Refuses an unknown or deleted goal or anchor, naming the field (`goal`, `after`,
    /// `before`).
    static func place(_ goal: UUID, _ placement: GoalPlacement, among goals: [GoalState], next: HLC) throws(FieldError) -> Plan {
        let byID = Dictionary(goals.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        guard let moved = byID[goal], moved.exists else { throw FieldError.unknownGoal(goal) }
        guard !moved.isDeleted else { throw FieldError("goal", "goal \(goal.uuidString) is deleted; only goalRestored is accepted") }
        if let anchor = placement.anchor {
            guard anchor != goal else { throw FieldError(placement.field, "must name another goal than the one moved") }
            guard let a = byID[anchor], a.exists else { throw FieldError.unknownGoal(anchor, field: placement.field) }
            guard !a.isDeleted else {
                throw FieldError(placement.field, "goal \(anchor.uuidString) is deleted; move the goal relative to one that is not")
            }
        }
        let others = ordered(goals).filter { $0.id != goal }
        // The index in `others` the goal lands at.
        let at: Int
        switch placement {
        case .first: at = 0
        case .last: at = others.count
        case .after(let a): at = others.firstIndex { $0.id == a }! + 1
        case .before(let b): at = others.firstIndex { $0.id == b }!
        }
        let low = at > 0 ? others[at - 1].orderKey!.key : nil
        if at == others.count {
            let created = PositionKey.unmoved(createdAt: next)
            if let low, !(low < created) {
                let k = PositionKey.justAfter(low)
                if k.bytes.count <= PositionKey.maximumLength { return Plan(key: k) }
            } else {
                return Plan(key: created)
            }
        } else if let k = PositionKey.between(low, others[at].orderKey!.key), k.bytes.count <= PositionKey.maximumLength {
            return Plan(key: k)
        }
        return renumber(goal, at: at, others: others)
    }

    /// Fresh keys for every live goal, the moved one at index `at` among `others`.
    static func renumber(_ goal: UUID, at: Int, others: [GoalState]) -> Plan {
        var ids = others.map(\.id)
        ids.insert(goal, at: at)
        let keys = PositionKey.spread(ids.count)
        return Plan(key: keys[at], renumbered: zip(ids, keys).filter { $0.0 != goal }.map { (goal: $0.0, key: $0.1) })
    }
}
