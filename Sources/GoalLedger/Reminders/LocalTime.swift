import Foundation

/// The instant a local wall-clock time of `day` happens in `timeZone`.
///
/// A time skipped by a forward transition (02:30 on a spring-forward day) moves to the first
/// valid instant after the gap, the instant the clock jumps to (03:00). A time that happens twice
/// (fall-back) takes its first occurrence. Only the zone's offsets are read, never the machine's
/// time zone or locale.
package func localInstant(day: Day, hour: Int, minute: Int, timeZone: TimeZone) -> Instant {
    // The wall time counted as if it were UTC: the instant we want is `wall - offset(instant)`.
    let wall = Int64(day.daysSinceEpoch) * 86_400 + Int64(hour * 3600 + minute * 60)
    func offset(_ seconds: Int64) -> Int64 {
        Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds))))
    }
    func local(_ seconds: Int64) -> Int64 { seconds + offset(seconds) }
    // The offsets in force a day either side; a transition on `day` lies between them.
    let offsets = Set([offset(wall - 86_400), offset(wall), offset(wall + 86_400)])
    let candidates = offsets.map { wall - $0 }.sorted()
    // Earliest first, so a repeated time resolves to its first occurrence.
    if let exact = candidates.first(where: { local($0) == wall }) {
        return Instant(milliseconds: exact * 1000)
    }
    // In a gap: the first instant whose local time is at or past the wall time, which is the
    // transition itself. `local` is increasing between the candidates, so a binary search finds it.
    var low = candidates.first!
    var high = candidates.last!
    while low < high {
        let mid = low + (high - low) / 2
        if local(mid) >= wall { high = mid } else { low = mid + 1 }
    }
    return Instant(milliseconds: low * 1000)
}

extension Cadence {
    /// The first day on or after `day` that starts a period of this cadence; nil for one-time
    /// goals, which have a single all-time period.
    func periodStart(onOrAfter day: Day, firstWeekday: Int) -> Day? {
        guard let period = period(containing: day, firstWeekday: firstWeekday) else { return nil }
        return period.start == day ? day : period.end.adding(days: 1)
    }
}

extension Day {
    /// `YYYYMMDD`, as used in dated request ids.
    var compactDescription: String {
        let (y, m, d) = components
        let ys = String(y)
        return String(repeating: "0", count: max(0, 4 - ys.count)) + ys + pad2(m) + pad2(d)
    }
}
