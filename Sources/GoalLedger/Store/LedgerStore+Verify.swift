import Foundation
import LMDB
import Sodium

/// What `verify` found: one line per problem, each naming where it is.
public struct VerificationReport: Sendable {
    /// The events in the log.
    public var events: UInt64 = 0
    /// The goals that exist (created) in the replay.
    public var goals = 0
    /// What is wrong, one line each naming where (`events: position 7 is missing …`); at most
    /// the first 1,000.
    public var problems: [String] = []
    /// Events written before their origin signed (a ledger founded before signing).
    public var unsignedEvents = 0
    /// Events that fail the gate, which every fold sets aside (see ``SetAsideEvent``), in
    /// position order. Not a problem when the stored projection set them aside too.
    public var setAside: [SetAsideEvent] = []
    /// Whether nothing is wrong.
    public var isClean: Bool { problems.isEmpty }
}

extension LedgerStore {
    /// Checks the store against itself in one snapshot: every record's checksum, gapless
    /// positions, every index against the log, gapless origin sequences, and the stored
    /// projection byte for byte against a fresh replay, the maintained digest's rows included
    /// (a difference is a damaged projection, which `rebuild` repairs).
    public func verify() throws(LedgerError) -> VerificationReport {
        try read { txn in
            var report = VerificationReport()
            var projection = GoalProjection(historyRule: historyRule)
            // What counts is the derived trust's; a difference from the table is named below.
            projection.revokedAfter = try TrustTable.revocations(txn, layout)
            var sequences: [String: [UInt64]] = [:]
            // The log's ids and goals with their positions, checked against their indexes
            // after the scan in one ordered walk each, not one lookup per event.
            var ids: [(key: IDWords, position: UInt64)] = []
            var goals: [(key: IDWords, position: UInt64)] = []
            // Each origin's chain links by sequence, hashed from the records as they are read.
            var chains: [String: [ChainLink?]] = [:]
            var expected: UInt64 = 1
            var goalIndexed = 0
            var deviceIndexed = 0
            var damaged = 0
            var setAsideRows: [[UInt8]: [UInt8]] = [:]
            // The trust events, for the trust fold re-derived from the log.
            var trustEvents: [(origin: String, sequence: UInt64, key: CanonicalKey, change: TrustChange)] = []
            func problem(_ s: String) { if report.problems.count < 1000 { report.problems.append(s) } }

            try txn.scan(layout.events) { key, value in
                let position = UInt64(bigEndianBytes: key)
                if key.count != 8 { problem("events: a key of \(key.count) bytes is not a position") }
                if position != expected { problem("events: position \(expected) is missing (next is \(position))") }
                expected = position + 1
                report.events += 1
                let event: Event
                do {
                    event = try EventCodec.decode(value)
                } catch {
                    damaged += 1
                    problem("event at position \(position) is damaged: \(error)")
                    return true
                }
                ids.append((IDWords(event.id), position))
                if event.sequence >= 1, event.sequence <= UInt64(Int32.max) {
                    // An unsigned record hashes as stored; a signed one without its signature.
                    let link = ChainLink(
                        hash: event.signature == nil ? EventChain.hash(record: value) : EventChain.hash(event),
                        previousHash: event.previousHash, signature: event.signature, signer: event.signer)
                    chains[event.origin, default: []].place(link, at: Int(event.sequence) - 1)
                }
                let origin = try txn.withValue(layout.origins, key: StoreLayout.originKey(event.origin, event.sequence)) {
                    $0.count == 8 ? UInt64(bigEndianBytes: $0) : nil
                }
                if origin != position {
                    problem("origins: \(event.origin)/\(event.sequence) does not point to position \(position)")
                }
                if let goal = event.payload.goal {
                    goalIndexed += 1
                    goals.append((IDWords(goal), position))
                } else {
                    deviceIndexed += 1
                    if try txn.get(layout.deviceEvents, key: StoreLayout.deviceKey(event.origin, position)) == nil {
                        problem("deviceEvents: position \(position) is missing for device \(event.origin)")
                    }
                }
                sequences[event.origin, default: []].append(event.sequence)
                if let change = event.payload.trustChange { trustEvents.append((event.origin, event.sequence, event.key, change)) }
                do throws(FieldError) {
                    try event.checkContent()
                    projection.fold(event)
                } catch {
                    let reason = SetAsideEvent.reason(error)
                    setAsideRows[position.bigEndianBytes] = Array(reason.utf8)
                    report.setAside.append(
                        SetAsideEvent(position: position, id: event.id, origin: event.origin, sequence: event.sequence, reason: reason))
                }
                return true
            }
            projection.position = report.events

            // Every id points to its event's position, and every goal holds its events'.
            ids.sort { $0.key < $1.key }
            var next = 0
            try txn.scan(layout.eventIds) { k, v in
                guard k.count == 16 else { return true }
                let key = IDWords(k)
                while next < ids.count, ids[next].key < key {
                    problem("eventIds: id \(ids[next].key.uuid.uuidString) does not point to position \(ids[next].position)")
                    next += 1
                }
                if next < ids.count, ids[next].key == key {
                    if v.count != 8 || UInt64(bigEndianBytes: v) != ids[next].position {
                        problem("eventIds: id \(key.uuid.uuidString) does not point to position \(ids[next].position)")
                    }
                    next += 1
                }
                return report.problems.count < 1000
            }
            for (key, position) in ids[next...] where report.problems.count < 1000 {
                problem("eventIds: id \(key.uuid.uuidString) does not point to position \(position)")
            }
            goals.sort { $0.key != $1.key ? $0.key < $1.key : $0.position < $1.position }
            next = 0
            try txn.scan(layout.goalEvents) { k, v in
                guard k.count == 16, v.count == 8 else { return true }
                let stored = (IDWords(k), UInt64(bigEndianBytes: v))
                while next < goals.count, goals[next].key < stored.0 || (goals[next].key == stored.0 && goals[next].position < stored.1) {
                    problem("goalEvents: position \(goals[next].position) is missing for goal \(goals[next].key.uuid.uuidString)")
                    next += 1
                }
                if next < goals.count, goals[next].key == stored.0, goals[next].position == stored.1 { next += 1 }
                return report.problems.count < 1000
            }
            for (key, position) in goals[next...] where report.problems.count < 1000 {
                problem("goalEvents: position \(position) is missing for goal \(key.uuid.uuidString)")
            }

            // No index holds entries the log does not explain.
            let logged = Int(report.events) - damaged
            for (name, db, want) in [
                ("eventIds", layout.eventIds, logged), ("origins", layout.origins, logged),
                ("goalEvents", layout.goalEvents, goalIndexed),
                ("deviceEvents", layout.deviceEvents, deviceIndexed),
            ] {
                let count = try txn.count(db)
                if count != want, damaged == 0 { problem("\(name): \(count) entries for \(want) events") }
            }

            // Origin sequences: 1, 2, 3, … without gaps, and the recorded heads agree.
            var heads: [String: UInt64] = [:]
            try txn.scan(layout.originHeads) { k, v in
                heads[String(decoding: k, as: UTF8.self)] = UInt64(bigEndianBytes: v)
                return true
            }
            for (origin, seqs) in sequences.sorted(by: { String.bytesPrecede($0.key, $1.key) }) {
                let sorted = seqs.sorted()
                if sorted != Array(1...UInt64(sorted.count)) {
                    let missing = Set(1...max(sorted.last ?? 1, 1)).subtracting(sorted).sorted().prefix(5)
                    problem("origin \(origin): sequences are not gapless (missing \(missing.map(String.init).joined(separator: ", ")))")
                }
                if heads[origin] != sorted.last {
                    problem("originHeads: \(origin) is at \(heads[origin].map(String.init) ?? "nothing"), the log at \(sorted.last ?? 0)")
                }
            }
            for origin in heads.keys where sequences[origin] == nil { problem("originHeads: \(origin) has no events") }

            // Trust, re-derived from the log: the founder from the signatures, then the fold.
            var fold = TrustFold()
            if isSignedLedger {
                search: for (origin, chain) in chains {
                    for link in chain { if let s = link?.signer, link?.signature != nil, isFounder(origin, s) { fold.founder = (origin, s); break search } }
                }
            }
            var inputs: [TrustFold.Input] = []
            for t in trustEvents {
                let chain = chains[t.origin] ?? []
                var covering: TrustFold.Signature?
                var i = Int(t.sequence) - 1
                if i >= 0, i < chain.count, chain[i]?.previousHash != nil {
                    while i < chain.count {
                        if let link = chain[i], let s = link.signer, link.signature != nil {
                            covering = TrustFold.Signature(sequence: UInt64(i + 1), signer: s)
                            break
                        }
                        i += 1
                    }
                }
                inputs.append(TrustFold.Input(origin: t.origin, sequence: t.sequence, key: t.key, covering: covering, change: t.change))
            }
            if !isSignedLedger {
                for (origin, chain) in chains {
                    if let first = chain.firstIndex(where: { $0?.previousHash != nil }) { fold.firstChained[origin] = UInt64(first + 1) }
                }
            }
            let trust = isSignedLedger && fold.founder == nil ? TrustState() : fold.fold(inputs)
            var derivedCutoffs: [String: UInt64] = [:]
            for (origin, head) in heads {
                var walk = TrustState.CutoffWalk(origin, trust, signedLedger: isSignedLedger)
                for (i, link) in (chains[origin] ?? []).enumerated() {
                    guard let link, walk.step(UInt64(i + 1), chained: link.previousHash != nil, signer: link.signature == nil ? nil : link.signer)
                    else { break }
                }
                if let c = walk.cut, c < head { derivedCutoffs[origin] = c }
            }
            for (name, d) in trust.devices where heads[name] == nil { if let r = d.revokedAfter { derivedCutoffs[name] = r } }
            let storedTrust = try TrustTable.load(txn, layout)
            let storedCutoffs = try TrustTable.revocations(txn, layout)
            for name in Set(trust.devices.keys).union(storedTrust.devices.keys).sorted(by: String.bytesPrecede) where damaged == 0 {
                let want = trust.devices[name]
                let have = storedTrust.devices[name]
                if want?.keys != have?.keys {
                    problem("trust: the keys of \(name) are \(have.map { $0.keys.map { "\(EventChain.fingerprint($0.key)) from \($0.from)" }.joined(separator: ", ") } ?? "none") in the table, \(want.map { $0.keys.map { "\(EventChain.fingerprint($0.key)) from \($0.from)" }.joined(separator: ", ") } ?? "none") by the log")
                }
                if want?.revokedAfter != have?.revokedAfter || want?.parent != have?.parent {
                    problem("trust: \(name) is \(describe(have)) in the table, \(describe(want)) by the log")
                }
            }
            func describe(_ d: TrustState.Device?) -> String {
                guard let d else { return "unknown" }
                return "enrolled by \(d.parent ?? "nobody (a root)")" + (d.revokedAfter.map { ", revoked after \($0)" } ?? "")
            }
            for name in Set(derivedCutoffs.keys).union(storedCutoffs.keys).sorted(by: String.bytesPrecede) where damaged == 0 {
                if derivedCutoffs[name] != storedCutoffs[name] {
                    problem("trust: \(name)'s events count through \(storedCutoffs[name].map(String.init) ?? "its head") in the table, \(derivedCutoffs[name].map(String.init) ?? "its head") by the log")
                }
            }

            // Every origin's hash chain links, and every signature verifies with the key it
            // names; those within what counts were made by the key trust gives the origin.
            for (origin, head) in heads.sorted(by: { String.bytesPrecede($0.key, $1.key) }) where damaged == 0 {
                var previous = Hash32(EventChain.genesis)
                var signedEvents = 0
                let chain = chains[origin] ?? []
                for sequence in 1...max(head, 1) where head > 0 {
                    guard sequence <= UInt64(chain.count), let e = chain[Int(sequence) - 1] else { break }
                    if let h = e.previousHash {
                        if h != previous { problem("chain: \(origin)/\(sequence) does not follow \(origin)/\(sequence - 1)") }
                        signedEvents += 1
                    } else if sequence <= derivedCutoffs[origin] ?? head, isSignedLedger || trust.key(origin, at: sequence) != nil {
                        problem("chain: \(origin)/\(sequence) is not signed")
                    }
                    previous = e.hash
                    if let signature = e.signature, let signer = e.signer {
                        let trusted = sequence > derivedCutoffs[origin] ?? head || trust.key(origin, at: sequence) == signer
                        let message = EventChain.message(ledger: ledgerID, origin: origin, sequence: sequence, hash: previous.bytes)
                        if !trusted {
                            problem("signature: \(origin)/\(sequence) is signed by a key not enrolled for \(origin)")
                        } else if !Ed25519.verify(signature: signature, message: message, publicKey: signer) {
                            problem("signature: \(origin)/\(sequence) does not verify")
                        }
                    }
                }
                report.unsignedEvents += Int(head) - signedEvents
            }

            // The stored projection equals a fresh replay, row for row.
            let status = try StoredProjection.status(txn, layout)
            if status.version != StoredProjection.version {
                problem("projection: version \(status.version), expected \(StoredProjection.version)")
            }
            if status.checkpoint != report.events {
                problem("projection: checkpoint \(status.checkpoint), the log ends at \(report.events)")
            }
            let tables = layout.projections[status.generation]
            let fresh = try StoredProjection.rows(of: projection)
            let removedRows = Dictionary(uniqueKeysWithValues: fresh.removed.map { ($0, [UInt8]()) })
            let pending = PendingTable.rows(of: projection)
            for (name, db, want) in [
                ("goals", tables.goals, fresh.goals), ("removed", tables.removed, removedRows),
                ("devices", tables.devices, fresh.devices), ("reminders", tables.reminders, pending.reminders),
                ("pending", tables.pending, pending.pending), ("setAside", tables.setAside, setAsideRows),
                ("digest", tables.digest, fresh.digest),
            ] {
                for p in try Self.compareRows(name, db, want, txn) { problem(p) }
            }
            for p in try Self.compareEntries(tables.entries, pending.entries, txn) { problem(p) }
            report.goals = projection.existingGoals.count
            return report
        }
    }

