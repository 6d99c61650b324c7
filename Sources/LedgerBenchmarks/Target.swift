/// What a figure must reach, and whether it does. Targets are stated for the full run's sizes
/// (1,000,000 events over 1,000 goals, 200,000 lines); a run at other sizes prints them
/// without judging them.
public struct Target: Sendable {
    /// The target as the table prints it, e.g. "≥ 300,000 events/s".
    public var text: String
    let isMet: @Sendable (Figure) -> Bool

    public init(_ text: String, isMet: @escaping @Sendable (Figure) -> Bool) {
        self.text = text
        self.isMet = isMet
    }

    /// The figure's value at least `value`.
    public static func atLeast(_ value: Double, _ text: String) -> Target { Target(text) { $0.value >= value } }
    /// The figure's value at most `value`.
    public static func atMost(_ value: Double, _ text: String) -> Target { Target(text) { $0.value <= value } }
    /// The figure's ratio to its baseline at least (`higher`) or at most `ratio`.
    public static func ratio(_ ratio: Double, higher: Bool, _ text: String) -> Target {
        Target(text) { f in f.ratio.map { higher ? $0 >= ratio : $0 <= ratio } ?? false }
    }
    /// The figure's ratio to the SQLite peer at least (`higher`) or at most `ratio`.
    public static func peerRatio(_ ratio: Double, higher: Bool, _ text: String) -> Target {
        Target(text) { f in f.peerRatio.map { higher ? $0 >= ratio : $0 <= ratio } ?? false }
    }
    /// A whole process's time at most `seconds` and its peak memory at most `mebibytes`.
    public static func process(seconds: Double, mebibytes: Double, _ text: String) -> Target {
        Target(text) { f in f.value <= seconds && (f.peakMiB ?? .infinity) <= mebibytes }
    }
}

extension Figure {
    /// "met" or "missed" when `judged` (a run at the full sizes), else "not judged".
    public func verdict(judged: Bool) -> String? {
        guard let target else { return nil }
        guard judged else { return "not judged" }
        return target.isMet(self) ? "met" : "missed"
    }

    /// The target and its verdict, as the table prints them ("-" without a target).
    public func targetColumn(judged: Bool) -> String {
        guard let target, let verdict = verdict(judged: judged) else { return "-" }
        return target.text + ": " + verdict
    }
}
