import Foundation
import LMDB
import Testing

@testable import GoalLedger

/// The digest: its construction, that it follows the facts and not the order they arrived in,
/// and that the value a store maintains equals the one computed from scratch.
struct DigestTests {
    let now = instant("2026-11-05T12:00:00Z")

    // MARK: A reference written from the documented construction

    /// The digest computed from the canonical JSON value as documented, with its own byte
    /// arithmetic and its own reading of each entry's JSON object into the documented binary
    /// form: it shares only SHA-256 and the JSON writer with the code under test.
    static func reference(_ p: GoalProjection) throws -> String {
        func sha(_ bytes: [UInt8]) -> [UInt8] {
            var h = SHA256()
            h.update(bytes)
            return h.finalize()
        }
        // Big-endian addition of two 32-byte integers, modulo 2^256.
        func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            var carry = 0
            for i in (0..<32).reversed() {
                let s = Int(a[i]) + Int(b[i]) + carry
                out[i] = UInt8(s & 0xFF)
                carry = s >> 8
            }
            return out
        }
        guard case .array(let goals) = p.canonicalJSON else { throw LedgerError(.internal, "not an array") }
        var total = [UInt8](repeating: 0, count: 32)
        var count: UInt64 = 0
        for goal in goals {
            guard case .object(let members) = goal, case .array(let entries)? = members.first(where: { $0.0 == "entries" })?.1 else {
                throw LedgerError(.internal, "not a goal")
            }
            var header: [UInt8] = []
            try JSONWriter.write(.object(members.filter { $0.0 != "entries" }), into: &header)
            var entrySum = [UInt8](repeating: 0, count: 32)
            for entry in entries {
                entrySum = add(entrySum, sha(Array("goal-ledger.digest.2.entry:".utf8) + (try binaryForm(entry))))
            }
            total = add(total, sha(Array("goal-ledger.digest.2.goal:".utf8) + sha(header) + entrySum))
            count += 1
        }
        return SHA256.hexString(sha(Array("goal-ledger.digest.2.ledger:".utf8) + total + count.bigEndianBytes))
    }

    /// An entry's documented binary form, read from its JSON object.
    static func binaryForm(_ entry: JSONValue) throws -> [UInt8] {
        guard case .object(let m) = entry else { throw LedgerError(.internal, "not an entry") }
        func member(_ name: String) -> JSONValue? { m.first(where: { $0.0 == name })?.1 }
        func bigEndian<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
        guard case .string(let id)? = member("id"), let uuid = UUID(uuidString: id),
            case .string(let occurred)? = member("occurredAt"), case .string(let day)? = member("day"),
            case .string(let device)? = member("device")
        else { throw LedgerError(.internal, "an entry lacks a member") }
        var out = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        var flags: UInt8 = 0
        var amountBytes: [UInt8] = []
        if let amount = member("amount") {
            // Plain decimal text to millionths, digit by digit.
            var text = ""
            try JSONWriter.write(amount, into: &amountBytes)
            text = String(decoding: amountBytes, as: UTF8.self)
            let negative = text.hasPrefix("-")
            if negative { text.removeFirst() }
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            let fraction = parts.count > 1 ? String(parts[1]) : ""
            var micros = Int128(String(parts[0]))! * 1_000_000
            micros += Int128(fraction.padding(toLength: 6, withPad: "0", startingAt: 0))!
            if negative { micros = -micros }
            amountBytes = bigEndian(UInt64(truncatingIfNeeded: micros >> 64)) + bigEndian(UInt64(truncatingIfNeeded: micros))
            flags |= 1
        }
        if case .bool(let done)? = member("completed") { flags |= done ? 6 : 2 }
        out.append(flags)
        out += amountBytes
        // Days from a civil date (proleptic Gregorian), then milliseconds from the RFC 3339 text.
        func days(_ ymd: Substring) -> Int64 {
            let f = ymd.split(separator: "-").map { Int64($0)! }
            let (y, mo, d) = (f[0], f[1], f[2])
            let yy = mo <= 2 ? y - 1 : y
            let era = (yy >= 0 ? yy : yy - 399) / 400
            let yoe = yy - era * 400
            let doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1
            let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
            return era * 146_097 + doe - 719_468
        }
        let date = occurred.prefix(10)
        let clock = occurred.dropFirst(11).dropLast()  // HH:MM:SS or HH:MM:SS.mmm
        let hms = clock.prefix(8).split(separator: ":").map { Int64($0)! }
        let ms = clock.count > 8 ? Int64(clock.dropFirst(9))! : 0
        let milliseconds = ((days(date) * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2]) * 1000) + ms
        out += bigEndian(milliseconds)
        out += bigEndian(Int32(days(Substring(day))))
        out += bigEndian(UInt32(device.utf8.count)) + Array(device.utf8)
        return out
    }

    /// The digest of a ledger without goals: SHA-256 of the ledger prefix, 32 zero bytes for the
    /// sum and 8 for the count (as `docs/storage-and-guarantees.md` states it).
    static let emptyDigest = "7f7027d0c0d075d3fc804d3fc5761b66ce2feb57c976b3343673b61f4e3c1fb9"

    /// An entry's hash is SHA-256 of the prefix and its documented form, whether its bytes fit
    /// the stack buffer or not: device names from 1 to 300 bytes, with and without an amount
    /// and a completion.
    @Test func anEntrysHashIsItsDocumentedFormsAtAnyDeviceLength() throws {
        func bigEndian<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
        for length in [1, 5, 64, 100, 120, 140, 160, 300] {
            for (amount, completed) in [(Amount?.none, Bool?.none), (try Amount("-12.5"), Bool?.none), (Amount?.none, true), (try Amount("3"), false)] {
                let device = String(repeating: "d", count: length)
                let at = Instant(milliseconds: now.milliseconds - Int64(length))
                let event = Event(
                    id: UUID(), origin: device, sequence: 1, hlc: HLC(milliseconds: at.milliseconds, counter: 0), at: at, schema: 2,
                    payload: .progressRecorded(ProgressRecorded(goal: UUID(), amount: amount, completed: completed)))
                guard case .progressRecorded(let p) = event.payload else { continue }
                let entry = ProgressEntry(event, p)
                var form = withUnsafeBytes(of: entry.id.uuid) { Array($0) }
                form.append((amount == nil ? 0 : 1) | (completed.map { $0 ? 6 : 2 } ?? 0))
                if let amount {
                    let micros = UInt128(bitPattern: amount.micros)
                    form += bigEndian(UInt64(truncatingIfNeeded: micros >> 64)) + bigEndian(UInt64(truncatingIfNeeded: micros))
                }
                form += bigEndian(entry.occurredAt.milliseconds) + bigEndian(entry.day.daysSinceEpoch)
                form += bigEndian(UInt32(length)) + Array(device.utf8)
                let want = DigestSum(sha256: Array("goal-ledger.digest.2.entry:".utf8) + form)
                #expect(ProjectionDigest.entryHash(entry) == want, "device of \(length) bytes, amount \(String(describing: amount))")
            }
        }
    }

    /// Hashed two at a time, every entry's hash is its own (`entryHash`'s), handed over once
    /// with its entry's tag, whatever the count (one left over or none) and whether the two
    /// of a pair are as many blocks long or not (device names from 1 to 300 bytes).
    @Test func entriesHashedInPairsGetTheirOwnHashes() throws {
        var rng = SeededRandom(seed: 2)
        let lengths = [1, 5, 20, 40, 64, 100, 300]
        for count in [0, 1, 2, 3, 8, 41] {
            let entries = try (0..<count).map { i -> ProgressEntry in
                let device = String(repeating: "d", count: lengths[Int(rng.next() % UInt64(lengths.count))])
                let amount = i % 3 == 0 ? nil : try Amount("\(i).25")
                return ProgressEntry(
                    id: rng.uuid(), amount: amount, completed: i % 3 == 0 ? i % 2 == 0 : nil, occurredAt: now,
                    day: Day(iso: "2026-11-05")!, device: device, hlc: HLC(rawValue: UInt64(i)))
            }
            var hashing = EntryHashing()
            var got: [Int: DigestSum] = [:]
            var handed = 0
            for (i, e) in entries.enumerated() {
                hashing.add(e, i) { tag, h in
                    got[tag] = h
                    handed += 1
                }
            }
            hashing.finish { tag, h in
                got[tag] = h
                handed += 1
            }
            #expect(handed == count, "\(count) entries")
            #expect(got == Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($0.offset, ProjectionDigest.entryHash($0.element)) }))
        }
    }

    @Test func anEmptyLedgerHasTheDocumentedDigest() throws {
        let computed = SHA256.hex(Array("goal-ledger.digest.2.ledger:".utf8) + [UInt8](repeating: 0, count: 40))
        #expect(computed == Self.emptyDigest)
        #expect(try GoalProjection().digest == Self.emptyDigest)
        let t = try TemporaryStore()
        // A new store has its founder's enrolment, which is no goal.
        #expect(try t.store.digest() == Self.emptyDigest)
        #expect(try t.store.digestAndGoalCount().goals == 0)
        // Events about a goal whose `goalCreated` has not arrived do not count either.
        let u = try TemporaryStore(device: "laptop", signed: false)
        let goal = UUID()
        let entry = Event(
            id: UUID(), origin: "phone", sequence: 1, hlc: HLC(milliseconds: now.milliseconds, counter: 0), at: now, schema: 2,
            payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("2"), completed: nil)))
        _ = try u.store.importEvents([entry], from: "test")
        #expect(try u.store.digest() == Self.emptyDigest)
        #expect(try u.store.replay().digest == Self.emptyDigest)
        #expect(try u.store.verify().isClean)
    }

    @Test(arguments: 0..<20)
    func theDigestIsTheDocumentedConstruction(_ seed: Int) throws {
        var p = GoalProjection()
        for e in RandomHistory.events(seed: UInt64(seed) &+ 500, count: 120) { p.apply(e) }
        #expect(try p.digest == Self.reference(p))
    }

    // MARK: Equal facts, equal digests

    /// The same events imported by several stores in different interleavings (each origin's
    /// events in sequence order, as sync requires) and batch sizes give one digest, the one a
    /// replay computes.
    @Test(arguments: 0..<12)
    func theSameEventsInAnyOrderGiveOneDigest(_ seed: Int) throws {
        let events = RandomHistory.events(seed: UInt64(seed) &* 13 &+ 1, count: 90)
        var digests: [String] = []
        for order in 0..<3 {
            let t = try TemporaryStore(device: "laptop", signed: false)
            var rng = SeededRandom(seed: UInt64(seed) &* 101 &+ UInt64(order))
            var queues = Dictionary(grouping: events, by: \.origin)
            while !queues.isEmpty {
                var batch: [Event] = []
                for _ in 0..<(1 + Int(rng.next() % 9)) {
                    guard let origin = queues.keys.sorted().randomElement(using: &rng) else { break }
                    batch.append(queues[origin]!.removeFirst())
                    if queues[origin]!.isEmpty { queues[origin] = nil }
                }
                _ = try t.store.importEvents(batch, from: "test")
                #expect(try t.store.digest() == t.store.replay().digest)
            }
            #expect(try t.store.verify().isClean)
            digests.append(try t.store.digest())
        }
        #expect(Set(digests).count == 1)
        var folded = GoalProjection()
        for e in events { folded.apply(e) }
        #expect(try folded.digest == digests[0])
    }

    // MARK: A different fact, a different digest

    /// Each single change of a fact changes the digest; undoing it (a tag removed again, an
    /// entry added then removed) brings the earlier digest back.
    @Test func everyFactChangesTheDigestAndUndoingItRestoresIt() throws {
        let t = try TemporaryStore()
        let goal = UUID()
        try t.store.append(
            [
                EventDraft(
                    payload: .goalCreated(
                        GoalCreated(goal: goal, title: "Run", cadence: .daily, progressKind: .measurable, target: try! Amount("5"), unit: "km", tags: ["x"]))),
                EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("2"), completed: nil))),
            ], now: now)
        var seen: [String] = []
        func check(_ label: String, new: Bool = true) throws {
            let d = try t.store.digest()
            #expect(d == (try t.store.replay().digest), "\(label)")
            if new { #expect(!seen.contains(d), "\(label): the digest did not change") }
            seen.append(d)
        }
        try check("created")
        let base = seen[0]
        try t.store.append([EventDraft(payload: .goalEdited(GoalEdited(goal: goal, title: "Run far")))], now: now)
        try check("title")
        try t.store.append([EventDraft(payload: .goalEdited(GoalEdited(goal: goal, title: "Run")))], now: now)
        #expect(try t.store.digest() == base, "the title back")
        try t.store.append([EventDraft(payload: .tagAdded(TagAdded(goal: goal, tag: "y")))], now: now)
        try check("a tag")
        let tagged = try t.store.digest()
        try t.store.append([EventDraft(payload: .tagRemoved(TagRemoved(goal: goal, tag: "y", observed: [])))], now: now)
        #expect(try t.store.digest() == base, "the tag removed")
        try t.store.append([EventDraft(payload: .tagAdded(TagAdded(goal: goal, tag: "y")))], now: now)
        #expect(try t.store.digest() == tagged, "the tag again")
        try t.store.append([EventDraft(payload: .tagRemoved(TagRemoved(goal: goal, tag: "y", observed: [])))], now: now)
        let added = try t.store.append(
            [EventDraft(at: instant("2026-11-05T09:00:00Z"), payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("3"), completed: nil)))],
            now: now)
        try check("an entry")
        try t.store.append([EventDraft(payload: .progressRemoved(ProgressRemoved(goal: goal, entry: added[0].id)))], now: now)
        #expect(try t.store.digest() == base, "the entry removed")
        // An entry and its removal in one batch leave the digest as it was.
        let id = UUID()
        try t.store.append(
            [
                EventDraft(id: id, payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("1"), completed: nil))),
                EventDraft(payload: .progressRemoved(ProgressRemoved(goal: goal, entry: id))),
            ], now: now)
        #expect(try t.store.digest() == base, "an entry and its removal in one batch")
        try t.store.append([EventDraft(payload: .goalDeleted(GoalRegisterWrite(goal: goal)))], now: now)
        try check("deleted")
        try t.store.append([EventDraft(payload: .goalRestored(GoalRegisterWrite(goal: goal)))], now: now)
        #expect(try t.store.digest() == base, "restored")
        try t.store.append([EventDraft(payload: .reminderSet(ReminderSet(goal: goal, hour: 7, minute: 30)))], now: now)
        try check("a reminder")
        #expect(try t.store.verify().isClean)
    }

    /// Two histories that differ in one entry's amount, or by one entry more, differ in digest;
    /// an entry's removal arriving before the entry gives the digest of the other order.
    @Test func entriesCountByTheirContentAndRemovalsWinInAnyOrder() throws {
        let goal = UUID()
        let entryID = UUID()
        func event(_ seq: UInt64, _ payload: Payload, id: UUID = UUID()) -> Event {
            Event(
                id: id, origin: "phone", sequence: seq, hlc: HLC(milliseconds: now.milliseconds + Int64(seq), counter: 0), at: now,
                schema: 2, payload: payload)
        }
        let created = event(
            1, .goalCreated(GoalCreated(goal: goal, title: "Run", cadence: .daily, progressKind: .measurable, target: try! Amount("5"))))
        func history(amount: Amount) -> [Event] {
            [
                created,
                event(
                    2, .progressRecorded(ProgressRecorded(goal: goal, amount: amount, completed: nil, occurredAt: now, day: day("2026-11-05"))),
                    id: entryID),
            ]
        }
        func digest(_ events: [Event]) throws -> String {
            var p = GoalProjection()
            for e in events { p.apply(e) }
            return try p.digest
        }
        #expect(try digest(history(amount: try! Amount("2"))) != digest(history(amount: try! Amount("3"))))
        #expect(try digest(history(amount: try! Amount("2"))) != digest([created]))
        let removal = event(3, .progressRemoved(ProgressRemoved(goal: goal, entry: entryID)))
        #expect(try digest(history(amount: try! Amount("2")) + [removal]) == digest([created]))
        #expect(try digest([removal] + history(amount: try! Amount("2"))) == digest([created]))

        // The same through a store's maintained digest: the removal imported before its entry.
        let t = try TemporaryStore(device: "laptop", signed: false)
        let entry = history(amount: try! Amount("2"))[1]
        let other = Event(
            id: UUID(), origin: "tablet", sequence: 1, hlc: HLC(milliseconds: now.milliseconds + 10, counter: 0), at: now, schema: 2,
            payload: .progressRemoved(ProgressRemoved(goal: goal, entry: entryID)))
        _ = try t.store.importEvents([other], from: "test")
        _ = try t.store.importEvents([created], from: "test")
        _ = try t.store.importEvents([entry], from: "test")
        #expect(try t.store.digest() == digest([created]))
        #expect(try t.store.verify().isClean)

        // In one batch (which takes canonical order): a removal before the entry, and one after.
        let early = Event(
            id: UUID(), origin: "tablet", sequence: 1, hlc: HLC(milliseconds: now.milliseconds - 10, counter: 0), at: now, schema: 2,
            payload: .progressRemoved(ProgressRemoved(goal: goal, entry: entryID)))
        for removal in [early, other] {
            let u = try TemporaryStore(device: "laptop", signed: false)
            _ = try u.store.importEvents([created, entry, removal], from: "test")
            #expect(try u.store.digest() == digest([created]))
            #expect(try u.store.verify().isClean)
        }
    }

    // MARK: Maintained equals from scratch

    /// Random appends (entries, removals, edits, tags, deletions, restores) on three devices and
    /// syncs between them: after every step each store's maintained digest equals its replay's,
    /// and after a final exchange the three agree.
    @Test(arguments: 0..<16)
    func theMaintainedDigestEqualsAReplayAfterRandomAppendsAndSyncs(_ seed: Int) throws {
        let dir = TemporaryDirectory()
        let a = try LedgerStore.create(at: dir.path + "/a", device: "phone")
        let b = try a.clone(to: dir.path + "/b", device: "tablet", now: instant("2026-11-01T00:00:00Z"))
        let c = try a.clone(to: dir.path + "/c", device: "watch", now: instant("2026-11-01T00:00:00Z"))
        let stores = [a, b, c]
        var rng = SeededRandom(seed: UInt64(seed) &* 7_919 &+ 3)
        for step in 0..<30 {
            let store = stores[Int(rng.next() % 3)]
            if rng.next() % 4 == 0 {
                let other = stores.filter { $0 !== store }[Int(rng.next() % 2)]
                _ = try store.sync(with: other)
                for s in [store, other] { #expect(try s.digest() == s.replay().digest, "seed \(seed) step \(step) \(s.device)") }
                continue
            }
            let batch = try RandomHistory.validBatch(for: store, rng: &rng, size: 1 + Int(rng.next() % 5), step: step)
            try store.append(batch, now: now)
            #expect(try store.digest() == store.replay().digest, "seed \(seed) step \(step) \(store.device)")
        }
        _ = try a.sync(with: b)
        _ = try b.sync(with: c)
        _ = try a.sync(with: b)
        let digests = try stores.map { try $0.digest() }
        #expect(Set(digests).count == 1)
        #expect(digests[0] == (try Self.reference(a.replay())))
        for s in stores { #expect(try s.verify().isClean) }
    }

    /// The entry `n` of the schema-1 history writes below.
    static func legacyEntry(_ n: Int) -> UUID { UUID(uuidString: String(format: "E0000000-0000-4000-8000-%012d", n))! }

    /// A schema-1 history write of `goal` holding the entries numbered `entries` (entry n of
    /// amount n, on October n), written at `at`.
    static func legacyHistory(_ id: UUID, goal: UUID, _ entries: [Int], base: UUID?, at: String) -> EventDraft {
        EventDraft(
            id: id, at: instant(at),
            payload: .progressHistoryReplaced(
                ProgressHistoryReplaced(
                    goal: goal,
                    entries: entries.map { HistoryEntry(id: legacyEntry($0), amount: try! Amount(whole: Int64($0)), occurredAt: instant("2026-10-0\($0)T20:00:00Z")) },
                    base: base)))
    }

    /// A schema-1 store's history writes (read by the old rule, then upcast by migration) and
    /// removals of their entries keep the maintained digest equal to a replay's.
    @Test func historyWritesOfALegacyStoreKeepTheDigest() throws {
        let dir = TemporaryDirectory()
        let store = try LedgerStore.create(at: dir.path + "/s", device: "phone", schema: 1)
        let goal = UUID()
        let entry = Self.legacyEntry
        func history(_ id: UUID, _ entries: [Int], base: UUID?, at: String) -> EventDraft {
            Self.legacyHistory(id, goal: goal, entries, base: base, at: at)
        }
        try store.append(
            [EventDraft(payload: .goalCreated(GoalCreated(goal: goal, title: "Read", cadence: .daily, progressKind: .measurable, target: try! Amount("20"))))],
            now: now)
        let w1 = UUID()
        try store.append([history(w1, [1, 2, 3], base: nil, at: "2026-10-03T21:00:00Z")], now: now)
        #expect(try store.digest() == store.replay().digest)
        try store.append([history(UUID(), [1], base: nil, at: "2026-10-04T21:00:00Z")], now: now)
        #expect(try store.digest() == store.replay().digest)
        let legacy = try store.digest()
        _ = try store.migrate()
        // Upcast, the second write no longer drops entries 2 and 3: other facts, another digest.
        #expect(try store.digest() == store.replay().digest)
        #expect(try store.digest() != legacy)
        try store.append([EventDraft(payload: .progressRemoved(ProgressRemoved(goal: goal, entry: entry(2))))], now: now)
        #expect(try store.goalState(goal).entries.map(\.id) == [entry(1), entry(3)])
        #expect(try store.digest() == store.replay().digest)
        try store.append([EventDraft(payload: .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("4"), completed: nil)))], now: now)
        #expect(try store.digest() == store.replay().digest)
        #expect(try store.verify().isClean)
        // A rebuild in chunks of one or two events computes the history's entry sums once, at
        // the end, and arrives at the same rows.
        let expected = try store.digest()
        for chunk in [1, 2] as [UInt64] {
            try store.rebuild(progress: nil, chunk: chunk)
            #expect(try store.digest() == expected)
            #expect(try store.verify().isClean)
        }
    }

    /// Under the old rule only the last history write in canonical order counts, and the kept
    /// rows find it by the keys their rows hold: a write that arrives later (a sync) but sorts
    /// earlier does not replace it, one that sorts later does, and several in one batch leave the
    /// last. The digest, the goal's entries and every kept row agree with a replay.
    @Test func theLastHistoryWriteInCanonicalOrderIsTheOneKept() throws {
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone", schema: 1)
        let goal = UUID()
        let entry = Self.legacyEntry
        func history(_ entries: [Int], at: String) -> EventDraft { Self.legacyHistory(UUID(), goal: goal, entries, base: nil, at: at) }
        try phone.append(
            [EventDraft(payload: .goalCreated(GoalCreated(goal: goal, title: "Read", cadence: .daily, progressKind: .measurable, target: try! Amount("20"))))],
            now: instant("2026-10-01T00:00:00Z"))
        let tablet = try phone.clone(to: dir.path + "/tablet", device: "tablet", now: instant("2026-10-01T00:00:00Z"))
        func check(_ entries: [Int], _ line: Int = #line) throws {
            for s in [phone, tablet] {
                #expect(try s.goalState(goal).entries.map(\.id).sorted { UUID.precedes($0, $1) } == entries.map(entry), "line \(line)")
                #expect(try s.digest() == s.replay().digest, "line \(line)")
                #expect(try s.verify().isClean, "line \(line)")
            }
        }
        // The tablet's write is earlier in canonical order, the phone's later.
        try tablet.append([history([1, 2], at: "2026-10-02T21:00:00Z")], now: instant("2026-10-02T21:00:00Z"))
        try phone.append([history([3], at: "2026-10-04T21:00:00Z"), history([4, 5], at: "2026-10-05T21:00:00Z")], now: instant("2026-10-05T21:00:00Z"))
        _ = try phone.sync(with: tablet)
        try check([4, 5])
        // A later write from the tablet replaces it everywhere.
        try tablet.append(
            [history([1], at: "2026-10-06T21:00:00Z"), history([2, 3], at: "2026-10-07T21:00:00Z")], now: instant("2026-10-07T21:00:00Z"))
        _ = try phone.sync(with: tablet)
        try check([2, 3])
    }

    // MARK: Damage and old stores

    /// A damaged digest row (the ledger's or a goal's) is a problem `verify` names; `rebuild`
    /// repairs it.
    @Test func verifyReportsADamagedDigestRowAndRebuildRepairsIt() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        let expected = try t.store.replay().digest
        #expect(try t.store.digest() == expected)
        #expect(try t.store.verify().isClean)
        let goal = try #require(try t.store.replay().existingGoals.first?.id)
        try t.store.writeTransaction { txn in
            let tables = try txn.activeProjection()
            let row = try #require(try txn.get(tables.digest, key: ProjectionTables.ledgerKey))
            try txn.put(tables.digest, key: ProjectionTables.ledgerKey, value: [row[0] ^ 1] + row.dropFirst())
        }
        #expect(try t.store.digest() != expected)
        var problems = try t.store.verify().problems
        #expect(problems == ["projection digest: the ledger's row differs from a fresh replay"], "\(problems)")
        try t.store.rebuild()
        #expect(try t.store.digest() == expected)
        #expect(try t.store.verify().isClean)

        try t.store.writeTransaction { txn in
            let tables = try txn.activeProjection()
            let row = try #require(try txn.get(tables.digest, key: goal.bytes))
            try txn.put(tables.digest, key: goal.bytes, value: Array(row.dropLast()) + [row.last! ^ 0x80])
        }
        problems = try t.store.verify().problems
        #expect(problems == ["projection digest: goal \(goal.uuidString) differs from a fresh replay"], "\(problems)")
        try t.store.rebuild()
        #expect(try t.store.verify().isClean)
        #expect(try t.store.digest() == expected)
    }

    /// A store written before the digest was maintained (projection version 7, no `digest`
    /// tables) is rebuilt when it opens and then serves the digest a replay computes.
    @Test func aStoreWithoutDigestRowsIsRebuiltOnOpen() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        let path = t.store.path
        let expected = try t.store.replay().digest
        try t.store.writeTransaction { txn in
            for g in [0, 1] { try txn.dropDatabase(named: "p\(g).digest") }
            try txn.put(t.store.layout.meta, key: MetaKey.projectionVersion, value: UInt64(7).bigEndianBytes)
        }
        var notices: [String] = []
        let reopened = try LedgerStore.open(at: path, onRebuild: { notices.append($0) })
        #expect(notices.count == 1 && notices[0].contains("version 7"), "\(notices)")
        #expect(try reopened.digest() == expected)
        #expect(try reopened.verify().isClean)
    }

    /// The stores of the fixture written by an earlier version of the ledger (before the gate,
    /// and before the digest was kept) open with the digest a replay computes, and agree after
    /// a sync.
    @Test func theOldFixtureStoresOpenWithTheirDigest() throws {
        let dir = TemporaryDirectory()
        let paths = try EventGateTests.legacyFixture(in: dir)
        let phone = try LedgerStore.open(at: paths.phone)
        let laptop = try LedgerStore.open(at: paths.laptop)
        for s in [phone, laptop] {
            #expect(try s.projectionStatus().version == StoredProjection.version)
            #expect(try s.digest() == s.replay().digest)
            #expect(try s.digest() == Self.reference(s.replay()))
        }
        #expect(try phone.digest() != laptop.digest())
        _ = try phone.sync(with: laptop)
        #expect(try phone.digest() == laptop.digest())
        #expect(try phone.digest() == phone.replay().digest)
        for s in [phone, laptop] { #expect(try s.verify().isClean) }
    }
}
