import Foundation
import LMDB

/// The form of the goal index's rows (the `goalPositions` table, store format 4): a goal's
/// positions in the log, in order, as rows of consecutive ones.
///
///     key    goal id (16) · the row's first position (8, big-endian)
///     value  the goal's number of positions through this row's last (varint)
///            · for each further position of the row, its distance from the one before (varint, ≥ 1)
///
/// A goal's new positions go on its last row until that row's value reaches `fullSize` bytes,
/// then start a new one; its number of events is its last row's count. Positions of a goal a
/// thousand apart take two bytes each, where a sorted set of 8-byte duplicates (format 3 and
/// before: `goalEvents`) took 8, and a goal's sub-tree of such duplicates took a branch page of
/// its own once it outgrew a leaf.
enum GoalPositionRow {
    /// A row takes no more positions once its value is this long (a page then holds a dozen).
    static let fullSize = 240

    /// The row's key: `goal` and the row's first position.
    static func key(_ goal: IDWords, _ first: UInt64) -> [UInt8] { goal.bytes + first.bigEndianBytes }

    /// The value of a row whose positions after its first are `distances` and through whose
    /// last the goal counts `total`.
    static func value(total: UInt64, distances: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: distances.count + 4)
        w.varint(total)
        w.bytes.append(contentsOf: distances)
        return w.bytes
    }

    /// A stored row, read: its goal's bytes, its positions in order, and the goal's count
    /// through its last. Nil unless it has the form: a 24-byte key, a first position from 1,
    /// distances of at least 1 without overflow, and a count no smaller than the row's.
    struct Decoded {
        var positions: [UInt64] = []
        var total: UInt64 = 0
        /// Where the distances start in the value (after the count).
        var distancesStart = 0

        /// Reads the row into `self`, reusing its buffer; false when it is not of the form.
        mutating func read(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool {
            positions.removeAll(keepingCapacity: true)
            guard let end = GoalPositionRow.walk(key: key, value: value, { positions.append($0) }) else { return false }
            total = end.total
            distancesStart = end.distancesStart
            return true
        }
    }

    /// What appending to a stored row needs of it: its first and last positions, the goal's
    /// count through it and where its distances start; nil unless it has the form (the checks
    /// of `Decoded.read`, without keeping each position).
    static func end(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> (first: UInt64, last: UInt64, total: UInt64, distancesStart: Int)? {
        walk(key: key, value: value) { _ in }
    }

    /// Visits a stored row's positions in order; its first and last positions, its count and
    /// where its distances start, or nil when it is not of the form.
    private static func walk(
        key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, _ visit: (UInt64) -> Void
    ) -> (first: UInt64, last: UInt64, total: UInt64, distancesStart: Int)? {
        guard key.count == 24 else { return nil }
        let first = UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: key[16..<24]))
        var p = first
        guard p >= 1 else { return nil }
        var r = ByteReader(value)
        guard let total = try? r.varint() else { return nil }
        let distancesStart = r.index
        var count: UInt64 = 1
        visit(p)
        while !r.isAtEnd {
            guard let d = try? r.varint(), d >= 1 else { return nil }
            let (next, overflow) = p.addingReportingOverflow(d)
            guard !overflow else { return nil }
            p = next
            count += 1
            visit(p)
        }
        guard total >= count else { return nil }
        return (first, p, total, distancesStart)
    }
}

// The goal index: each goal's events' positions, in order.
extension StoreTransaction {
    /// Visits the goal index's positions in order of goal, then position, from the goal whose 16
    /// bytes are `start` (the first goal, when nil; with `only`, that goal's rows and no
    /// other's), as the goal's 16 bytes (valid only inside `body`) and the position, until
    /// `body` returns false. False when a row not of the index's form was met (damage; the walk
    /// stops there): rows out of form, a row whose first position is not after its goal's row
    /// before, or whose count does not follow on from it.
    func scanGoalPositions(
        from start: [UInt8]? = nil, only: Bool = false, _ body: (_ goal: UnsafeRawBufferPointer, _ position: UInt64) throws -> Bool
    ) throws -> Bool {
        var row = GoalPositionRow.Decoded()
        var previous: (goal: IDWords, last: UInt64, total: UInt64)?
        var sound = true
        try lmdb.scan(layout.goalPositions, from: start) { k, v in
            if only, let start, !k.prefix(16).elementsEqual(start) { return false }
            guard row.read(key: k, value: v) else {
                sound = false
                return false
            }
            let goal = IDWords(k)
            if let p = previous, p.goal == goal {
                // The counts come from the file: added with a check, never trapping on damage.
                let (through, overflow) = p.total.addingReportingOverflow(UInt64(row.positions.count))
                guard row.positions[0] > p.last, !overflow, row.total == through else {
                    sound = false
                    return false
                }
            } else if row.total != UInt64(row.positions.count) {
                // A goal's first row counts its own positions only (or the walk began mid-goal:
                // `start` is always a goal's first key).
                sound = false
                return false
            }
            previous = (goal, row.positions[row.positions.count - 1], row.total)
            let goalBytes = UnsafeRawBufferPointer(rebasing: k[0..<16])
            for position in row.positions where try !body(goalBytes, position) { return false }
            return true
        }
        return sound
    }

