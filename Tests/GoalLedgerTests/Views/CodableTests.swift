import Foundation
import Testing

@testable import GoalLedger

/// Snapshots and their parts are Codable in the JSON forms the command line prints: a round trip
/// gives equal values, the encoding is the command line's form plus the documented keys, and
/// malformed input is refused with a `DecodingError` naming the field.
struct CodableTests {
    static let water = UUID(uuidString: "3C2E1B7A-5D4F-4A21-9E0B-1F2A3B4C5D6E")!
    static let call = UUID(uuidString: "0A1B2C3D-4E5F-4061-8293-A4B5C6D7E8F9")!
    static let old = UUID(uuidString: "F0E1D2C3-B4A5-4697-8899-AABBCCDDEEFF")!
    static let monday = instant("2026-11-02T07:00:00Z")
    static let now = instant("2026-11-02T12:00:00Z")

    /// A store with a measurable goal (entries 0.1 and 0.2, a routed reminder, tags, a target
    /// date), an outcome goal with a completion and a deleted goal.
    static func store() throws -> TemporaryStore {
        let t = try TemporaryStore()
        try t.store.append(
            [
                EventDraft(
                    payload: .deviceConfigured(try DeviceConfigured(timeZone: TimeZone(identifier: "Europe/Berlin")!, firstWeekday: 2))),
                EventDraft(
                    payload: .goalCreated(
                        GoalCreated(
                            goal: water, title: "Drink water", details: "Before noon", cadence: .daily, targetDate: day("2026-12-31"),
                            progressKind: .measurable, target: try! Amount("2"), unit: "l", reminder: try ReminderTime(hour: 9, minute: 30),
                            tags: ["morning", "health"], reminderDevices: ["phone"]))),
                EventDraft(payload: .goalCreated(GoalCreated(goal: call, title: "Call grandma", cadence: .weekly))),
                EventDraft(payload: .goalCreated(GoalCreated(goal: old, title: "Old habit", cadence: .once))),
                EventDraft(
                    payload: .progressRecorded(
                        ProgressRecorded(goal: water, amount: try Amount(0.1), occurredAt: instant("2026-11-02T06:59:59.250Z")))),
                EventDraft(payload: .progressRecorded(ProgressRecorded(goal: water, amount: try Amount(0.2)))),
                EventDraft(payload: .progressRecorded(ProgressRecorded(goal: call, completed: true))),
                EventDraft(payload: .goalDeleted(GoalRegisterWrite(goal: old))),
            ], now: monday)
        return t
    }

    static func encode<T: Encodable>(_ value: T) throws -> Data { try JSONEncoder().encode(value) }

    @Test func snapshotsRoundTripThroughJSONEncoderAndDecoder() throws {
        let t = try Self.store()
        let rows = try t.store.goals(now: Self.now, includingDeleted: true)
        #expect(rows.count == 3)
        let w = try #require(rows.first { $0.id == Self.water })
        #expect(w.goal.entries.map(\.amount) == [0.1, 0.2] && w.goal.reminderDevices == ["phone"] && w.goal.tags == ["health", "morning"])
        #expect(w.goal.entries[0].occurredAt.milliseconds % 1000 == 250)
        #expect(rows.first { $0.id == Self.old }?.goal.isDeleted == true)

        let decoded = try JSONDecoder().decode([GoalSnapshot].self, from: try Self.encode(rows))
        #expect(decoded == rows)
        for row in rows {
            #expect(try JSONDecoder().decode(GoalSnapshot.self, from: try Self.encode(row)) == row)
            #expect(try JSONDecoder().decode(Goal.self, from: try Self.encode(row.goal)) == row.goal)
            #expect(try JSONDecoder().decode(GoalView.self, from: try Self.encode(row.view)) == row.view)
        }

        // The parts on their own.
        func roundTrip<T: Codable & Equatable>(_ value: T) throws -> Bool {
            try JSONDecoder().decode(T.self, from: try Self.encode(value)) == value
        }
        #expect(try roundTrip(instant("2026-11-02T06:59:59.250Z")))
        #expect(try roundTrip(Instant(milliseconds: 1)))
        #expect(try roundTrip(Instant.latest) && roundTrip(Instant.earliest))
        #expect(try roundTrip(day("2028-02-29")) && roundTrip(Day.supported.upperBound))
        #expect(try roundTrip(HLC(milliseconds: 1_793_606_400_000, counter: 7)))
        #expect(try roundTrip(try Amount(-12.345678)))
        #expect(try roundTrip(try ReminderTime(hour: 23, minute: 59)))
        #expect(try roundTrip(Period(start: day("2026-11-02"), end: day("2026-11-08"))))
        #expect(try roundTrip(Streak(current: 2, best: 5)))
        #expect(try roundTrip(ProgressKind.measurable) && roundTrip(Cadence.yearly))
        #expect(String(decoding: try Self.encode([instant("2026-11-02T06:59:59.250Z")]), as: UTF8.self) == #"["2026-11-02T06:59:59.250Z"]"#)
        #expect(String(decoding: try Self.encode([HLC(rawValue: 0xAB)]), as: UTF8.self) == #"["00000000000000AB"]"#)
        #expect(String(decoding: try Self.encode([day("2026-02-01")]), as: UTF8.self) == #"["2026-02-01"]"#)

        // Values the forms cannot hold are not encoded.
        #expect(throws: EncodingError.self) { try Self.encode([Instant(milliseconds: -1)]) }
        #expect(throws: EncodingError.self) { try Self.encode([Day(daysSinceEpoch: -1)]) }
    }

