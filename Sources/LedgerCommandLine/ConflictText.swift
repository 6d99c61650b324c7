import Foundation
import GoalLedger
import LedgerHub

enum ConflictText {
    static func describe(_ c: Conflict) -> String {
        let lost = c.overwritten.map { "\($0.device) \(JSONWriter.message($0.value)) (\($0.event.uuidString))" }.joined(separator: "; ")
        if c.field == .deleted, c.winner.value == .bool(true) {
            return "\(c.goal.uuidString) deleted by \(c.winner.device) (\(c.winner.event.uuidString)) without having seen: \(lost)"
        }
        return
            "\(c.goal.uuidString) \(c.field.rawValue): \(c.winner.device) wrote \(JSONWriter.message(c.winner.value)) (\(c.winner.event.uuidString)), overwriting \(lost)"
    }
}