    /// Differences between the stored `entries` table and a fresh replay's rows (in key order):
    /// one walk over both, as `compareRows` reports them, without a table of a million rows.
    static func compareEntries(
        _ db: Database, _ want: [(key: PendingTable.EntryKey, entry: ProgressEntry?)], _ txn: borrowing Transaction
    ) throws -> [String] {
        var problems: [String] = []
        var seen = 0
        var next = 0
        func describe(_ k: UnsafeRawBufferPointer) -> String {
            guard k.count == 36 else { return "a key of \(k.count) bytes" }
            return "goal \(StoredProjection.uuid(k).uuidString) entry \(StoredProjection.uuid(UnsafeRawBufferPointer(rebasing: k[20...])).uuidString)"
        }
        func missing(_ i: Int) {
            want[i].key.bytes.withUnsafeBytes { problems.append("projection entries: \(describe($0)) is missing (a fresh replay has it)") }
        }
        try txn.scan(db) { k, v in
            seen += 1
            let key = PendingTable.EntryKey(bytes: k)
            if let key {
                while next < want.count, want[next].key < key {
                    missing(next)
                    next += 1
                }
            }
            if let key, next < want.count, want[next].key == key {
                let expected = want[next].entry.map(PendingTable.entryValue) ?? []
                if !expected.elementsEqual(v) { problems.append("projection entries: \(describe(k)) differs from a fresh replay") }
                next += 1
            } else {
                problems.append("projection entries: \(describe(k)) is not in a fresh replay")
            }
            return problems.count < 100
        }
        while next < want.count, problems.count < 100 {
            missing(next)
            next += 1
        }
        if seen != want.count { problems.append("projection entries: \(seen) rows stored, a fresh replay has \(want.count)") }
        return problems
    }

