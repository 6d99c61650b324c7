import Foundation

/// A blob being filled: whole signed runs, within its limits.
struct RelayBlob {
    let limit: Int
    let byteLimit: Int
    private(set) var events: [Event] = []
    private(set) var records: [[UInt8]] = []
    private var bytes = 0
    /// The open run: events since the last that closes a signed run.
    private var run: [(Event, [UInt8])] = []
    private var runBytes = 0
    /// A run no longer fits: the blob takes nothing more.
    private(set) var isFull = false

    init(limit: Int, byteLimit: Int) {
        self.limit = limit
        self.byteLimit = byteLimit
    }

    /// Takes `event` into the open run, and the run into the blob when the event closes it and
    /// it fits; false once the blob is full.
    mutating func offer(_ event: Event, _ record: [UInt8]) -> Bool {
        guard !isFull else { return false }
        run.append((event, record))
        runBytes += record.count
        // A signature closes a run; so does an unchained event (its own run).
        if event.signature != nil || event.previousHash == nil { takeRun() }
        return !isFull
    }

    /// The origin's scan ended: its open run, if any, is taken as it is.
    mutating func closeOrigin() {
        if !run.isEmpty { takeRun() }
    }

    /// The last sequence of `origin` taken.
    func lastSequence(of origin: String) -> UInt64? {
        events.last.flatMap { $0.origin == origin ? $0.sequence : nil }
    }

    private mutating func takeRun() {
        // The first run goes whatever its length: a blob is never empty while events remain.
        if !events.isEmpty, events.count + run.count > limit || bytes + runBytes > byteLimit {
            isFull = true
        } else {
            for (e, r) in run {
                events.append(e)
                records.append(r)
            }
            bytes += runBytes
            if events.count >= limit || bytes >= byteLimit { isFull = true }
        }
        run.removeAll(keepingCapacity: true)
        runBytes = 0
    }
}
