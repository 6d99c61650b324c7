extension Collection {
    /// Whether each element is in order with the next under `areInIncreasingOrder` (no pair
    /// where the later one sorts first).
    func isSorted(by areInIncreasingOrder: (Element, Element) throws -> Bool) rethrows -> Bool {
        var previous = first
        for element in dropFirst() {
            if try areInIncreasingOrder(element, previous!) { return false }
            previous = element
        }
        return true
    }
}