    /// Differences between a stored projection table and the rows of a fresh replay.
    static func compareRows(_ name: String, _ db: Database, _ want: [[UInt8]: [UInt8]], _ txn: borrowing Transaction) throws -> [String] {
        var problems: [String] = []
        var seen = 0
        func describe(_ k: [UInt8]) -> String {
            if name == "devices" { return "device " + String(decoding: k, as: UTF8.self) }
            if name == "digest" && k == ProjectionTables.ledgerKey { return "the ledger's row" }
            if name == "pending" {
                // device · 0x00 · request id
                let parts = k.split(separator: 0, maxSplits: 1).map { String(decoding: $0, as: UTF8.self) }
                return "device \(parts.first ?? "") request \(parts.count > 1 ? parts[1] : "")"
            }
            guard k.count >= 16 else { return "a key of \(k.count) bytes" }
            var s = "goal " + k.withUnsafeBytes { StoredProjection.uuid($0).uuidString }
            if k.count == 32 {
                // removed: goal · entry
                s +=
                    " entry "
                    + k.withUnsafeBytes { StoredProjection.uuid(UnsafeRawBufferPointer(rebasing: $0[(k.count - 16)...])).uuidString }
            }
            return s
        }
        try txn.scan(db) { k, v in
            let key = Array(k)
            seen += 1
            if let w = want[key] {
                if !w.elementsEqual(v) { problems.append("projection \(name): \(describe(key)) differs from a fresh replay") }
            } else {
                problems.append("projection \(name): \(describe(key)) is not in a fresh replay")
            }
            return problems.count < 100
        }
        if seen != want.count { problems.append("projection \(name): \(seen) rows stored, a fresh replay has \(want.count)") }
        return problems
    }
}