    /// Objects with their members sorted by key, at every depth: members compare as a set.
    static func sorted(_ v: JSONValue) -> JSONValue {
        switch v {
        case .object(let members): return .object(members.map { ($0.0, sorted($0.1)) }.sorted { $0.0 < $1.0 })
        case .array(let items): return .array(items.map(sorted))
        default: return v
        }
    }

    @Test func theEncodingIsTheCommandLinesFormPlusEachEntrysClockAndTheCreationTime() throws {
        let t = try Self.store()
        let calendar = try t.store.deviceState(t.store.device).calendar
        for row in try t.store.goals(now: Self.now, includingDeleted: true) {
            // What `ledger goals --json` and `show --json` print: the goal's facts and `view`.
            let state = try t.store.goalState(row.id)
            guard case .object(var expected) = state.json else { throw LedgerError(.internal, "facts are not an object") }
            expected.append(("view", GoalView(goal: state, calendar: calendar, now: Self.now).json))

            guard case .object(var members) = try JSONParser.parse(Array(try Self.encode(row))) else {
                throw LedgerError(.internal, "a snapshot is not an object")
            }
            // The added keys: each field's version, the id of the event that wrote it ...
            let v = try #require(members.firstIndex { $0.0 == "versions" })
            let versions = JSONValue.object(GoalField.allCases.map { ($0.rawValue, .string(state.version(of: $0).description)) })
            #expect(Self.sorted(members[v].1) == Self.sorted(versions))
            members.remove(at: v)
            // ... and each entry's clock, as sixteen hex digits.
            let i = try #require(members.firstIndex { $0.0 == "entries" })
            guard case .array(let entries) = members[i].1 else { throw LedgerError(.internal, "entries are not an array") }
            var withoutClocks: [JSONValue] = []
            for (entry, original) in zip(entries, row.goal.entries) {
                guard case .object(let m) = entry else { throw LedgerError(.internal, "an entry is not an object") }
                #expect(entry["hlc"] == .string(original.hlc.description))
                withoutClocks.append(.object(m.filter { $0.0 != "hlc" }))
            }
            #expect(entries.count == row.goal.entries.count)
            members[i].1 = .array(withoutClocks)
            // The other added key: the wall time of the goal's creation.
            #expect(members.first { $0.0 == "createdAt" }?.1 == .string(row.goal.createdAt.rfc3339))
            #expect(row.goal.createdAt == state.createdAt?.value)
            members.removeAll { $0.0 == "createdAt" }
            #expect(Self.sorted(.object(members)) == Self.sorted(.object(expected)))
        }
    }

