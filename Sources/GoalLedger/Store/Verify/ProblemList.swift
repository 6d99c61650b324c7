import Foundation

/// The problems one check found, at most as many as a report holds (the first ones; a report
/// keeps the first problems of all the checks in order, so no check needs more).
struct ProblemList {
    let check: VerificationCheck
    private(set) var problems: [VerificationProblem] = []
    /// For a problem found at a record of the log, the record's place in the read (the first
    /// record read is 0); nil for one found afterwards.
    private(set) var records: [Int?] = []

    init(_ check: VerificationCheck) { self.check = check }

    /// Whether the list holds as many problems as a report does.
    var isFull: Bool { problems.count >= VerificationReport.limit }

    mutating func add(
        _ message: String, position: UInt64? = nil, origin: String? = nil, sequence: UInt64? = nil, goal: UUID? = nil,
        record: Int? = nil
    ) {
        guard !isFull else { return }
        problems.append(VerificationProblem(check, message, position: position, origin: origin, sequence: sequence, goal: goal))
        records.append(record)
    }

    /// The problems of `a` and `b`, each found at records of the log, in the order the records
    /// were read; at one record, `a`'s first.
    static func inRecordOrder(_ a: ProblemList, _ b: ProblemList) -> [VerificationProblem] {
        var out: [VerificationProblem] = []
        out.reserveCapacity(a.problems.count + b.problems.count)
        var i = 0
        var j = 0
        while i < a.problems.count || j < b.problems.count {
            if j == b.problems.count || (i < a.problems.count && (a.records[i] ?? .max) <= (b.records[j] ?? .max)) {
                out.append(a.problems[i])
                i += 1
            } else {
                out.append(b.problems[j])
                j += 1
            }
        }
        return out
    }
}
