import Foundation

extension GoalProjection {
    mutating func insert(_ g: GoalState) { goals[g.id] = g }
    mutating func insert(_ d: DeviceState) { devices[d.name] = d }
}