    /// Local positions of the events about `goal`, in order.
    func positions(ofGoal goal: UUID) throws -> [UInt64] {
        var positions: [UInt64] = []
        let key = goal.bytes
        let sound = try scanGoalPositions(from: key, only: true) { _, position in
            positions.append(position)
            return true
        }
        guard sound else { throw Self.goalIndexDamaged(goal) }
        return positions
    }

    /// How many events the goal index holds for `goal`: its last row's count (its first varint,
    /// read without the rest of the row).
    func goalEventCount(_ goal: UUID) throws -> Int {
        let count = try withLastGoalRow(IDWords(goal)) { _, v in
            var r = ByteReader(v)
            guard let count = try? r.varint() else { throw Self.goalIndexDamaged(goal) }
            return count
        }
        return Int(clamping: count ?? 0)
    }

    static func goalIndexDamaged(_ goal: UUID) -> LedgerError {
        LedgerError.damaged("the goal index holds a row of goal \(goal.uuidString) that is not a run of its positions")
    }

    /// The last row of `goal`, as appending to it needs it: its first and last positions, the
    /// goal's count through it and its distances (the value after the count); nil when the goal
    /// has none.
    private func lastGoalRow(_ goal: IDWords) throws -> (first: UInt64, last: UInt64, total: UInt64, distances: [UInt8])? {
        try withLastGoalRow(goal) { k, v in
            guard let end = GoalPositionRow.end(key: k, value: v) else { throw Self.goalIndexDamaged(goal.uuid) }
            return (end.first, end.last, end.total, Array(v[end.distancesStart...]))
        }
    }

    /// `body` of the last row of `goal` (its key and value, valid only inside `body`); nil when
    /// the goal has none.
    private func withLastGoalRow<R>(_ goal: IDWords, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R) throws -> R? {
        var result: R?
        try lmdb.scan(layout.goalPositions, fromFloor: GoalPositionRow.key(goal, .max)) { k, v in
            if k.count == 24, IDWords(k) == goal { result = try body(k, v) }
            return false
        }
        return result
    }

    /// The goal index's rows of a batch: each goal's positions (after every one it holds) go
    /// on its last row until it is full, then on new rows; a new row sorting after the table's
    /// last is appended.
    func putGoalPositions(_ goals: inout [(key: IDWords, position: UInt64)]) throws {
        // By goal, each goal's positions in the order given (a batch's are ascending already).
        goals.sortStably(byIDWords: \.key)
        // The table's last key, kept as the rows are put in key order: a new row after it is
        // appended.
        var tableLast = try lmdb.last(layout.goalPositions)?.key
        var positions: [UInt64] = []
        var w = ByteWriter(capacity: GoalPositionRow.fullSize + 16)
        var i = 0
        while i < goals.count {
            let goal = goals[i].key
            var j = i
            while j < goals.count, goals[j].key == goal { j += 1 }
            positions.removeAll(keepingCapacity: true)
            for k in i..<j { positions.append(goals[k].position) }
            if !positions.isSorted(by: <) { positions.sort() }
            try appendGoalPositions(goal, positions, writer: &w, tableLast: &tableLast)
            i = j
        }
    }

