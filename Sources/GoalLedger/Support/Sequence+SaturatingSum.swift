extension Sequence {
    /// The sum of `count` over the elements, stopping at `Int.max` instead of overflowing:
    /// for counts a peer's numbers make (how many events it says it is ahead by), which no
    /// arithmetic may take unchecked.
    package func saturatingSum(_ count: (Element) -> Int) -> Int {
        var total = 0
        for element in self {
            let (sum, overflow) = total.addingReportingOverflow(Swift.max(0, count(element)))
            if overflow { return .max }
            total = sum
        }
        return total
    }
}