    @Test func aPeriodValueOfPointOnePlusPointTwoEncodesAsPointThree() throws {
        let t = try Self.store()
        let water = try #require(try t.store.goal(Self.water, now: Self.now))
        #expect(water.view.value?.description == "0.3")
        let text = String(decoding: try Self.encode(water), as: UTF8.self)
        // The number as JSON text (`JSONEncoder` orders keys as it likes: a comma or a brace follows).
        func shows(_ member: String) -> Bool { text.contains(member + ",") || text.contains(member + "}") }
        #expect(shows(#""value":0.3"#))
        #expect(shows(#""amount":0.1"#) && shows(#""amount":0.2"#) && shows(#""target":2"#))
        #expect(!text.contains("0.30000000000000004") && !text.contains("0.1000"))
        #expect(try JSONParser.parse(Array(text.utf8))["view"]?["value"] == .number(0.3))
        // Plain decimal, every digit, never an exponent: a Codable form writes what the JSON forms write.
        let amounts = try ["0.000001", "1000000", "999999999999.999999", "-123456789012.345678"].map { try Amount($0) }
        #expect(String(decoding: try Self.encode(amounts), as: UTF8.self) == "[0.000001,1000000,999999999999.999999,-123456789012.345678]")
        #expect(try JSONDecoder().decode([Amount].self, from: Self.encode(amounts)) == amounts)
    }

    /// The coding path of the error decoding `json` as `T` gives, as the ledger names fields
    /// (`entries[0].amount`), with the error's description; nil when it decodes.
    static func failure<T: Decodable>(_ json: JSONValue, as _: T.Type = GoalSnapshot.self) throws -> (path: String, message: String)? {
        do {
            _ = try JSONDecoder().decode(T.self, from: Data(try JSONWriter.string(json).utf8))
            return nil
        } catch let error as DecodingError {
            switch error {
            case .dataCorrupted(let c): return (CodingPathText.text(c.codingPath), c.debugDescription)
            case .keyNotFound(let key, let c): return (CodingPathText.text(c.codingPath + [key]), c.debugDescription)
            case .typeMismatch(_, let c), .valueNotFound(_, let c): return (CodingPathText.text(c.codingPath), c.debugDescription)
            @unknown default: return ("?", "\(error)")
            }
        }
    }

    /// `json` with the value at `path` replaced by `value` (removed when nil).
    static func setting(_ json: JSONValue, _ path: [Step], to value: JSONValue?) -> JSONValue {
        guard let step = path.first else { return value ?? .null }
        switch (json, step) {
        case (.object(var members), .key(let k)):
            if let i = members.firstIndex(where: { $0.0 == k }) {
                if path.count == 1 && value == nil {
                    members.remove(at: i)
                } else {
                    members[i].1 = setting(members[i].1, Array(path.dropFirst()), to: value)
                }
            } else if path.count == 1, let value {
                members.append((k, value))
            }
            return .object(members)
        case (.array(var items), .index(let i)):
            items[i] = setting(items[i], Array(path.dropFirst()), to: value)
            return .array(items)
        default:
            return json
        }
    }

    enum Step {
        case key(String)
        case index(Int)
    }

