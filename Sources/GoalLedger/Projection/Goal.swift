import Foundation

/// A goal as an app shows it: its current facts as plain typed values, without the registers
/// and stamps the fold keeps (``GoalState`` has those, for audits and conflicts).
public struct Goal: Equatable, Sendable, Identifiable {
    public var id: UUID
    /// The title.
    public var title: String
    /// Free text, or nil for none.
    public var details: String?
    /// How often progress resets.
    public var cadence: Cadence
    /// The day the goal should be reached by, or nil for none.
    public var targetDate: Day?
    /// A completion flag, or an amount against `target`.
    public var progressKind: ProgressKind
    /// For a measurable goal, the amount a period must reach; nil for an outcome goal.
    public var target: Double?
    /// The unit of a measurable goal's amounts, or nil for none.
    public var unit: String?
    /// The reminder time, or nil when the goal has no reminder.
    public var reminder: ReminderTime?
    /// The devices that should notify (nil: every device).
    public var reminderDevices: [String]?
    /// In NFC, sorted by their UTF-8 bytes.
    public var tags: [String]
    /// Whether the goal is deleted (its facts stay; a restore brings it back).
    public var isDeleted: Bool
    /// Live entries in canonical order.
    public var entries: [ProgressEntry]
}

extension GoalState {
    /// The goal's facts as plain values; nil before its `goalCreated` has been folded.
    public var goal: Goal? {
        guard exists else { return nil }
        return Goal(
            id: id, title: title?.value ?? "", details: details?.value ?? nil, cadence: cadence?.value ?? .once,
            targetDate: targetDate?.value ?? nil, progressKind: kind, target: kind == .measurable ? (target?.value ?? nil) : nil,
            unit: unit?.value ?? nil, reminder: reminder?.value ?? nil, reminderDevices: reminderDevices?.value ?? nil, tags: tags,
            isDeleted: isDeleted, entries: entries)
    }
}

extension LedgerStore {
    /// One goal's current facts, from the stored projection; nil for a goal the store does not
    /// know (or whose creation has not arrived yet).
    public func goal(_ id: UUID) throws(LedgerError) -> Goal? { try goalState(id).goal }
}
