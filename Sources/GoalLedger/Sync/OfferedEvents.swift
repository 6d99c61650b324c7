import Foundation
import Sodium

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

        // 1. Each origin's run: envelope, sequence, chain and signatures.
        for (origin, all) in offer.byOrigin.sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
            let offered = zip(all, all.dropFirst()).allSatisfy { events[$0].sequence <= events[$1].sequence }
                ? all : all.sorted { events[$0].sequence < events[$1].sequence }
            var run = Run(origin: origin, head: history.heads[origin] ?? 0, capacity: offered.count)
            try run.take(offered, offer, history: history, ledger: ledger, signed: signed, ids: &ids, event: event, idExists: idExists)
            outcome.alreadyPresent += run.alreadyPresent
            run.cutUnvouchedTail(events, waiting: waiting[origin])
            if let stop = run.stop, waiting[origin] == nil || waiting[origin]!.sequence > stop.sequence {
                let count = offered.filter { events[$0].sequence >= stop.sequence }.count + (waiting[origin]?.count ?? 0)
                waiting[origin] = WaitingEvents(origin: origin, sequence: stop.sequence, count: max(count, 1), cause: stop.cause, reason: stop.reason)
            }
            if !run.prefix.isEmpty { prefixes[origin] = run.prefix }
        }

        // 2. Who may sign for whom: the fold over the log and what was offered, until
        //    every origin's run is one the fold vouches for.
        var fold = TrustFold()
        fold.founder = history.founder
        if signed, fold.founder == nil, let founder = offeredFounder(prefixes, events, ledger: ledger) {
            fold.founder = founder
            outcome.founder = founder
        }
        var heldUnchained: [String: Bool] = [:]
        var revokedReport: [String: RevokedEvents] = [:]
        while true {
            fold.firstChained = try firstChained(prefixes, events, history, signed: signed, heldUnchained: &heldUnchained, event: event)
            let state = signed && fold.founder == nil ? TrustState() : fold.fold(history.trustInputs + offeredTrustInputs(prefixes, events))
            var shrunk = false
            for (origin, prefix) in prefixes {
                let keep = vouchedLength(origin, prefix, offer, state, signed: signed, waiting: &waiting, revoked: &revokedReport)
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

    /// Why an origin's run stops: the first sequence that waits, its cause, and the reason said.
    typealias Stop = (sequence: UInt64, cause: WaitingEvents.Cause, reason: String)

    /// One origin's run as the first step takes it: the positions taken, what stopped it, and
    /// where its sequence, clock and chain stand.
    struct Run {
        let origin: String
        /// The last sequence held or taken.
        var head: UInt64
        /// The hash of the event at `head`, once a chained event needed it.
        var previous: [UInt8]?
        /// The clock of the event at `head`, once read.
        var lastClock: HLC?
        /// The positions (in the offer) taken, in sequence order.
        var prefix: [Int] = []
        var stop: Stop?
        /// Offered events the receiver holds already.
        var alreadyPresent = 0

        init(origin: String, head: UInt64, capacity: Int) {
            self.origin = origin
            self.head = head
            prefix.reserveCapacity(capacity)
        }

        /// Takes the `offered` positions in sequence order until one fails a check, which
        /// becomes the run's `stop`.
        mutating func take(
            _ offered: [Int], _ offer: Offer, history: HeldHistory, ledger: UUID, signed: Bool, ids: inout Set<UUID>,
            event: (String, UInt64) throws -> Event?, idExists: (UUID) throws -> Bool
        ) throws {
            for o in offered {
                let e = offer.events[o]
                do throws(FieldError) {
                    try e.checkEnvelope()
                } catch {
                    stop = (e.sequence, .malformed, "\(origin)/\(e.sequence) (event \(e.id.uuidString)) is malformed: \(SetAsideEvent.reason(error))")
                    return
                }
                if e.sequence <= head {
                    stop = try refuseAFork(e, offer.events, event: event)
                    if stop != nil { return }
                    continue
                }
                stop = try refuseOutOfOrder(e, history, ids: ids, event: event, idExists: idExists)
                if stop != nil { return }
                stop = try refuseABrokenChain(e, signed: signed, event: event)
                if stop != nil { return }
                // The bytes as received (checked by decoding them) serve as they are.
                // An unsigned record's bytes are what its hash covers: no second encoding.
                previous = e.signature == nil ? EventChain.hash(record: offer.records[o]) : EventChain.hash(e)
                stop = refuseAForgedSignature(e, offer.events, ledger: ledger)
                if stop != nil { return }
                ids.insert(e.id)
                lastClock = e.hlc
                head = e.sequence
                prefix.append(o)
            }
        }

        /// An event at a sequence held, or taken already from this offer: the same event again
        /// is passed over; another one is a fork.
        mutating func refuseAFork(_ e: Event, _ events: [Event], event: (String, UInt64) throws -> Event?) throws -> Stop? {
            if let last = prefix.last.map({ events[$0] }), last.sequence == e.sequence {
                if last == e { return nil }
                return (e.sequence, .fork, "fork: two events claim \(origin)/\(e.sequence) in what was offered")
            }
            guard let held = try event(origin, e.sequence) else {
                throw LedgerError.damaged("the origin index lacks \(origin)/\(e.sequence): the store is damaged")
            }
            guard held.id == e.id else {
                return (e.sequence, .fork, "fork: origin \(origin) has two histories: \(origin)/\(e.sequence) is event \(e.id.uuidString) there but \(held.id.uuidString) here")
            }
            guard held == e else {
                return (e.sequence, .brokenChain, "event \(e.id.uuidString) (\(origin)/\(e.sequence)) differs from the copy held here")
            }
            alreadyPresent += 1
            return nil
        }

        /// A new event must continue its origin: not the receiver's own unsigned device, no gap,
        /// an id not used yet, a clock after its predecessor's.
        mutating func refuseOutOfOrder(
            _ e: Event, _ history: HeldHistory, ids: Set<UUID>, event: (String, UInt64) throws -> Event?, idExists: (UUID) throws -> Bool
        ) throws -> Stop? {
            if let device = history.ownDevice, origin == device && !history.signsOwnEvents {
                return (e.sequence, .untrustedSigner, "event \(e.id.uuidString) claims to come from this store's device \(device), which never wrote sequence \(e.sequence)")
            }
            guard e.sequence == head + 1 else {
                return (head + 1, .gap, "origin \(origin) jumps from sequence \(head) to \(e.sequence): a gap (events \(head + 1)…\(e.sequence - 1) are missing)")
            }
            guard try !idExists(e.id), !ids.contains(e.id) else {
                return (e.sequence, .brokenChain, "event id \(e.id.uuidString) of \(origin)/\(e.sequence) is already used by another event")
            }
            if lastClock == nil, head > 0 {
                lastClock = try event(origin, head)?.hlc
            }
            if let lastClock, e.hlc <= lastClock {
                return (e.sequence, .brokenChain, "\(origin)/\(e.sequence) has clock \(e.hlc), not after its predecessor's \(lastClock)")
            }
            return nil
        }

        /// A chained event must link to its predecessor (a first event that does not is a
        /// fork); in a ledger founded signed, every event is chained.
        mutating func refuseABrokenChain(_ e: Event, signed: Bool, event: (String, UInt64) throws -> Event?) throws -> Stop? {
            guard let h = e.previousHash else {
                return signed ? (e.sequence, .unsigned, "\(origin)/\(e.sequence) is not signed; every device of this ledger signs its events") : nil
            }
            if previous == nil { previous = try event(origin, head).map(EventChain.hash) ?? EventChain.genesis }
            guard h == previous else {
                let forked = head > 0 && prefix.isEmpty
                return (
                    e.sequence, forked ? .fork : .brokenChain,
                    forked
                        ? "fork: origin \(origin) has two histories: \(origin)/\(e.sequence) there does not follow \(origin)/\(head) here; the first differing sequence is at most \(head)"
                        : "\(origin)/\(e.sequence) breaks its chain: its previous hash is not that of \(origin)/\(e.sequence - 1)"
                )
            }
            return nil
        }

        /// A signature must verify over the event's hash (`previous`, set for it); when it does
        /// not, the run it closes cannot be vouched for and is given back.
        mutating func refuseAForgedSignature(_ e: Event, _ events: [Event], ledger: UUID) -> Stop? {
            guard let signature = e.signature else { return nil }
            let message = EventChain.message(ledger: ledger, origin: origin, sequence: e.sequence, hash: previous!)
            if let signer = e.signer, Ed25519.verify(signature: signature, message: message, publicKey: signer) { return nil }
            let runStart = (prefix.lastIndex { events[$0].signature != nil || events[$0].previousHash == nil }.map { $0 + 1 }) ?? 0
            let first = runStart < prefix.count ? events[prefix[runStart]].sequence : e.sequence
            prefix.removeSubrange(runStart...)
            return (first, .badSignature, "the signature of \(origin)/\(e.sequence) does not verify")
        }

        /// A chained run must end with a signature, which vouches for it: the events after the
        /// last one are given back and wait, for what stopped the run, for the unreadable record
        /// (`unread`) that held their signature, or as unsigned.
        mutating func cutUnvouchedTail(_ events: [Event], waiting unread: WaitingEvents?) {
            let closed = prefix.lastIndex(where: { events[$0].signature != nil || events[$0].previousHash == nil }).map { $0 + 1 } ?? 0
            guard closed < prefix.count else { return }
            let first = events[prefix[closed]].sequence
            prefix.removeSubrange(closed...)
            if let s = stop {
                // What stopped the run stops the events it would have vouched for.
                stop = (min(s.sequence, first), s.cause, s.reason)
            } else if let unread {
                stop = (first, unread.cause, unread.reason)
            } else {
                stop = (first, .unsigned, "\(origin)/\(first)… ends a run of events without a signature")
            }
        }
    }

    /// The founder of a signed ledger among the offered signatures: the origin and key that
    /// hash to the ledger id.
    static func offeredFounder(_ prefixes: [String: [Int]], _ events: [Event], ledger: UUID) -> (name: String, key: [UInt8])? {
        for e in prefixes.values.joined().lazy.map({ events[$0] }) {
            if let key = e.signer, e.signature != nil, EventChain.ledgerID(founder: e.origin, publicKey: key) == ledger {
                return (e.origin, key)
            }
        }
        return nil
    }

    /// The signature that closes the run of each event of `prefix` (nil for an unchained event).
    static func closingSignatures(_ prefix: [Int], _ events: [Event]) -> [TrustFold.Signature?] {
        var closing = [TrustFold.Signature?](repeating: nil, count: prefix.count)
        var next: TrustFold.Signature?
        // Fields read in place: an event is not copied per step.
        for i in prefix.indices.reversed() {
            let p = prefix[i]
            if events[p].signature != nil, let s = events[p].signer { next = TrustFold.Signature(sequence: events[p].sequence, signer: s) }
            if events[p].previousHash == nil { next = nil }
            closing[i] = next
        }
        return closing
    }

    /// The offered trust events, each with the signature covering it.
    static func offeredTrustInputs(_ prefixes: [String: [Int]], _ events: [Event]) -> [TrustFold.Input] {
        var inputs: [TrustFold.Input] = []
        for (origin, prefix) in prefixes {
            let closing = closingSignatures(prefix, events)
            for i in prefix.indices.reversed() {
                let p = prefix[i]
                if let change = events[p].trustChange {
                    inputs.append(TrustFold.Input(origin: origin, sequence: events[p].sequence, key: events[p].key, covering: closing[i], change: change))
                }
            }
        }
        return inputs
    }

    /// Each origin's first chained sequence, where a root of a ledger founded before signing
    /// enrols itself: the held one, else the first chained event offered, when what is held of
    /// the origin is unchained (chains never stop once begun).
    static func firstChained(
        _ prefixes: [String: [Int]], _ events: [Event], _ history: HeldHistory, signed: Bool, heldUnchained: inout [String: Bool],
        event: (String, UInt64) throws -> Event?
    ) throws -> [String: UInt64] {
        var firstChained = history.firstChained
        for (origin, prefix) in prefixes {
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
        return firstChained
    }

    /// How much of an origin's `prefix` the trust `state` vouches for: it stops at the
    /// origin's revocation (reported in `revoked`) or at the first event whose closing
    /// signature is not by the key enrolled for the origin then, or that is unsigned where the
    /// origin signs (which waits, with the rest of the origin).
    static func vouchedLength(
        _ origin: String, _ prefix: [Int], _ offer: Offer, _ state: TrustState, signed: Bool,
        waiting: inout [String: WaitingEvents], revoked: inout [String: RevokedEvents]
    ) -> Int {
        let events = offer.events
        let closing = closingSignatures(prefix, events)
        // Consecutive events share the signature that closes their run: one look-up each.
        var lastClosing: (signature: TrustFold.Signature, authentic: Bool)?
        let revokedAfter = state.devices[origin]?.revokedAfter
        for (i, p) in prefix.enumerated() {
            let sequence = events[p].sequence
            if let after = revokedAfter, sequence > after {
                revoked[origin] = RevokedEvents(origin: origin, count: prefix.count - i, after: after)
                return i
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
                let (cause, reason) = whyNotVouched(origin, sequence, closing: closing[i], state)
                let all = offer.byOrigin[origin]!.filter { events[$0].sequence >= sequence }.count
                waiting[origin] = WaitingEvents(origin: origin, sequence: sequence, count: all, cause: cause, reason: reason)
                return i
            }
        }
        return prefix.count
    }

    /// Why the trust does not vouch for `origin`'s event at `sequence`, closed by `closing`:
    /// an origin not enrolled, an unsigned event of an origin that signs, or a key not enrolled.
    static func whyNotVouched(
        _ origin: String, _ sequence: UInt64, closing: TrustFold.Signature?, _ state: TrustState
    ) -> (WaitingEvents.Cause, String) {
        guard let device = state.devices[origin] else {
            return (.untrustedSigner, "origin \(origin) is not enrolled in this ledger (\(origin)/\(closing?.sequence ?? sequence) cannot be verified)")
        }
        guard let closing else {
            return (.unsigned, "\(origin)/\(sequence) is not signed, but \(origin) signs its events from sequence \(device.keys.first!.from)")
        }
        return (.untrustedSigner, "\(origin)/\(closing.sequence) is signed with a key that is not enrolled for \(origin)")
    }
}
