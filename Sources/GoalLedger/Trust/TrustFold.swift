import Foundation

/// Who may sign for which device, from which sequence: a deterministic fold of the ledger's
/// enrolments and revocations, the same on every store whatever order the events arrived in.
///
/// The model (stated for people in the "Trust and the threat model" article):
///
/// 1. **Roots.** In a ledger founded signed, the founder (the name and key that hash to the
///    ledger id) holds its key from sequence 1, at depth 0. In a ledger founded before signing,
///    each device that enrols itself, with its first signed event, from that event's sequence,
///    while no other key is in effect for it, is a root at depth 0.
/// 2. **Enrolment.** A trusted device at depth d enrols a name that has no key yet (never the
///    founder's, never a root's); the name then sits at depth d + 1 below its enroller. When
///    several enrolments name one new name, the one from the shallowest enroller wins, then the
///    earliest in canonical order; the others are void. A name keeps its first key forever but
///    for rotation.
/// 3. **Rotation.** A device changes its own key with an enrolment of itself signed by its
///    current key, effective from a sequence after that signature. Nobody else can.
/// 4. **Revocation.** A device revokes only devices below it in the enrolment tree; in a
///    ledger founded before signing, roots may also revoke other roots, and revocations between
///    roots take effect in canonical order (a revoked root's later revocations are void).
///    A revoked device's events after `after` (the last of it the revoker held) never count;
///    the devices below it are revoked with it, each after the last sequence of it the revoker
///    held (recorded in the revocation), and a name once revoked is never enrolled again.
/// 5. **Authenticity.** An event counts only if the signature that closes its run was made
///    by the key its origin holds at that signature's sequence, the origin was not revoked
///    before it, and every earlier event of its origin counts (chains have no holes). Unsigned
///    events count only in a ledger founded before signing, before their origin holds a key.
package struct TrustFold {
    /// The signature that closes the run holding an event: its sequence and its signer's key.
    package struct Signature: Equatable, Hashable, Sendable {
        package var sequence: UInt64
        package var signer: [UInt8]
        package init(sequence: UInt64, signer: [UInt8]) {
            self.sequence = sequence
            self.signer = signer
        }
    }

    /// A trust event as the fold reads it.
    package struct Input: Equatable, Sendable {
        package var origin: String
        package var sequence: UInt64
        package var key: CanonicalKey
        /// The signature closing the event's run; nil for an unsigned event.
        package var covering: Signature?
        package var change: TrustChange

        package init(origin: String, sequence: UInt64, key: CanonicalKey, covering: Signature?, change: TrustChange) {
            self.origin = origin
            self.sequence = sequence
            self.key = key
            self.covering = covering
            self.change = change
        }
    }

    /// The ledger's founder (a ledger founded signed), whose key its id proves.
    package var founder: (name: String, key: [UInt8])?
    /// Each origin's first chained (signed) sequence, where a root's self-enrolment must sit.
    package var firstChained: [String: UInt64] = [:]

    package init() {}

    /// Folds `inputs` (any order) into the ledger's trust: the roots, then (before signing)
    /// the revocations between roots, then depth by depth the revocations that reach the
    /// depth's devices and the enrolments they make.
    package func fold(_ inputs: [Input]) -> TrustState {
        var folding = Folding(inputs, signed: founder != nil)
        folding.placeRoots(founder: founder, firstChained: firstChained)
        if founder == nil { folding.revokeRootsInCanonicalOrder() }
        var frontier = folding.state.devices.keys.sorted(by: String.bytesPrecede)
        var depth = 0
        while !frontier.isEmpty {
            if depth > 0 { folding.cutRevokedDevices(frontier) }
            frontier = folding.enrolBelow(frontier, depth: depth)
            depth += 1
        }
        return folding.state
    }
}

/// A revocation as the fold keeps it: its author, its input, the last sequence of the target
/// that counts, and that of each of the target's descendants the author held.
private typealias Revocation = (author: String, input: TrustFold.Input, after: UInt64, descendants: [String: UInt64])

