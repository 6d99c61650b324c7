import Foundation
import Sodium

/// What a receiver holds, as the checks of offered events read it: a store's log, or a hub's
/// rows of one ledger.
package struct HeldHistory {
    /// Each origin's last sequence held.
    package var heads: [String: UInt64]
    /// The receiving store's own device (nil for a hub), and whether it signs: a store takes back
    /// only its own signed events.
    package var ownDevice: String?
    package var signsOwnEvents = false
    /// The held trust events, each origin's first chained sequence where it enrolled itself, and
    /// the founder when known (see `TrustFold`).
    package var trustInputs: [TrustFold.Input] = []
    package var firstChained: [String: UInt64] = [:]
    package var founder: (name: String, key: [UInt8])?

    package init(heads: [String: UInt64]) { self.heads = heads }
}

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

/// The checks every receiver (a store's import, the sync service's push) applies to offered
/// events: each origin's run is taken, in sequence order, for as long as it continues its
/// origin without a gap, a fork, a reused id or a falling clock, its hash chain links, every
/// signature present verifies, and the trust fold over what is held and offered gives the key
/// that closed each run; the first event that fails waits with the rest of its origin.
package enum OfferedEvents {
    /// What the checks decided.
    package struct Outcome {
        /// Per origin, the positions (in the offer) of the events that pass, in sequence order.
        package var prefixes: [String: [Int]] = [:]
        package var waiting: [String: WaitingEvents] = [:]
        package var revoked: [RevokedEvents] = []
        package var alreadyPresent = 0
        /// The founder of a signed ledger, found among the offered signatures when the
        /// receiver did not know it.
        package var founder: (name: String, key: [UInt8])?

        /// The positions of the passing events of every origin, in canonical order (each
        /// origin's run is in clock order already: a merge of the runs).
        package func accepted(_ events: [Event]) -> [Int] {
            let runs = prefixes.values.filter { !$0.isEmpty }
            if runs.count == 1 { return runs[0] }
            var next = [Int](repeating: 0, count: runs.count)
            var out: [Int] = []
            out.reserveCapacity(runs.reduce(0) { $0 + $1.count })
            while true {
                var best = -1
                for r in runs.indices where next[r] < runs[r].count {
                    if best < 0 || events[runs[r][next[r]]].key < events[runs[best][next[best]]].key { best = r }
                }
                guard best >= 0 else { return out }
                out.append(runs[best][next[best]])
                next[best] += 1
            }
        }
    }

    /// Checks `offer` against `history`, in ledger `ledger` (`signed`: founded signed). `waiting` holds what
    /// already waits (unreadable records); `event` gives a held event of an origin at a
    /// sequence, `idExists` whether an id is held.
    package static func check(
        _ offer: Offer, history: HeldHistory, ledger: UUID, signed: Bool,
        waiting alreadyWaiting: [String: WaitingEvents],
        event: (String, UInt64) throws -> Event?, idExists: (UUID) throws -> Bool
    ) throws -> Outcome {
        var outcome = Outcome()
        var waiting = alreadyWaiting
        let events = offer.events
        var ids = Set<UUID>(minimumCapacity: events.count)
        var prefixes: [String: [Int]] = [:]
        var revokedReport: [String: RevokedEvents] = [:]
        var heldUnchained: [String: Bool] = [:]

        // 1. Each origin's run: envelope, sequence, chain and signatures.
        for (origin, all) in offer.byOrigin.sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
            let offered = zip(all, all.dropFirst()).allSatisfy { events[$0].sequence <= events[$1].sequence }
                ? all : all.sorted { events[$0].sequence < events[$1].sequence }
            var head = history.heads[origin] ?? 0
            var previous: [UInt8]?
            var lastClock: HLC?
            var prefix: [Int] = []
            prefix.reserveCapacity(offered.count)
            var stop: (sequence: UInt64, cause: WaitingEvents.Cause, reason: String)?
            for o in offered {
                let e = events[o]
                do throws(FieldError) {
                    try e.checkEnvelope()
                } catch {
                    stop = (e.sequence, .malformed, "\(origin)/\(e.sequence) (event \(e.id.uuidString)) is malformed: \(SetAsideEvent.reason(error))")
                    break
                }
                if e.sequence <= head {
                    if let last = prefix.last.map({ events[$0] }), last.sequence == e.sequence {
                        if last == e { continue }
                        stop = (e.sequence, .fork, "fork: two events claim \(origin)/\(e.sequence) in what was offered")
                        break
                    }
                    guard let held = try event(origin, e.sequence) else {
                        throw LedgerError.damaged("the origin index lacks \(origin)/\(e.sequence): the store is damaged")
                    }
                    guard held.id == e.id else {
                        stop = (e.sequence, .fork, "fork: origin \(origin) has two histories: \(origin)/\(e.sequence) is event \(e.id.uuidString) there but \(held.id.uuidString) here")
                        break
                    }
                    guard held == e else {
                        stop = (e.sequence, .brokenChain, "event \(e.id.uuidString) (\(origin)/\(e.sequence)) differs from the copy held here")
                        break
                    }
                    outcome.alreadyPresent += 1
                    continue
                }
                if let device = history.ownDevice, origin == device && !history.signsOwnEvents {
                    stop = (e.sequence, .untrustedSigner, "event \(e.id.uuidString) claims to come from this store's device \(device), which never wrote sequence \(e.sequence)")
                    break
                }
                guard e.sequence == head + 1 else {
                    stop = (head + 1, .gap, "origin \(origin) jumps from sequence \(head) to \(e.sequence): a gap (events \(head + 1)…\(e.sequence - 1) are missing)")
                    break
                }
                guard try !idExists(e.id), !ids.contains(e.id) else {
                    stop = (e.sequence, .brokenChain, "event id \(e.id.uuidString) of \(origin)/\(e.sequence) is already used by another event")
                    break
                }
                if lastClock == nil, head > 0 {
                    lastClock = try event(origin, head)?.hlc
                }
                if let lastClock, e.hlc <= lastClock {
                    stop = (e.sequence, .brokenChain, "\(origin)/\(e.sequence) has clock \(e.hlc), not after its predecessor's \(lastClock)")
                    break
                }
                if let h = e.previousHash {
                    if previous == nil { previous = try event(origin, head).map(EventChain.hash) ?? EventChain.genesis }
                    guard h == previous else {
                        let forked = head > 0 && prefix.isEmpty
                        stop = (
                            e.sequence, forked ? .fork : .brokenChain,
                            forked
                                ? "fork: origin \(origin) has two histories: \(origin)/\(e.sequence) there does not follow \(origin)/\(head) here; the first differing sequence is at most \(head)"
                                : "\(origin)/\(e.sequence) breaks its chain: its previous hash is not that of \(origin)/\(e.sequence - 1)"
                        )
                        break
                    }
                } else if signed {
                    stop = (e.sequence, .unsigned, "\(origin)/\(e.sequence) is not signed; every device of this ledger signs its events")
                    break
                }
                // The bytes as received (checked by decoding them) serve as they are.
                // An unsigned record's bytes are what its hash covers: no second encoding.
                previous = e.signature == nil ? EventChain.hash(record: offer.records[o]) : EventChain.hash(e)
                if let signature = e.signature {
                    let message = EventChain.message(ledger: ledger, origin: origin, sequence: e.sequence, hash: previous!)
                    guard let signer = e.signer, Ed25519.verify(signature: signature, message: message, publicKey: signer) else {
                        // The run this signature closes cannot be vouched for.
                        let runStart =
                            (prefix.lastIndex { events[$0].signature != nil || events[$0].previousHash == nil }.map { $0 + 1 }) ?? 0
                        let first = runStart < prefix.count ? events[prefix[runStart]].sequence : e.sequence
                        prefix.removeSubrange(runStart...)
                        stop = (first, .badSignature, "the signature of \(origin)/\(e.sequence) does not verify")
                        break
                    }
                }
                ids.insert(e.id)
                lastClock = e.hlc
                head = e.sequence
                prefix.append(o)
            }
            // A chained run must end with a signature, which vouches for it.
            let closed = prefix.lastIndex(where: { events[$0].signature != nil || events[$0].previousHash == nil }).map { $0 + 1 } ?? 0
            if closed < prefix.count {
                let first = events[prefix[closed]].sequence
                prefix.removeSubrange(closed...)
                if let s = stop {
                    // What stopped the run stops the events it would have vouched for.
                    stop = (min(s.sequence, first), s.cause, s.reason)
                } else if let unread = waiting[origin] {
                    // The record that could not be read held the signature of this run.
                    stop = (first, unread.cause, unread.reason)
                } else {
                    stop = (first, .unsigned, "\(origin)/\(first)… ends a run of events without a signature")
                }
            }
            if let stop, waiting[origin] == nil || waiting[origin]!.sequence > stop.sequence {
                let count = offered.filter { events[$0].sequence >= stop.sequence }.count + (waiting[origin]?.count ?? 0)
                waiting[origin] = WaitingEvents(origin: origin, sequence: stop.sequence, count: max(count, 1), cause: stop.cause, reason: stop.reason)
            }
            if !prefix.isEmpty { prefixes[origin] = prefix }
        }

        // 2. Who may sign for whom: the fold over the log and what was offered, until
        //    every origin's run is one the fold vouches for.
        var fold = TrustFold()
        fold.founder = history.founder
        if signed, fold.founder == nil {
            for e in prefixes.values.joined().lazy.map({ events[$0] }) {
                if let key = e.signer, e.signature != nil, EventChain.ledgerID(founder: e.origin, publicKey: key) == ledger {
                    fold.founder = (e.origin, key)
                    outcome.founder = (e.origin, key)
                    break
                }
            }
        }
        while true {
            var extra: [TrustFold.Input] = []
            var firstChained = history.firstChained
            for (origin, prefix) in prefixes {
                var closing: TrustFold.Signature?
                // Fields read in place: an event is not copied per step.
                for i in prefix.reversed() {
                    if events[i].signature != nil, let s = events[i].signer { closing = TrustFold.Signature(sequence: events[i].sequence, signer: s) }
                    if events[i].previousHash == nil { closing = nil }
                    if let change = events[i].trustChange {
                        extra.append(TrustFold.Input(origin: origin, sequence: events[i].sequence, key: events[i].key, covering: closing, change: change))
                    }
                }
                // The first chained event offered is the origin's first only if what is
                // held of it is unchained (chains never stop once begun).
                if firstChained[origin] == nil, !signed, let first = prefix.first(where: { events[$0].previousHash != nil }).map({ events[$0] }),
                    try heldUnchained[origin] ?? {
                        let head = history.heads[origin] ?? 0
                        let unchained = try head == 0 || event(origin, head)?.previousHash == nil
                        heldUnchained[origin] = unchained
                        return unchained
                    }()
                {
                    firstChained[origin] = first.sequence
                }
            }
            fold.firstChained = firstChained
            let state: TrustState
            if signed && fold.founder == nil {
                state = TrustState()
            } else {
                state = fold.fold(history.trustInputs + extra)
            }
            var shrunk = false
            for (origin, prefix) in prefixes {
                var closing = [TrustFold.Signature?](repeating: nil, count: prefix.count)
                var next: TrustFold.Signature?
                for i in prefix.indices.reversed() {
                    let p = prefix[i]
                    if events[p].signature != nil, let s = events[p].signer { next = TrustFold.Signature(sequence: events[p].sequence, signer: s) }
                    if events[p].previousHash == nil { next = nil }
                    closing[i] = next
                }
                var keep = prefix.count
                // Consecutive events share the signature that closes their run: one look-up each.
                var lastClosing: (signature: TrustFold.Signature, authentic: Bool)?
                let revokedAfter = state.devices[origin]?.revokedAfter
                for (i, p) in prefix.enumerated() {
                    let sequence = events[p].sequence
                    if let after = revokedAfter, sequence > after {
                        revokedReport[origin] = RevokedEvents(origin: origin, count: prefix.count - i, after: after)
                        keep = i
                        break
                    }
                    let authentic: Bool
                    if let c = closing[i] {
                        if let l = lastClosing, l.signature.sequence == c.sequence {
                            authentic = l.authentic
                        } else {
                            authentic = state.key(origin, at: c.sequence) == c.signer
                            lastClosing = (c, authentic)
                        }
                    } else {
                        authentic = !signed && state.key(origin, at: sequence) == nil
                    }
                    if !authentic {
                        let reason: String
                        var cause = WaitingEvents.Cause.untrustedSigner
                        if state.devices[origin] == nil {
                            reason = "origin \(origin) is not enrolled in this ledger (\(origin)/\(closing[i]?.sequence ?? sequence) cannot be verified)"
                        } else if closing[i] == nil {
                            cause = .unsigned
                            reason = "\(origin)/\(sequence) is not signed, but \(origin) signs its events from sequence \(state.devices[origin]!.keys.first!.from)"
                        } else {
                            reason = "\(origin)/\(closing[i]!.sequence) is signed with a key that is not enrolled for \(origin)"
                        }
                        let all = offer.byOrigin[origin]!.filter { events[$0].sequence >= sequence }.count
                        waiting[origin] = WaitingEvents(origin: origin, sequence: sequence, count: all, cause: cause, reason: reason)
                        keep = i
                        break
                    }
                }
                if keep < prefix.count {
                    shrunk = true
                    prefixes[origin] = keep == 0 ? nil : Array(prefix.prefix(keep))
                }
            }
            if !shrunk { break }
        }
        outcome.prefixes = prefixes
        outcome.waiting = waiting
        outcome.revoked = revokedReport.values.sorted { String.bytesPrecede($0.origin, $1.origin) }
        return outcome
    }
}
