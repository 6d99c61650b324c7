import GoalLedger

extension LedgerError.Code {
    /// The exit code of this kind of failure, in the conventions of the `ledger` command and
    /// of the scenario format's `expectError`: 1 internal, 2 invalid argument (usage),
    /// 3 invalid input, 4 version conflict, 5 store.
    package var exitCode: Int32 {
        switch self {
        case .invalidArgument: 2
        case .invalidInput: 3
        case .versionConflict: 4
        case .store: 5
        default: 1
        }
    }
}
