import Foundation
import Testing

@testable import GoalLedger

/// An append in chunks (`LedgerWriter.append(chunks:now:flushingEvery:)`, what `ledger append`
/// does with a long input) writes each chunk's events as a batch of their own but holds the
/// projection's rows across chunks: the store it leaves is the one a single batch of the same
/// drafts leaves, whatever the chunks' size and however often the rows are written.
struct ChunkedLibraryAppendTests {
    let now = instant("2026-11-20T12:00:00Z")
    static let other = "8D2E3F40-5B6C-4D7E-8F90-A1B2C3D4E5F6"

    /// Drafts whose rules and fold read what earlier drafts left: goals created then recorded,
    /// edited, tagged and untagged; an entry removed long after it was recorded; a goal deleted
    /// and restored; the author's time zone changed between entries that carry no day; an id
    /// given twice (a duplicate of the first).
    func history() throws -> [EventDraft] {
        var lines = [
            #"{"type":"deviceConfigured","timeZone":"Europe/Berlin","firstWeekday":2,"locale":"de_DE","at":"2026-11-02T07:00:00Z"}"#,
            #"{"type":"goalCreated","goal":"\#(runGoal)","title":"Run","cadence":"daily","progress":{"kind":"measurable","target":5,"unit":"km"},"reminder":{"hour":7},"tags":["sport"],"at":"2026-11-02T07:05:00Z"}"#,
            #"{"type":"goalCreated","goal":"\#(callGoal)","title":"Call","cadence":"weekly","reminder":{},"at":"2026-11-02T07:06:00Z"}"#,
            #"{"type":"goalCreated","goal":"\#(Self.other)","title":"Read","cadence":"daily","progress":{"kind":"measurable","target":30},"at":"2026-11-02T07:07:00Z"}"#,
        ]
        for n in 1...12 {
            lines.append(
                #"{"id":"E1000000-0000-4000-8000-0000000000\#(10 + n)","type":"progressRecorded","goal":"\#(runGoal)","amount":\#(n % 4 + 1),"at":"2026-11-\#(10 + n)T18:00:00Z"}"#)
            lines.append(#"{"type":"progressRecorded","goal":"\#(Self.other)","amount":\#(n * 3),"at":"2026-11-\#(10 + n)T21:30:00Z"}"#)
        }
        lines += [
            #"{"type":"goalEdited","goal":"\#(runGoal)","title":"Run more","target":6,"at":"2026-11-14T06:00:00Z"}"#,
            #"{"type":"tagAdded","goal":"\#(callGoal)","tag":"family","at":"2026-11-14T06:01:00Z"}"#,
            #"{"type":"progressRecorded","goal":"\#(callGoal)","completed":true,"at":"2026-11-14T19:00:00Z"}"#,
            #"{"type":"progressRemoved","goal":"\#(runGoal)","entry":"E1000000-0000-4000-8000-000000000012","at":"2026-11-15T08:00:00Z"}"#,
            #"{"type":"tagRemoved","goal":"\#(callGoal)","tag":"family","at":"2026-11-15T08:01:00Z"}"#,
            #"{"type":"deviceConfigured","timeZone":"Asia/Tokyo","firstWeekday":1,"locale":"ja_JP","at":"2026-11-16T07:00:00Z"}"#,
            #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":2,"at":"2026-11-16T16:30:00Z"}"#,
            #"{"type":"goalDeleted","goal":"\#(callGoal)","at":"2026-11-17T19:00:00Z"}"#,
            #"{"type":"goalRestored","goal":"\#(callGoal)","at":"2026-11-18T19:00:00Z"}"#,
            #"{"type":"progressRecorded","goal":"\#(callGoal)","completed":true,"at":"2026-11-18T20:00:00Z"}"#,
            #"{"type":"reminderSet","goal":"\#(Self.other)","hour":21,"at":"2026-11-19T07:00:00Z"}"#,
            // The id of the first entry again: a duplicate, reported with the first's position.
            #"{"id":"E1000000-0000-4000-8000-000000000011","type":"progressRecorded","goal":"\#(runGoal)","amount":9,"at":"2026-11-19T18:00:00Z"}"#,
            #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":3,"at":"2026-11-19T23:30:00Z"}"#,
        ]
        // Every draft with an id of its own (the digest covers the entries' ids), but the
        // duplicate, which names the first entry's; none with a line (as an app's).
        return try drafts(
            lines.enumerated().map { n, line in
                line.contains(#""id":"#) ? line : line.replacingOccurrences(of: "{", with: #"{"id":"E2000000-0000-4000-8000-\#(String(format: "%012d", n))","#, options: [], range: line.startIndex..<line.index(after: line.startIndex))
            }
        ).map { d in
            var d = d
            d.line = nil
            return d
        }
    }

    /// The drafts appended in chunks of `size`, the rows written every `flushEvents` drafts.
    /// The results handed over early (`resultsKnown`) are, once, those returned, handed over
    /// after the last chunk was taken.
    func appendInChunks(_ drafts: [EventDraft], size: Int, flushEvents: Int, to store: LedgerStore) throws -> [AppendResult] {
        var next = 0
        var known: [[AppendResult]] = []
        var chunksTaken = 0
        let results = try store.writing { writer in
            try writer.append(
                chunks: { () throws(LedgerError) -> [EventDraft]? in
                    #expect(known.isEmpty, "results handed over before the last chunk")
                    chunksTaken += 1
                    guard next < drafts.count else { return nil }
                    let chunk = next..<min(drafts.count, next + size)
                    next = chunk.upperBound
                    return Array(drafts[chunk])
                }, now: now, flushingEvery: flushEvents, resultsKnown: { known.append($0) })
        }
        #expect(known == [results], "chunks of \(size)")
        #expect(chunksTaken == (drafts.count + size - 1) / size + 1)
        return results
    }

    @Test(arguments: [(1, 1), (2, 5), (3, 1_000), (5, 7), (7, 2), (64, 1_000)])
    func chunksLeaveTheStoreOneBatchLeaves(_ size: Int, _ flushEvents: Int) throws {
        let drafts = try history()
        let whole = try TemporaryStore()
        let expected = try whole.store.append(drafts, now: now)
        #expect(expected.filter(\.duplicate).count == 1)
        let chunked = try TemporaryStore()
        let results = try appendInChunks(drafts, size: size, flushEvents: flushEvents, to: chunked.store)
        #expect(results == expected, "chunks of \(size)")
        let what = "chunks of \(size), rows written every \(flushEvents)"
        for store in [whole.store, chunked.store] { #expect(try store.read { try $0.verify() }.isClean, "\(what)") }
        #expect(try chunked.store.read { try $0.digest() } == whole.store.read { try $0.digest() }, "\(what)")
        let goals = { (s: LedgerStore) in try s.read { try $0.goals(now: now, includingDeleted: true) } }
        #expect(try goals(chunked.store) == goals(whole.store), "\(what)")
        let pending = { (s: LedgerStore) in try s.read { try $0.pendingPlan(device: "phone", now: now).1 } }
        #expect(try pending(chunked.store) == pending(whole.store), "\(what)")
    }

    /// The rules for progress read a goal the batch holds as they read a stored one: progress
    /// on a goal deleted earlier in the batch, or of the wrong kind for it, is refused, in one
    /// batch as in chunks whose rows are held.
    @Test(arguments: [0, 1, 3])
    func progressOnAGoalTheBatchHoldsFollowsItsRules(_ size: Int) throws {
        let created = #"{"type":"goalCreated","goal":"\#(runGoal)","title":"Run","cadence":"daily","progress":{"kind":"measurable","target":5}}"#
        let cases: [(lines: [String], message: String)] = [
            ([created, #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":1}"#, #"{"type":"goalDeleted","goal":"\#(runGoal)"}"#,
              #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":2}"#], "is deleted"),
            ([created, #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":1}"#,
              #"{"type":"progressRecorded","goal":"\#(runGoal)","completed":true}"#], "the goal is measurable"),
        ]
        for c in cases {
            let t = try TemporaryStore()
            let drafts = try drafts(c.lines)
            do {
                if size == 0 {
                    try t.store.append(drafts, now: now)
                } else {
                    _ = try appendInChunks(drafts, size: size, flushEvents: 1_000, to: t.store)
                }
                Issue.record("accepted: \(c.message)")
            } catch let error as LedgerError {
                #expect(error.message.contains(c.message), "\(error.message)")
            }
        }
    }

    /// A chunk of duplicates only, where the held rows are to be written, writes them: the
    /// store is the one a single batch leaves, and the next append finds it consistent.
    @Test func aChunkOfDuplicatesWritesTheRowsHeldBeforeIt() throws {
        let drafts = try history()
        let again = Array(drafts.prefix(6))
        let whole = try TemporaryStore()
        let expected = try whole.store.append(drafts + again, now: now)
        let chunked = try TemporaryStore()
        // The history in one chunk, its rows held; then a chunk of duplicates only, after
        // which the rows are to be written.
        var chunks = [drafts, again]
        let results = try chunked.store.writing { writer in
            try writer.append(
                chunks: { () throws(LedgerError) -> [EventDraft]? in chunks.isEmpty ? nil : chunks.removeFirst() }, now: now,
                flushingEvery: drafts.count + 1)
        }
        #expect(results == expected)
        #expect(try chunked.store.read { try $0.verify() }.isClean)
        #expect(try chunked.store.read { try $0.digest() } == whole.store.read { try $0.digest() })
        let more = try draft(#"{"type":"tagAdded","goal":"\#(runGoal)","tag":"more"}"#)
        #expect(throws: Never.self) { try chunked.store.append([more], now: now) }
    }

    /// A schema-1 history write names its base by id: a base written in an earlier chunk, whose
    /// id row is held and not yet in the index, is found as a stored one is.
    @Test func aHistoryWritesBaseInAnEarlierChunkIsFound() throws {
        let goal = UUID(uuidString: "3D2C1B0A-9F8E-4D7C-8B6A-5F4E3D2C1B0A")!
        func write(_ n: Int) -> UUID { UUID(uuidString: String(format: "F0000000-0000-4000-8000-%012d", n))! }
        func history(_ id: UUID, _ entries: [Int], base: UUID?, at: String) -> EventDraft {
            DigestTests.legacyHistory(id, goal: goal, entries, base: base, at: at)
        }
        let drafts = [
            EventDraft(
                id: write(0), at: instant("2026-10-01T08:00:00Z"),
                payload: .goalCreated(GoalCreated(goal: goal, title: "Read", cadence: .daily, progressKind: .measurable, target: try Amount("20")))),
            history(write(1), [1, 2, 3], base: nil, at: "2026-10-03T21:00:00Z"),
            // Entry 2 removed on purpose: the base says the writer had seen it.
            history(write(2), [1, 3], base: write(1), at: "2026-10-04T21:00:00Z"),
        ]
        let dir = TemporaryDirectory()
        let whole = try LedgerStore.create(at: dir.path + "/whole", device: "phone", schema: 1)
        let expected = try whole.append(drafts, now: now)
        let chunked = try LedgerStore.create(at: dir.path + "/chunked", device: "phone", schema: 1)
        let results = try appendInChunks(drafts, size: 1, flushEvents: 1_000, to: chunked)
        #expect(results == expected)
        #expect(try chunked.goalState(goal).entries.map(\.id) == whole.goalState(goal).entries.map(\.id))
        #expect(Set(try chunked.goalState(goal).entries.map(\.id)) == [DigestTests.legacyEntry(1), DigestTests.legacyEntry(3)])
        #expect(try chunked.read { try $0.digest() } == whole.read { try $0.digest() })
        #expect(try chunked.read { try $0.verify() }.isClean)
    }

    /// A draft refused in a later chunk leaves nothing of the earlier ones, their rows held or
    /// written: the store is as it was.
    @Test(arguments: [1, 1_000])
    func aRefusalInALaterChunkLeavesNothing(_ flushEvents: Int) throws {
        var drafts = try history()
        var unknown = try draft(#"{"type":"progressRecorded","goal":"F0000000-0000-4000-8000-000000000001","amount":1}"#)
        unknown.line = nil
        drafts.append(unknown)
        let t = try TemporaryStore()
        let before = try t.store.snapshot()
        // Drafts without lines are named by their place in the whole batch, not in their chunk.
        let error = #expect(throws: LedgerError.self) { try appendInChunks(drafts, size: 4, flushEvents: flushEvents, to: t.store) }
        #expect(error?.message.hasPrefix("event \(drafts.count) of the batch") == true, "\(error?.message ?? "")")
        #expect(try t.store.snapshot() == before)
    }
}

/// The id rows a chunked append holds between writes of the projection's rows: each chunk's
/// rows a run in key order, looked up one by one and a chunk at a time, and all handed over.
struct HeldIDRowsTests {
    @Test func heldRowsAreFoundInEveryRunAndHandedOverOnce() {
        var random = SeededRandom(seed: 37)
        // Three chunks of random ids (one of them a single row), positions in write order.
        let sizes = [500, 1, 300]
        var position: UInt64 = 0
        var chunks: [[(id: UUID, position: UInt64)]] = []
        for size in sizes {
            chunks.append((0..<size).map { _ in
                position += 1
                return (random.uuid(), position)
            })
        }
        var held = HeldIDRows()
        #expect(held.isEmpty)
        for chunk in chunks { held.hold(chunk.map { (IDWords($0.id), $0.position) }) }
        let all = chunks.flatMap { $0 }
        for row in all { #expect(held.position(of: row.id) == row.position) }
        let strangers = (0..<50).map { _ in random.uuid() }
        for id in strangers { #expect(held.position(of: id) == nil) }
        // A later chunk's ids: some held (from each run), some not, in no order.
        let asked = (strangers + [all[0].id, all[499].id, all[500].id, all[777].id, all[250].id]).shuffled(using: &random)
        var wanted = asked.map { (key: IDWords($0), id: $0) }
        wanted.sortStably(byIDWords: \.key)
        var found: [UUID: UInt64] = [:]
        held.positions(ofSorted: wanted, into: &found)
        #expect(found == [all[0].id: 1, all[499].id: 500, all[500].id: 501, all[777].id: 778, all[250].id: 251])
        // Handed over with the rows of the batch that writes them, each once.
        let taken = held.take(adding: [(IDWords(strangers[0]), 1_000)])
        #expect(taken.count == all.count + 1)
        #expect(Set(taken.map(\.position)) == Set(all.map(\.position) + [1_000]))
        // In key order, so that the index's put sorts nothing.
        #expect(taken.map(\.key) == (all.map { IDWords($0.id) } + [IDWords(strangers[0])]).sorted())
        #expect(held.isEmpty)
        #expect(held.position(of: all[0].id) == nil)
    }

    /// A chunk's ids are sought in each run from where the last was found, by steps that
    /// double: whatever the two densities (a few ids against a long run, as many as it holds,
    /// far more than it holds), every held id among them is found, with its position, and no
    /// other; ids that share their first words, and ids below and above every held one, too.
    @Test(arguments: [(1, 2_000), (40, 2_000), (2_000, 2_000), (5_000, 300), (3, 1)])
    func idsSoughtByGallopingAreFoundWhateverTheDensities(_ asked: Int, _ heldCount: Int) {
        var random = SeededRandom(seed: UInt64(39 + asked + heldCount))
        var held = HeldIDRows()
        var model: [UUID: UInt64] = [:]
        var ids: [UUID] = []
        // Held in two chunks, so that the lookups cross runs of different lengths.
        for (k, size) in [heldCount - heldCount / 3, heldCount / 3].enumerated() where size > 0 {
            let rows = (0..<size).map { i -> (key: IDWords, position: UInt64) in
                var id = random.uuid()
                // A few ids share their first half with one held before.
                if i % 7 == 3, let other = ids.last { id = UUID(uuid: Self.sharingFirstHalf(other, id)) }
                ids.append(id)
                let position = UInt64(k * 100_000 + i + 1)
                model[id] = position
                return (IDWords(id), position)
            }
            held.hold(rows)
        }
        // Half of the ids asked are held ones, the rest strangers (some sharing a held id's
        // first half, and the least and greatest ids there are).
        var askedIDs = (0..<asked).map { i -> UUID in
            let pick = ids[Int(random.next() % UInt64(ids.count))]
            return i % 2 == 0 ? pick : (i % 5 == 1 ? UUID(uuid: Self.sharingFirstHalf(pick, random.uuid())) : random.uuid())
        }
        askedIDs += [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))]
        var wanted = Array(Set(askedIDs)).map { (key: IDWords($0), id: $0) }
        wanted.sortStably(byIDWords: \.key)
        var found: [UUID: UInt64] = [:]
        held.positions(ofSorted: wanted, into: &found)
        let sought = Set(wanted.map(\.id))
        #expect(found == model.filter { id, _ in sought.contains(id) })
        #expect(!found.isEmpty)
        for w in wanted { #expect(held.position(of: w.id) == model[w.id]) }
    }

    /// The bytes of `a`'s first half with `b`'s second.
    static func sharingFirstHalf(_ a: UUID, _ b: UUID) -> uuid_t {
        var out = b.uuid
        withUnsafeMutableBytes(of: &out) { o in withUnsafeBytes(of: a.uuid) { for i in 0..<8 { o[i] = $0[i] } } }
        return out
    }

    /// Chunks of one draft each (an app may hand over any size): the runs stay few, merged as
    /// a binary counter, and every row is found, one by one and a chunk at a time.
    @Test func rowsHeldADraftAtATimeStayInFewRuns() {
        var random = SeededRandom(seed: 38)
        var held = HeldIDRows()
        var rows: [(id: UUID, position: UInt64)] = []
        for position in UInt64(1)...5_000 {
            let id = random.uuid()
            // Each new id is checked against those held, as a chunk's would be.
            var found: [UUID: UInt64] = [:]
            held.positions(ofSorted: [(IDWords(id), id)], into: &found)
            #expect(found.isEmpty)
            held.hold([(IDWords(id), position)])
            rows.append((id, position))
            // A binary counter of 5,000 single rows holds at most 13 runs.
            #expect(held.runCount <= 13)
        }
        #expect(held.runCount == 5_000.nonzeroBitCount)
        for row in rows { #expect(held.position(of: row.id) == row.position) }
        var wanted = rows.prefix(64).map { (key: IDWords($0.id), id: $0.id) }
        wanted.sortStably(byIDWords: \.key)
        var found: [UUID: UInt64] = [:]
        held.positions(ofSorted: wanted, into: &found)
        #expect(found == Dictionary(uniqueKeysWithValues: rows.prefix(64).map { ($0.id, $0.position) }))
        #expect(held.take(adding: []).map(\.key) == rows.map { IDWords($0.id) }.sorted())
    }
}
