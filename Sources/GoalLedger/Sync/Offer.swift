import Foundation

/// What is offered to a receiver: events with the records they were received as (aligned),
/// and, by origin, the positions of each origin's events in the order offered. The checks and
/// their outcome refer to events by position, so that no event is copied on the way in.
package struct Offer {
    package let events: [Event]
    package let records: [[UInt8]]
    package let byOrigin: [String: [Int]]

    /// `events`, with `records` when they were received as records (else they are encoded);
    /// events of an origin at or after its `waiting` sequence are left out (they wait behind an
    /// unreadable record).
    package init(_ events: [Event], records: [[UInt8]]?, waiting: [String: WaitingEvents] = [:]) {
        self.events = events
        self.records = records ?? events.map { EventCodec.encode($0) }
        var byOrigin: [String: [Int]] = [:]
        var origin: String?
        var run: [Int] = []
        // Runs of one origin are grouped without a dictionary lookup per event.
        for i in events.indices {
            if events[i].origin != origin {
                if let o = origin, !run.isEmpty { byOrigin[o, default: []].append(contentsOf: run) }
                run.removeAll(keepingCapacity: true)
                origin = events[i].origin
            }
            if !waiting.isEmpty, let w = waiting[events[i].origin], events[i].sequence >= w.sequence { continue }
            run.append(i)
        }
        if let o = origin, !run.isEmpty { byOrigin[o, default: []].append(contentsOf: run) }
        self.byOrigin = byOrigin
    }
}