/// The trust fold's work in progress: the trust so far, the inputs by origin, and the
/// revocations met.
private struct Folding {
    var state = TrustState()
    /// Each origin's trust events, in sequence order.
    var byOrigin: [String: [TrustFold.Input]] = [:]
    /// Whether the ledger was founded signed.
    let signed: Bool
    /// The self-enrolment that made each root of a ledger founded before signing.
    var selfEnrolments: [String: TrustFold.Input] = [:]
    /// Revocations waiting for their targets, by target name.
    var pending: [String: [Revocation]] = [:]
    /// The revocation in effect for each revoked device (the one with the lowest `after`).
    var effective: [String: (after: UInt64, descendants: [String: UInt64])] = [:]
    /// Revoked devices of a depth already walked: their names are never enrolled again.
    var retired = Set<String>()

    init(_ inputs: [TrustFold.Input], signed: Bool) {
        self.signed = signed
        state.founderless = !signed
        for i in inputs { byOrigin[i.origin, default: []].append(i) }
        for k in byOrigin.keys { byOrigin[k]!.sort { $0.sequence < $1.sequence } }
    }

    /// 1. Roots: the founder, from sequence 1; or, before signing, each device that enrolled
    /// itself with its first chained event, signed by the key it enrols.
    mutating func placeRoots(founder: (name: String, key: [UInt8])?, firstChained: [String: UInt64]) {
        if let founder {
            state.devices[founder.name] = TrustState.Device(keys: [.init(from: 1, key: founder.key)], parent: nil, depth: 0)
            return
        }
        for (origin, events) in byOrigin {
            guard let first = firstChained[origin] else { continue }
            for e in events where e.sequence == first {
                if case .enrolled(let device, let from, let key) = e.change, device == origin, from == e.sequence,
                    e.covering == TrustFold.Signature(sequence: e.sequence, signer: key)
                {
                    selfEnrolments[origin] = e
                    state.devices[origin] = TrustState.Device(keys: [.init(from: from, key: key)], parent: nil, depth: 0)
                }
            }
        }
    }

    /// Revocations between roots of a ledger founded before signing, in canonical order: a
    /// root revoked earlier in that order no longer revokes after its cut.
    mutating func revokeRootsInCanonicalOrder() {
        var rootRevocations: [(author: String, input: TrustFold.Input, target: String, after: UInt64, descendants: [String: UInt64])] = []
        for origin in state.devices.keys {
            for e in byOrigin[origin] ?? [] {
                if case .revoked(let target, let after, let descendants) = e.change, target != origin, state.devices[target]?.depth == 0 {
                    rootRevocations.append((origin, e, target, after, descendants))
                }
            }
        }
        rootRevocations.sort { $0.input.key < $1.input.key }
        for r in rootRevocations {
            guard let author = state.devices[r.author] else { continue }
            if let a = author.revokedAfter, r.input.sequence > a { continue }
            guard let c = r.input.covering, author.key(at: c.sequence) == c.signer else { continue }
            if (state.devices[r.target]!.revokedAfter ?? .max) > r.after {
                state.devices[r.target]!.revokedAfter = r.after
                effective[r.target] = (r.after, r.descendants)
            }
        }
    }

    /// Whether `ancestor` is above `device` in the enrolment tree.
    func isAncestor(_ ancestor: String, of device: String) -> Bool {
        var p = state.devices[device]?.parent
        while let name = p {
            if name == ancestor { return true }
            p = state.devices[name]?.parent
        }
        return false
    }