/// What the chain check needs of one event: its hash, and what it says of its predecessor and
/// its signature.
struct ChainLink {
    /// The event's hash and its predecessor's as it records it, kept inline (a million events
    /// hold no array each).
    let hash: Hash32
    let previousHash: Hash32?
    let signature: [UInt8]?
    let signer: [UInt8]?

    init(hash: [UInt8], previousHash: [UInt8]?, signature: [UInt8]?, signer: [UInt8]?) {
        self.hash = Hash32(hash)
        self.previousHash = previousHash.map(Hash32.init)
        self.signature = signature
        self.signer = signer
    }
}

extension [ChainLink?] {
    /// Puts `link` at `index`, growing the array with gaps; the first link at an index stays.
    mutating func place(_ link: ChainLink, at index: Int) {
        if index >= count { append(contentsOf: repeatElement(nil, count: index - count + 1)) }
        if self[index] == nil { self[index] = link }
    }
}

/// 32 bytes as four integers (a BLAKE2b hash; a value of another length compares unequal to
/// every hash, as its bytes would).
struct Hash32: Equatable {
    let words: (UInt64, UInt64, UInt64, UInt64)
    let valid: Bool

    init(_ bytes: [UInt8]) {
        valid = bytes.count == 32
        words = valid ? bytes.withUnsafeBytes { b in
            (b.loadUnaligned(as: UInt64.self), b.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
             b.loadUnaligned(fromByteOffset: 16, as: UInt64.self), b.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        } : (0, 0, 0, 0)
    }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        withUnsafeBytes(of: words) { out.append(contentsOf: $0) }
        return out
    }

    static func == (a: Hash32, b: Hash32) -> Bool { a.valid && b.valid && a.words == b.words }
}