    @Test func malformedInputIsRefusedNamingTheField() throws {
        let t = try Self.store()
        let water = try #require(try t.store.goal(Self.water, now: Self.now))
        let json = try JSONParser.parse(Array(try Self.encode(water)))
        #expect(try Self.failure(json) == nil)

        func refusal(_ path: [Step], _ value: JSONValue?) throws -> (path: String, message: String) {
            try #require(try Self.failure(Self.setting(json, path, to: value)))
        }
        let entry0: [Step] = [.key("entries"), .index(0)]

        // An amount with seven digits after the point: the ledger's rule, named.
        let amount = try refusal(entry0 + [.key("amount")], .number(0.1234567))
        #expect(amount.path == "entries[0].amount")
        #expect(amount.message.contains("at most 6 digits after the decimal point"))
        // A date that does not exist.
        let badDay = try refusal(entry0 + [.key("day")], .string("2026-02-30"))
        #expect(badDay.path == "entries[0].day" && badDay.message.contains("2026-02-30"))
        #expect(try refusal([.key("targetDate")], .string("2026-02-30")).path == "targetDate")
        #expect(try refusal([.key("view"), .key("periodStart")], .string("2026-02-30")).path == "view.periodStart")
        // An instant that is not RFC 3339.
        let badInstant = try refusal(entry0 + [.key("occurredAt")], .string("2026-11-02 07:00"))
        #expect(badInstant.path == "entries[0].occurredAt" && badInstant.message.contains("RFC 3339"))
        #expect(try refusal(entry0 + [.key("occurredAt")], .string("1969-12-31T23:59:59Z")).path == "entries[0].occurredAt")
        // A missing id, of the goal and of an entry.
        #expect(try refusal([.key("id")], nil).path == "id")
        #expect(try refusal(entry0 + [.key("id")], nil).path == "entries[0].id")
        #expect(try refusal([.key("id")], .string("not-a-uuid")).path == "id")

        // Other rules of the ledger, each naming its field.
        #expect(try refusal([.key("reminder"), .key("hour")], .number(24)).path == "reminder.hour")
        #expect(try refusal([.key("reminder"), .key("devices")], .array([.string("Phone")])).path == "reminder.devices")
        #expect(try refusal([.key("title")], .string("")).path == "title")
        #expect(try refusal([.key("tags"), .index(1)], .string(" ")).path == "tags[1]")
        #expect(try refusal([.key("progress"), .key("target")], .number(0)).path == "progress.target")
        #expect(try refusal([.key("progress"), .key("kind")], .string("sometimes")).path == "progress.kind")
        #expect(try refusal([.key("cadence")], .string("hourly")).path == "cadence")
        #expect(try refusal([.key("details")], nil).path == "details")
        #expect(try refusal(entry0 + [.key("hlc")], nil).path == "entries[0].hlc")
        #expect(try refusal(entry0 + [.key("hlc")], .string("xyz")).path == "entries[0].hlc")
        #expect(try refusal(entry0 + [.key("amount")], nil).path == "entries[0].amount")
        #expect(try refusal(entry0 + [.key("completed")], .bool(true)).path == "entries[0].completed")
        #expect(try refusal(entry0 + [.key("device")], .string("My Phone")).path == "entries[0].device")
        #expect(try refusal([.key("view"), .key("periodEnd")], .string("2026-11-01")).path == "view.periodEnd")
        #expect(try refusal([.key("view"), .key("periodEnd")], .null).path == "view.periodEnd")
        #expect(try refusal([.key("view"), .key("value")], .bool(true)).path == "view.value")
        #expect(try refusal([.key("view"), .key("streak"), .key("best")], .number(-1)).path == "view.streak.best")
        #expect(try refusal([.key("view")], nil).path == "view")

        // An outcome goal's value is its completion; a one-time goal has no period and no streak.
        let call = try JSONParser.parse(Array(try Self.encode(try #require(try t.store.goal(Self.call, now: Self.now)))))
        #expect(call["view"]?["value"] == .bool(true) && call["progress"] == .object([("kind", .string("outcome"))]))
        #expect(try Self.failure(Self.setting(call, [.key("view"), .key("value")], to: .bool(false)))?.path == "view.value")
        let old = try JSONParser.parse(Array(try Self.encode(try #require(try t.store.goal(Self.old, now: Self.now)))))
        #expect(old["view"]?["streak"] == .null && old["view"]?["periodStart"] == .null)
        let streak = JSONValue.object([("current", .number(0)), ("best", .number(0))])
        #expect(try Self.failure(Self.setting(old, [.key("view"), .key("streak")], to: streak))?.path == "view.streak")

        // Each value on its own.
        #expect(try Self.failure(.array([.number(0.1234567)]), as: [Amount].self)?.path == "[0]")
        #expect(try Self.failure(.array([.string("2026-02-30")]), as: [Day].self)?.message.contains("real date") == true)
        #expect(try Self.failure(.array([.string("2026-11-02T07:00:00")]), as: [Instant].self)?.path == "[0]")
        #expect(try Self.failure(.object([("hour", .number(9)), ("minute", .number(60))]), as: ReminderTime.self)?.path == "minute")
        #expect(
            try Self.failure(.object([("start", .string("2026-11-02")), ("end", .string("2026-11-01"))]), as: Period.self)?.path == "end")
    }
}
