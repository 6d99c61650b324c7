import Foundation

/// One progress entry: a `progressRecorded` event, keyed by its event id.
public struct ProgressEntry: Equatable, Sendable {
    public var id: UUID
    public var amount: Double?
    public var completed: Bool?
    public var occurredAt: Instant
    public var day: Day
    public var device: String
    public var key: CanonicalKey
}

/// The facts about one goal, folded from its events. Every part is a merge that does not depend
/// on the order events arrive in: registers by canonical order, tags as an add-wins set, entries
/// as a set keyed by event id with removals winning.
public struct GoalState: Equatable, Sendable {
    public let id: UUID
    public internal(set) var progressKind: Register<ProgressKind>?
    public internal(set) var title: Register<String>?
    public internal(set) var details: Register<String?>?
    public internal(set) var cadence: Register<Cadence>?
    public internal(set) var targetDate: Register<Day?>?
    public internal(set) var target: Register<Double?>?
    public internal(set) var unit: Register<String?>?
    public internal(set) var reminder: Register<ReminderTime?>?
    public internal(set) var deletion: Register<Bool>?
    /// For each tag, the events that added it.
    public internal(set) var tagAdds: [String: Set<UUID>] = [:]
    /// Adds cancelled by a `tagRemoved` whose author had seen them.
    public internal(set) var removedTagAdds: Set<UUID> = []
    public internal(set) var recordedEntries: [UUID: ProgressEntry] = [:]
    public internal(set) var removedEntries: Set<UUID> = []
    /// How many events about this goal were folded (the goal's stream version).
    public internal(set) var version: Int = 0

    public init(id: UUID) { self.id = id }

    /// A state carrying only existence, deletion and kind (what the rules for recording
    /// progress read), from a stored header's status bytes.
    init(id: UUID, status: (deleted: Bool, kind: ProgressKind)?) {
        self.id = id
        guard let status else { return }
        let placeholder = Stamp(key: CanonicalKey(hlc: HLC(rawValue: 0), device: ""), event: id)
        progressKind = Register(status.kind, placeholder)
        deletion = Register(status.deleted, placeholder)
    }

    /// Whether any event other than progress has been folded (the stored header exists).
    var hasHeader: Bool {
        progressKind != nil || title != nil || deletion != nil || reminder != nil || !tagAdds.isEmpty || !removedTagAdds.isEmpty
            || details != nil || cadence != nil || targetDate != nil || target != nil || unit != nil
    }

    /// True once a `goalCreated` has been folded (events can arrive before it by sync).
    public var exists: Bool { progressKind != nil }
    public var isDeleted: Bool { deletion?.value ?? false }
    public var kind: ProgressKind { progressKind?.value ?? .outcome }

    public var tags: [String] {
        tagAdds.compactMap { tag, adds in adds.isSubset(of: removedTagAdds) ? nil : tag }.sorted()
    }

    /// The adds of `tag` still in effect (what a `tagRemoved` authored now would cancel).
    public func liveAdds(of tag: String) -> [UUID] {
        (tagAdds[tag] ?? []).subtracting(removedTagAdds).sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
    }

    /// Live entries in canonical order.
    public var entries: [ProgressEntry] {
        recordedEntries.values.filter { !removedEntries.contains($0.id) }.sorted { $0.key < $1.key }
    }

    public func isLiveEntry(_ id: UUID) -> Bool { recordedEntries[id] != nil && !removedEntries.contains(id) }

    /// The stamp of the value each editable field currently holds.
    public func stamp(of field: GoalField) -> Stamp? {
        switch field {
        case .title: return title?.stamp
        case .details: return details?.stamp
        case .cadence: return cadence?.stamp
        case .targetDate: return targetDate?.stamp
        case .target: return target?.stamp
        case .unit: return unit?.stamp
        }
    }

    /// Adds the entry a `progressRecorded` event is.
    mutating func record(_ e: Event) {
        guard case .progressRecorded(let p) = e.payload else { return }
        let occurred = p.occurredAt ?? e.at
        recordedEntries[e.id] = ProgressEntry(
            id: e.id, amount: p.amount, completed: p.completed, occurredAt: occurred,
            day: p.day ?? occurred.day(in: Self.utc), device: e.origin, key: e.key)
    }

    static let utc = TimeZone(identifier: "UTC")!

    /// Folds one event about this goal.
    public mutating func apply(_ e: Event) {
        let s = Stamp(e)
        version += 1
        switch e.payload {
        case .goalCreated(let p):
            progressKind.offer(p.progressKind, s)
            title.offer(p.title, s)
            details.offer(p.details, s)
            cadence.offer(p.cadence, s)
            targetDate.offer(p.targetDate, s)
            target.offer(p.target, s)
            unit.offer(p.unit, s)
            reminder.offer(p.reminder, s)
            deletion.offer(false, s)
            for tag in p.tags { tagAdds[tag, default: []].insert(e.id) }
        case .goalEdited(let p):
            if let v = p.title { title.offer(v, s) }
            if let v = p.details { details.offer(v, s) }
            if let v = p.cadence { cadence.offer(v, s) }
            if let v = p.targetDate { targetDate.offer(v, s) }
            if let v = p.target { target.offer(v, s) }
            if let v = p.unit { unit.offer(v, s) }
        case .goalDeleted: deletion.offer(true, s)
        case .goalRestored: deletion.offer(false, s)
        case .reminderSet(let p):
            reminder.offer(ReminderTime(hour: p.hour ?? ReminderTime.default.hour, minute: p.minute ?? ReminderTime.default.minute), s)
        case .reminderCleared: reminder.offer(nil, s)
        case .progressRecorded:
            record(e)
        case .progressRemoved(let p): removedEntries.insert(p.entry)
        case .tagAdded(let p): tagAdds[p.tag, default: []].insert(e.id)
        case .tagRemoved(let p): removedTagAdds.formUnion(p.observed)
        case .deviceConfigured, .notificationAuthorization: break
        }
    }
}
