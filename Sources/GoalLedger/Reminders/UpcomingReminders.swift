import Foundation

/// One time a request a device holds will fire.
public struct UpcomingReminder: Equatable, Sendable {
    /// The request that fires.
    public var request: NotificationRequest
    /// When it fires.
    public var fireAt: Instant
}

extension ReminderPlan {
    /// Every time the requests of this plan (planned at `now`) fire in `now` < t ≤ `end`, sorted
    /// by time, then id: a repeating request fires once per period start, a window's dated
    /// requests once each, including the days the window reaches as time passes. Each goal
    /// the plan holds is planned again from each fire time it reaches, so the times are the
    /// policy's own (DST, completed periods, one-time goals), never recomputed from a trigger.
    public func fireTimes(goals: [GoalState], device: DeviceState, now: Instant, through end: Instant) -> [UpcomingReminder] {
        let held = Set(requests.map(\.plannedGoal))
        var out: [UpcomingReminder] = []
        for goal in goals where held.contains(goal.id) {
            var seen = Set<String>()
            var t = now
            while true {
                let next = ReminderPlan.requests(for: goal, device: device, now: t).filter { $0.plannedFireAt <= end }
                let new = next.filter { seen.insert($0.id + "@" + $0.plannedFireAt.rfc3339).inserted }
                guard let last = new.map(\.plannedFireAt).max(), last > t else { break }
                out += new.map { UpcomingReminder(request: $0, fireAt: $0.plannedFireAt) }
                t = last
            }
        }
        return out.sorted { a, b in a.fireAt != b.fireAt ? a.fireAt < b.fireAt : String.bytesPrecede(a.request.id, b.request.id) }
    }
}