    /// Cuts each device of a depth below the root at the lowest `after` among the revocations
    /// of it by its ancestors and the cascades from its revoked ancestors.
    mutating func cutRevokedDevices(_ frontier: [String]) {
        for name in frontier {
            var after = state.devices[name]!.revokedAfter ?? .max
            var chosen = effective[name]
            for r in pending[name] ?? [] where isAncestor(r.author, of: name) && r.after < after {
                after = r.after
                chosen = (r.after, r.descendants)
            }
            var p = state.devices[name]!.parent
            while let ancestor = p {
                if let revoked = effective[ancestor] {
                    let inherited = revoked.descendants[name] ?? 0
                    if inherited < after {
                        after = inherited
                        chosen = (inherited, revoked.descendants)
                    }
                }
                p = state.devices[ancestor]?.parent
            }
            if after != .max {
                state.devices[name]!.revokedAfter = after
                effective[name] = chosen
            }
        }
    }

    /// The devices of a depth enrol, rotate and revoke: each new name goes to the first
    /// enrolment of it in canonical order (the shallowest enroller's, as shallower depths
    /// enrolled first); revocations wait for their targets' depth. Returns the next depth's
    /// devices, in order.
    mutating func enrolBelow(_ frontier: [String], depth: Int) -> [String] {
        var candidates: [String: (input: TrustFold.Input, parent: String, from: UInt64, key: [UInt8])] = [:]
        for author in frontier {
            for e in authenticEvents(of: author) {
                switch e.change {
                case .enrolled(let name, let from, let key) where name != author:
                    guard state.devices[name] == nil, !retired.contains(name) else { continue }
                    if let current = candidates[name], current.input.key < e.key { continue }
                    candidates[name] = (e, author, from, key)
                case .revoked(let target, let after, let descendants):
                    guard target != author else { continue }
                    pending[target, default: []].append((author, e, after, descendants))
                default:
                    break
                }
            }
        }
        var next: [String] = []
        for (name, c) in candidates {
            state.devices[name] = TrustState.Device(keys: [.init(from: c.from, key: c.key)], parent: c.parent, depth: depth + 1)
            next.append(name)
        }
        for name in frontier where state.devices[name]?.revokedAfter != nil { retired.insert(name) }
        return next.sorted(by: String.bytesPrecede)
    }

    /// The authentic trust events of `origin` (in sequence order) under its keys so far, up to
    /// its revocation; its rotations are applied as they are met (unsigned trust events carry
    /// no authority and are left out).
    mutating func authenticEvents(of origin: String) -> [TrustFold.Input] {
        var authentic: [TrustFold.Input] = []
        for e in byOrigin[origin] ?? [] {
            guard let device = state.devices[origin] else { break }
            if let after = device.revokedAfter, e.sequence > after { break }
            if let c = e.covering {
                guard device.key(at: c.sequence) == c.signer else { break }
            } else {
                // Unsigned: only before the origin holds a key, in a ledger founded unsigned.
                guard !signed, device.key(at: e.sequence) == nil else { break }
                continue
            }
            if case .enrolled(let name, let from, let key) = e.change, name == origin,
                selfEnrolments[origin]?.sequence != e.sequence, let c = e.covering, from > c.sequence,
                from > (device.keys.last?.from ?? 0)
            {
                state.devices[origin]!.keys.append(.init(from: from, key: key))
            }
            authentic.append(e)
        }
        return authentic
    }
}

