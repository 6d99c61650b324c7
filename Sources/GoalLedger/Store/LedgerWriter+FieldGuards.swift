import Foundation

extension LedgerWriter {
    /// Refuses the write, as a version conflict naming the goal and the first field in
    /// ``GoalField`` order, when a field of `guards` no longer holds the write its version names
    /// (read in this transaction, so a write committed since the caller read is seen). A goal
    /// the store does not hold passes: the event itself is then refused, naming it.
    func checkUnchanged(_ guards: [GoalField: FieldVersion], of goal: UUID) throws(LedgerError) {
        guard !guards.isEmpty else { return }
        try run("appending to \(store.path)") {
            let tables = try txn.activeProjection()
            guard let state = try StoredProjection.header(goal, txn, tables), state.exists else { return }
            for field in GoalField.allCases {
                guard let expected = guards[field], state.version(of: field) != expected else { continue }
                throw LedgerError(
                    "goal \(goal.uuidString): its \(field.rawValue) was changed since it was read; nothing was written",
                    reason: .fieldVersionConflict(goal: goal, field: field))
            }
        }
    }
}
