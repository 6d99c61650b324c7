import Foundation
import Testing

@testable import GoalLedger

let runGoal = "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1"
let callGoal = "5A0D9D3E-2F41-4C8E-8B7A-3E9F1C2D4B60"
let meditateGoal = "7C1D2E3F-4A5B-4C6D-8E7F-901A2B3C4D5E"

/// A small history with ids on every line, so that re-appending it is idempotent.
let dayOne = [
    #"{"id":"10000000-0000-4000-8000-000000000001","type":"deviceConfigured","timeZone":"Europe/Berlin","firstWeekday":2,"locale":"de_DE","at":"2026-11-02T07:00:00Z"}"#,
    #"{"id":"10000000-0000-4000-8000-000000000002","type":"goalCreated","goal":"\#(runGoal)","title":"Run 5 km","cadence":"daily","progress":{"kind":"measurable","target":5,"unit":"km"},"reminder":{"hour":7,"minute":30},"tags":["sport"],"at":"2026-11-02T07:05:00Z"}"#,
    #"{"id":"10000000-0000-4000-8000-000000000003","type":"goalCreated","goal":"\#(callGoal)","title":"Call grandma","cadence":"weekly","reminder":{},"at":"2026-11-02T07:06:00Z"}"#,
    #"{"id":"10000000-0000-4000-8000-000000000004","type":"progressRecorded","goal":"\#(runGoal)","amount":2.5,"at":"2026-11-02T22:40:00Z"}"#,
    #"{"id":"10000000-0000-4000-8000-000000000005","type":"progressRecorded","goal":"\#(callGoal)","completed":true,"at":"2026-11-03T19:00:00Z"}"#,
    #"{"id":"10000000-0000-4000-8000-000000000006","type":"goalDeleted","goal":"\#(callGoal)","at":"2026-11-04T19:00:00Z"}"#,
    #"{"id":"10000000-0000-4000-8000-000000000007","type":"goalCreated","goal":"\#(meditateGoal)","title":"Meditate","cadence":"daily","at":"2026-11-04T20:00:00Z"}"#,
]

struct AppendTests {
    let now = instant("2026-11-05T12:00:00Z")

    @Test func appendAssignsGaplessPositionsSequencesAndARisingClock() throws {
        let t = try TemporaryStore()
        let results = try t.store.append(try drafts(dayOne), now: now)
        #expect(results.map(\.position) == Array(1...7))
        #expect(results.allSatisfy { !$0.duplicate })
        #expect(zip(results, results.dropFirst()).allSatisfy { $0.hlc < $1.hlc })
        let events = try t.store.canonicalEvents()
        #expect(events.map(\.event.sequence) == Array(1...7))
        #expect(events.map(\.event.origin) == Array(repeating: "phone", count: 7))
        #expect(try t.store.originHeads() == ["phone": 7])
        // Same wall time twice: the clock's counter keeps events apart.
        let more = try t.store.append(
            try drafts([
                #"{"type":"tagAdded","goal":"\#(runGoal)","tag":"a","at":"2026-11-02T07:00:00Z"}"#,
                #"{"type":"tagAdded","goal":"\#(runGoal)","tag":"b","at":"2026-11-02T07:00:00Z"}"#,
            ]), now: now)
        #expect(more[0].hlc > results[6].hlc && more[1].hlc > more[0].hlc)
    }

    @Test func reappendingTheSameLinesAddsNothingAndReportsOriginalPositions() throws {
        let t = try TemporaryStore()
        let first = try t.store.append(try drafts(dayOne), now: now)
        let before = try t.store.snapshot()
        let again = try t.store.append(try drafts(dayOne), now: instant("2027-01-01T00:00:00Z"))
        #expect(again.map(\.position) == first.map(\.position))
        #expect(again.map(\.hlc) == first.map(\.hlc))
        #expect(again.allSatisfy { $0.duplicate })
        #expect(try t.store.snapshot() == before)
        // A repeated id inside one batch is written once.
        let line = #"{"id":"20000000-0000-4000-8000-000000000001","type":"tagAdded","goal":"\#(runGoal)","tag":"x"}"#
        let twice = try t.store.append(try drafts([line, line]), now: now)
        #expect(twice.map(\.position) == [8, 8])
        #expect(twice.map(\.duplicate) == [false, true] && twice[1].hlc == twice[0].hlc)
        #expect(try t.store.lastPosition() == 8)
    }