/// The outcome of the trust fold: every device that holds a key, with its keys, its place in
/// the enrolment tree and its revocation.
package struct TrustState: Equatable, Sendable {
    package struct Key: Equatable, Sendable {
        package var from: UInt64
        package var key: [UInt8]
    }

    package struct Device: Equatable, Sendable {
        /// The keys, by the first sequence each signs, ascending.
        package var keys: [Key]
        /// The device that enrolled it; nil for a root.
        package var parent: String?
        package var depth: Int
        /// The last sequence of the device that counts, when it was revoked.
        package var revokedAfter: UInt64?

        /// The key that signs the device's event at `sequence`, if any.
        package func key(at sequence: UInt64) -> [UInt8]? { keys.last { $0.from <= sequence }?.key }
    }

    package var devices: [String: Device] = [:]

    /// No device trusted yet.
    package init() {}
    /// Whether the ledger was founded before signing (its roots are peers).
    package var founderless = false

    /// The key `origin` signs its event at `sequence` with, if any.
    package func key(_ origin: String, at sequence: UInt64) -> [UInt8]? { devices[origin]?.key(at: sequence) }

    /// Finds the last sequence of an origin that counts: its revocation, or the event before the
    /// first run signed by a key the origin does not hold at that sequence (or unsigned where it
    /// must sign), walking the origin's events in sequence order.
    package struct CutoffWalk {
        let origin: String
        let state: TrustState
        let signedLedger: Bool
        /// The last sequence that counts, when some later one does not; nil while all do.
        package private(set) var cut: UInt64?
        private var lastGood: UInt64 = 0

        package init(_ origin: String, _ state: TrustState, signedLedger: Bool) {
            self.origin = origin
            self.state = state
            self.signedLedger = signedLedger
            cut = state.devices[origin]?.revokedAfter
        }

        /// Takes the next event: whether it is chained, and the key of its signature if it
        /// carries one. False when the walk is over.
        package mutating func step(_ sequence: UInt64, chained: Bool, signer: [UInt8]?) -> Bool {
            if let c = cut, sequence > c { return false }
            if !chained {
                guard !signedLedger, state.key(origin, at: sequence) == nil else { return stop() }
                lastGood = sequence
            } else if let signer {
                guard state.key(origin, at: sequence) == signer else { return stop() }
                lastGood = sequence
            }
            return true
        }

        private mutating func stop() -> Bool {
            cut = min(cut ?? .max, lastGood)
            return false
        }
    }

    /// The devices below `device` in the enrolment tree.
    package func descendants(of device: String) -> [String] {
        devices.filter { entry in
            var p = entry.value.parent
            while let name = p {
                if name == device { return true }
                p = devices[name]?.parent
            }
            return false
        }.map(\.key).sorted(by: String.bytesPrecede)
    }
}

extension TrustFold {
    /// The fold's input from a whole history held as events (a hub's rows of one ledger, in any
    /// order): every trust event with the signature closing its run, each self-enrolled
    /// origin's first chained sequence, and, in a ledger founded signed, the founder found among
    /// the signatures. Returns the fold set up and its inputs.
    package static func from(_ events: [Event], ledger: UUID) -> (fold: TrustFold, inputs: [Input]) {
        var byOrigin: [String: [Event]] = [:]
        for e in events { byOrigin[e.origin, default: []].append(e) }
        var fold = TrustFold()
        var inputs: [Input] = []
        let signed = ledger.uuid.6 >> 4 == 8
        for (origin, unsorted) in byOrigin {
            let run = unsorted.sorted { $0.sequence < $1.sequence }
            var closing: Signature?
            var closingAt: [UInt64: Signature] = [:]
            for e in run.reversed() {
                if let s = e.signer, e.signature != nil { closing = Signature(sequence: e.sequence, signer: s) }
                if e.previousHash == nil { closing = nil }
                if let closing { closingAt[e.sequence] = closing }
            }
            for (i, e) in run.enumerated() {
                if signed, fold.founder == nil, let k = e.signer, e.signature != nil, EventChain.ledgerID(founder: origin, publicKey: k) == ledger {
                    fold.founder = (origin, k)
                }
                guard let change = e.trustChange else { continue }
                inputs.append(Input(origin: origin, sequence: e.sequence, key: e.key, covering: closingAt[e.sequence], change: change))
                if !signed, case .enrolled(let device, _, _) = change, device == origin, e.previousHash != nil,
                    i == 0 || run[i - 1].previousHash == nil
                {
                    fold.firstChained[origin] = min(fold.firstChained[origin] ?? .max, e.sequence)
                }
            }
        }
        return (fold, inputs)
    }
}