    /// Appends `positions` (ascending, after the goal's last) to `goal`'s rows; `w` is a buffer
    /// for the rows' distances, `tableLast` the table's last key.
    private func appendGoalPositions(_ goal: IDWords, _ positions: [UInt64], writer w: inout ByteWriter, tableLast: inout [UInt8]?) throws {
        guard let next = positions.first else { return }
        let lastRow = try lastGoalRow(goal)
        if let lastRow, next <= lastRow.last { throw Self.goalIndexDamaged(goal.uuid) }
        // The row being written: the goal's last when it has room, else a new one from `next`.
        var first: UInt64
        var last: UInt64
        var total: UInt64
        w.bytes.removeAll(keepingCapacity: true)
        var rest = positions[...]
        // A stored count may be anything a damaged file holds: one that would overflow is damage.
        func counted(_ n: UInt64) throws -> UInt64 {
            let (more, overflow) = n.addingReportingOverflow(1)
            if overflow { throw Self.goalIndexDamaged(goal.uuid) }
            return more
        }
        if let lastRow, lastRow.distances.count < GoalPositionRow.fullSize {
            (first, last, total) = (lastRow.first, lastRow.last, lastRow.total)
            w.bytes.append(contentsOf: lastRow.distances)
        } else {
            (first, last, total) = (next, next, try counted(lastRow?.total ?? 0))
            rest = rest.dropFirst()
        }
        for p in rest {
            guard p > last else { throw Self.goalIndexDamaged(goal.uuid) }
            total = try counted(total)
            if w.bytes.count >= GoalPositionRow.fullSize {
                try putGoalRow(goal, first, total: total - 1, distances: w.bytes, tableLast: &tableLast)
                (first, last) = (p, p)
                w.bytes.removeAll(keepingCapacity: true)
                continue
            }
            w.varint(p - last)
            last = p
        }
        try putGoalRow(goal, first, total: total, distances: w.bytes, tableLast: &tableLast)
    }

    private func putGoalRow(_ goal: IDWords, _ first: UInt64, total: UInt64, distances: [UInt8], tableLast: inout [UInt8]?) throws {
        let key = GoalPositionRow.key(goal, first)
        let appending = tableLast.map { $0.lexicographicallyPrecedes(key) } ?? true
        try lmdb.put(layout.goalPositions, key: key, value: GoalPositionRow.value(total: total, distances: distances), options: appending ? .append : [])
        if appending { tableLast = key }
    }

    /// Removes `position` from `goal`'s rows, writing them again without it; false when they do
    /// not hold it (for tests that damage the index).
    @discardableResult
    func removeGoalPosition(_ goal: UUID, _ position: UInt64) throws -> Bool {
        let positions = try self.positions(ofGoal: goal)
        guard positions.contains(position) else { return false }
        let words = IDWords(goal)
        var keys: [[UInt8]] = []
        try lmdb.scan(layout.goalPositions, from: goal.bytes) { k, _ in
            guard k.count == 24, IDWords(k) == words else { return false }
            keys.append(Array(k))
            return true
        }
        for k in keys { try lmdb.delete(layout.goalPositions, key: k) }
        var rest = positions.filter { $0 != position }.map { (key: words, position: $0) }
        try putGoalPositions(&rest)
        return true
    }

    /// Fills the goal index from the goal index of format 3 and before (`goalEvents`, a sorted
    /// set of 8-byte positions under each goal), then drops that table; a store without that
    /// table keeps its goal index as it is. A stored value that is no position is left out
    /// (damage, which `verify` names).
    func rebuildGoalIndex() throws {
        guard let old = try? lmdb.openDatabase(named: "goalEvents", create: false, duplicates: .fixedSize) else { return }
        var goals: [(key: IDWords, position: UInt64)] = []
        try lmdb.scan(old) { k, v in
            if k.count == 16, v.count == 8 { goals.append((IDWords(k), UInt64(bigEndianBytes: v))) }
            return true
        }
        // Each goal's positions in order once (the old table's duplicates sort as numbers).
        goals.sort { $0.key == $1.key ? $0.position < $1.position : $0.key < $1.key }
        let sorted = goals
        goals = sorted.enumerated().filter { i, g in
            g.position >= 1 && (i == 0 || sorted[i - 1].key != g.key || sorted[i - 1].position != g.position)
        }.map(\.element)
        try lmdb.clear(layout.goalPositions)
        try putGoalPositions(&goals)
        try lmdb.dropDatabase(named: "goalEvents", duplicates: .fixedSize)
    }
}