    static let badLines: [(name: String, line: String, field: String?)] = [
        ("malformed JSON", #"{"type":"goalCreated","#, nil),
        ("unknown type", #"{"type":"goalExploded","goal":"\#(runGoal)"}"#, "type"),
        ("unknown field", #"{"type":"tagAdded","goal":"\#(runGoal)","tag":"x","colour":"red"}"#, "colour"),
        ("wrong type", #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":"three"}"#, "amount"),
        (
            "title of 201 characters", #"{"type":"goalEdited","goal":"\#(runGoal)","title":"\#(String(repeating: "x", count: 201))"}"#,
            "title"
        ),
        ("impossible date", #"{"type":"goalEdited","goal":"\#(runGoal)","targetDate":"2026-02-30"}"#, "targetDate"),
        ("unknown goal", #"{"type":"progressRecorded","goal":"99999999-0000-4000-8000-000000000000","amount":1}"#, "goal"),
        ("wrong progress kind", #"{"type":"progressRecorded","goal":"\#(runGoal)","completed":true}"#, "completed"),
        ("append to a deleted goal", #"{"type":"tagAdded","goal":"\#(callGoal)","tag":"x"}"#, "goal"),
        ("goal id reused", #"{"type":"goalCreated","goal":"\#(runGoal)","title":"again"}"#, "goal"),
        (
            "removing an unknown entry", #"{"type":"progressRemoved","goal":"\#(runGoal)","entry":"99999999-0000-4000-8000-000000000000"}"#,
            "entry"
        ),
        ("target on an outcome goal", #"{"type":"goalEdited","goal":"\#(meditateGoal)","target":3}"#, "target"),
        ("removing a tag the goal lacks", #"{"type":"tagRemoved","goal":"\#(runGoal)","tag":"nope"}"#, "tag"),
        ("hour out of range", #"{"type":"reminderSet","goal":"\#(runGoal)","hour":24}"#, "hour"),
        ("invalid time zone", #"{"type":"deviceConfigured","timeZone":"Mars/Olympus"}"#, "timeZone"),
        ("empty edit", #"{"type":"goalEdited","goal":"\#(runGoal)"}"#, nil),
    ]

    @Test(arguments: badLines.indices)
    func oneBadLineRefusesTheWholeBatchAndChangesNothing(_ index: Int) throws {
        let bad = Self.badLines[index]
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        let before = try t.store.snapshot()
        let good = #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":1}"#
        let text = [good, good, bad.line, good].joined(separator: "\n")
        let error = ledgerError {
            let lines = text.split(separator: "\n").map(String.init)
            var parsed: [EventDraft] = []
            for (i, l) in lines.enumerated() { parsed.append(try EventDraft(line: l, number: i + 1)) }
            try t.store.append(parsed, now: now)
        }
        #expect(error?.code == .invalidInput, "\(bad.name) was not refused as invalid input")
        #expect(error?.message.hasPrefix("line 3") == true, "\(bad.name): \(error?.message ?? "")")
        if let field = bad.field {
            #expect(error?.message.contains("field \"\(field)\"") == true, "\(bad.name): \(error?.message ?? "")")
        }
        #expect(try t.store.snapshot() == before, "\(bad.name) changed the store")
    }

    @Test func aBatchSeesItsOwnEventsBeforeTheyAreIndexed() throws {
        // Indexes are written after a batch's rules have run: what the rules look up among the
        // batch's own events must still be found.
        let t = try TemporaryStore()
        let goal = "30000000-0000-4000-8000-000000000001"
        let entry = "30000000-0000-4000-8000-000000000002"
        try t.store.append(
            try drafts([
                #"{"type":"goalCreated","goal":"\#(goal)","title":"Read","cadence":"daily","progress":{"kind":"measurable","target":3}}"#,
                #"{"id":"\#(entry)","type":"progressRecorded","goal":"\#(goal)","amount":2}"#,
                #"{"type":"progressRecorded","goal":"\#(goal)","amount":1}"#,
                #"{"type":"progressRemoved","goal":"\#(goal)","entry":"\#(entry)"}"#,
            ]), now: now)
        let state = try t.store.goalState(UUID(uuidString: goal)!)
        #expect(state.entries.map(\.amount) == [1])
        // The batch's events are found by id however many were added since the last lookup.
        let first = "30000000-0000-4000-8000-000000000004"
        let second = "30000000-0000-4000-8000-000000000005"
        try t.store.append(
            try drafts([
                #"{"id":"\#(first)","type":"progressRecorded","goal":"\#(goal)","amount":4}"#,
                #"{"type":"progressRemoved","goal":"\#(goal)","entry":"\#(first)"}"#,
                #"{"type":"progressRecorded","goal":"\#(goal)","amount":5}"#,
                #"{"id":"\#(second)","type":"progressRecorded","goal":"\#(goal)","amount":6}"#,
                #"{"type":"progressRemoved","goal":"\#(goal)","entry":"\#(second)"}"#,
            ]), now: now)
        let amounts = try t.store.goalState(UUID(uuidString: goal)!).entries.map(\.amount)
        #expect(amounts.count == 2 && amounts.contains(1) && amounts.contains(5), "\(amounts)")
        // A goal created twice in one batch is refused whole, as across batches.
        let again = "30000000-0000-4000-8000-000000000003"
        let before = try t.store.snapshot()
        #expect(throws: LedgerError.self) {
            try t.store.append(
                try drafts([
                    #"{"type":"goalCreated","goal":"\#(again)","title":"A"}"#, #"{"type":"goalCreated","goal":"\#(again)","title":"B"}"#,
                ]), now: now)
        }
        #expect(try t.store.snapshot() == before)
        // So it is when the batch's first creation came after other events, and more came
        // between.
        let other = "30000000-0000-4000-8000-000000000006"
        #expect(throws: LedgerError.self) {
            try t.store.append(
                try drafts([
                    #"{"type":"goalCreated","goal":"\#(again)","title":"A","cadence":"daily","progress":{"kind":"outcome"}}"#,
                    #"{"type":"progressRecorded","goal":"\#(again)","completed":true}"#,
                    #"{"type":"goalCreated","goal":"\#(other)","title":"B"}"#,
                    #"{"type":"goalCreated","goal":"\#(other)","title":"C"}"#,
                ]), now: now)
        }
        #expect(try t.store.snapshot() == before)
        // Every index agrees with the log.
        #expect(try t.store.verify().problems.isEmpty)
    }

    @Test func progressAfterTheDeviceChangesZoneInTheSameBatchTakesTheNewZonesDay() throws {
        let t = try TemporaryStore()
        let goal = "30000000-0000-4000-8000-000000000011"
        // 23:30 UTC is the same day in UTC and the next one in Berlin.
        let late = "2026-11-04T23:30:00Z"
        // Created in a batch of its own: progress in a later batch reads the goal's stored status.
        try t.store.append(
            try drafts([#"{"type":"goalCreated","goal":"\#(goal)","title":"Walk","cadence":"daily","progress":{"kind":"outcome"}}"#]),
            now: now)
        try t.store.append(
            try drafts([
                #"{"type":"progressRecorded","goal":"\#(goal)","completed":true,"occurredAt":"\#(late)"}"#,
                #"{"type":"deviceConfigured","timeZone":"Europe/Berlin","firstWeekday":2,"locale":"de_DE"}"#,
                #"{"type":"progressRecorded","goal":"\#(goal)","completed":true,"occurredAt":"\#(late)"}"#,
                #"{"type":"deviceConfigured","timeZone":"UTC","firstWeekday":2,"locale":"de_DE"}"#,
                #"{"type":"progressRecorded","goal":"\#(goal)","completed":true,"occurredAt":"\#(late)"}"#,
            ]), now: now)
        let days = try t.store.events(ofGoal: UUID(uuidString: goal)!).compactMap { e -> Day? in
            guard case .progressRecorded(let p) = e.event.payload else { return nil }
            return p.day
        }
        #expect(days == [day("2026-11-04"), day("2026-11-05"), day("2026-11-04")])
    }

    @Test func anEmptyBatchWritesNothing() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        let before = try t.store.snapshot()
        #expect(try t.store.append([], now: now).isEmpty)
        #expect(try t.store.snapshot() == before)
    }

    @Test func expectedVersionGuardsOneGoal() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        let before = try t.store.snapshot()
        let edit = try drafts([#"{"type":"goalEdited","goal":"\#(runGoal)","title":"Run 6 km"}"#])
        #expect(ledgerError { try t.store.append(edit, expectedVersion: 1, now: now) }?.code == .versionConflict)
        #expect(try t.store.snapshot() == before)
        let ok = try t.store.append(edit, expectedVersion: 2, now: now)
        #expect(ok.count == 1)
        #expect(try t.store.goalState(UUID(uuidString: runGoal)!).version == 3)
        // A new goal is at version 0.
        let create = try drafts([#"{"type":"goalCreated","goal":"30000000-0000-4000-8000-000000000000","title":"New"}"#])
        #expect(try t.store.append(create, expectedVersion: 0, now: now).count == 1)
    }

    @Test func fillsInWhatTheAuthorReplacedAndObserved() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        try t.store.append(
            try drafts([
                #"{"type":"goalEdited","goal":"\#(runGoal)","title":"Run 6 km","target":6}"#,
                #"{"type":"reminderSet","goal":"\#(runGoal)","minute":45}"#,
                #"{"type":"tagAdded","goal":"\#(runGoal)","tag":"sport"}"#,
                #"{"type":"tagRemoved","goal":"\#(runGoal)","tag":"sport"}"#,
                #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":1,"occurredAt":"2026-11-04T23:30:00Z"}"#,
            ]), now: now)
        let events = try t.store.events(ofGoal: UUID(uuidString: runGoal)!).map(\.event)
        let created = events[0].id
        guard case .goalEdited(let edit) = events[2].payload, case .reminderSet(let reminder) = events[3].payload,
            case .tagRemoved(let removal) = events[5].payload, case .progressRecorded(let entry) = events[6].payload
        else {
            Issue.record("unexpected events \(events.map(\.type))")
            return
        }
        #expect(edit.replaces == [.title: created, .target: created])
        #expect(reminder.hour == 7 && reminder.minute == 45 && reminder.replaces == created)
        #expect(Set(removal.observed) == [created, events[4].id])
        // Berlin is an hour ahead: 23:30 UTC is the next local day.
        #expect(entry.day == day("2026-11-05"))
        #expect(entry.occurredAt == instant("2026-11-04T23:30:00Z"))
        let state = try t.store.goalState(UUID(uuidString: runGoal)!)
        #expect(state.tags.isEmpty)
        #expect(try state.reminder?.value == ReminderTime(hour: 7, minute: 45))
    }

    @Test func restoreBringsADeletedGoalBackWithItsHistory() throws {
        let t = try TemporaryStore()
        try t.store.append(try drafts(dayOne), now: now)
        try t.store.append(try drafts([#"{"type":"goalRestored","goal":"\#(callGoal)"}"#]), now: now)
        let state = try t.store.goalState(UUID(uuidString: callGoal)!)
        #expect(!state.isDeleted)
        #expect(state.entries.count == 1)
        #expect(throws: LedgerError.self) {
            try t.store.append(try drafts([#"{"type":"goalRestored","goal":"\#(callGoal)"}"#]), now: now)
        }
    }

    @Test func storesRefuseWhatIsNotTheirs() throws {
        let dir = TemporaryDirectory()
        #expect(throws: LedgerError.self) { try LedgerStore.open(at: dir.path + "/missing") }
        #expect(throws: LedgerError.self) { try LedgerStore.create(at: dir.path + "/s", device: "Phone!") }
        _ = try LedgerStore.create(at: dir.path + "/s", device: "phone")
        #expect(ledgerError { _ = try LedgerStore.create(at: dir.path + "/s", device: "phone") }?.code == .store)
        let reopened = try LedgerStore.open(at: dir.path + "/s")
        #expect(reopened.device == "phone" && reopened.schema == 2)
    }
}
