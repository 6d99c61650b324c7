import Foundation
import GoalLedgerTesting
import Testing

@testable import GoalLedger

/// A weekly reminder on a chosen weekday: the planner (both strategies, across daylight saving),
/// the default left as it was, the reconciler, the gate and the event forms.
struct ReminderWeekdayPlanTests {
    /// Saturday 08:15, the reminder of someone who exercises on Saturdays.
    let saturday = ReminderTime(unchecked: 8, 15, weekday: 7)

    func repeating(_ zone: String, firstWeekday: Int = 1) -> DeviceState { device(zone, firstWeekday: firstWeekday) }

    func window(_ zone: String, firstWeekday: Int = 1, days: Int = 14) -> DeviceState {
        device(zone, firstWeekday: firstWeekday, strategy: .window, windowDays: days)
    }

    /// The window's requests as day (`YYYYMMDD`) → instant.
    func fires(_ goal: ReminderGoal, _ device: DeviceState, now: String) -> [String: String] {
        let requests = ReminderPlan.requests(for: goal.state, device: device, now: instant(now))
        for r in requests {
            #expect(r.id.hasPrefix("goal-reminder-" + goal.id.uuidString + "-") && ReminderPlan.isGoalReminderID(r.id))
            #expect(r.trigger == NotificationTrigger(kind: .date(r.plannedFireAt), repeats: false))
        }
        return Dictionary(uniqueKeysWithValues: requests.map { (String($0.id.suffix(8)), $0.plannedFireAt.rfc3339) })
    }

    /// The next fire time of the repeating strategy at `now`.
    func next(_ goal: ReminderGoal, _ device: DeviceState, now: String) throws -> NotificationRequest {
        let requests = ReminderPlan.requests(for: goal.state, device: device, now: instant(now))
        #expect(requests.count == 1)
        return try #require(requests.first)
    }

    @Test func aSaturdayReminderRepeatsOnSaturdayWhateverTheFirstWeekday() throws {
        let goal = ReminderGoal(goalID(1), cadence: .weekly, reminder: saturday)
        for firstWeekday in [1, 2] {
            let r = try next(goal, repeating("America/New_York", firstWeekday: firstWeekday), now: "2026-06-10T12:00:00Z")
            #expect(r.id == "goal-reminder-00000000-0000-4000-8000-000000000001")
            #expect(r.trigger == calendarTrigger(weekday: 7, 8, 15, repeats: true))
            #expect(r.nextFireAt == instant("2026-06-13T12:15:00Z"))  // Saturday 08:15 EDT
            #expect(r.body == "Keep up this week's goal")
        }
    }

    /// New York: spring forward on Sunday 2026-03-08, fall back on Sunday 2026-11-01. Berlin:
    /// Sunday 2026-03-29 and Sunday 2026-10-25. The Saturday before and after each keep 08:15
    /// local time, so their UTC instants differ by the hour the clocks moved.
    @Test(arguments: [
        ("America/New_York", "2026-03-06T12:00:00Z", "2026-03-07T13:15:00Z", "2026-03-14T12:15:00Z"),
        ("America/New_York", "2026-10-30T12:00:00Z", "2026-10-31T12:15:00Z", "2026-11-07T13:15:00Z"),
        ("Europe/Berlin", "2026-03-27T12:00:00Z", "2026-03-28T07:15:00Z", "2026-04-04T06:15:00Z"),
        ("Europe/Berlin", "2026-10-23T12:00:00Z", "2026-10-24T06:15:00Z", "2026-10-31T07:15:00Z"),
    ])
    func aSaturdayKeepsItsLocalTimeAcrossDaylightSaving(zone: String, friday: String, before: String, after: String) throws {
        let goal = ReminderGoal(cadence: .weekly, reminder: saturday)
        // Repeating: one trigger, the next fire time before the transition, then after it.
        #expect(try next(goal, repeating(zone), now: friday).nextFireAt == instant(before))
        let justAfter = Instant(milliseconds: instant(before).milliseconds + 1)
        #expect(try next(goal, repeating(zone), now: justAfter.rfc3339).nextFireAt == instant(after))
        // Window: a dated request for each Saturday, none for any other day.
        let dayOf = { (text: String) in String(text.prefix(10).filter { $0 != "-" }) }
        #expect(fires(goal, window(zone, days: 14), now: friday) == [dayOf(before): before, dayOf(after): after])
        #expect(fires(goal, window(zone, firstWeekday: 2, days: 14), now: friday) == [dayOf(before): before, dayOf(after): after])
    }

    @Test func windowRequestsFallOnTheChosenWeekdayOnly() {
        let goal = ReminderGoal(cadence: .weekly, reminder: saturday)
        let now = "2026-06-10T12:00:00Z"  // Wednesday
        for firstWeekday in 1...7 {
            #expect(
                fires(goal, window("America/New_York", firstWeekday: firstWeekday, days: 21), now: now) == [
                    "20260613": "2026-06-13T12:15:00Z", "20260620": "2026-06-20T12:15:00Z", "20260627": "2026-06-27T12:15:00Z",
                ], "first weekday \(firstWeekday)")
        }
        // On the chosen day itself, once its time has passed, the next week's request is the first.
        #expect(fires(goal, window("America/New_York", days: 8), now: "2026-06-13T12:15:00Z") == ["20260620": "2026-06-20T12:15:00Z"])
    }

    @Test func withoutAWeekdayTheDevicesFirstWeekdayStillDecides() throws {
        let goal = ReminderGoal(goalID(2), cadence: .weekly, reminder: hm(8, 15))
        let monday = try next(goal, repeating("America/New_York", firstWeekday: 2), now: "2026-06-10T12:00:00Z")
        #expect(monday.id == "goal-reminder-00000000-0000-4000-8000-000000000002")
        #expect(monday.trigger == calendarTrigger(weekday: 2, 8, 15, repeats: true))
        #expect(monday.nextFireAt == instant("2026-06-15T12:15:00Z"))
        #expect(
            fires(goal, window("America/New_York", firstWeekday: 2, days: 7), now: "2026-06-10T12:00:00Z") == [
                "20260615": "2026-06-15T12:15:00Z"
            ])
        // Its facts print as they always did: no `weekday` member.
        #expect(try JSONWriter.string(goal.state.json).contains(#""reminder":{"hour":8,"minute":15},"tags""#))
    }

    /// The week (the device's, Monday to Sunday here) is complete by Tuesday's entry, before
    /// today: its Saturday has no request; next Saturday's week is open.
    @Test func aWeekCompletedBeforeTodaySkipsItsSaturday() {
        var goal = ReminderGoal(cadence: .weekly, reminder: saturday)
        let ny = window("America/New_York", firstWeekday: 2, days: 14)
        let thursday = "2026-06-11T12:00:00Z"
        #expect(fires(goal, ny, now: thursday).keys.sorted() == ["20260613", "20260620"])
        goal.complete(on: "2026-06-09")
        #expect(fires(goal, ny, now: thursday).keys.sorted() == ["20260620"])
        // With Sunday as the first weekday, Sunday 06-14 starts another week holding the 20th.
        var sundayWeeks = ReminderGoal(cadence: .weekly, reminder: saturday)
        sundayWeeks.complete(on: "2026-06-14")
        #expect(fires(sundayWeeks, window("America/New_York", firstWeekday: 1, days: 14), now: thursday).keys.sorted() == ["20260613"])
    }

    @Test func aWeekdayOnAGoalThatIsNotWeeklyIsKeptAndAppliesOnceItIs() throws {
        var goal = ReminderGoal(cadence: .daily, reminder: saturday)
        let ny = repeating("America/New_York")
        let now = "2026-06-10T12:00:00Z"
        #expect((goal.state.reminder?.value ?? nil)?.weekday == 7)
        #expect(try next(goal, ny, now: now).trigger == calendarTrigger(8, 15, repeats: true))
        goal.apply(.goalEdited(GoalEdited(goal: goal.id, cadence: .weekly)))
        #expect(try next(goal, ny, now: now).trigger == calendarTrigger(weekday: 7, 8, 15, repeats: true))
        goal.apply(.goalEdited(GoalEdited(goal: goal.id, cadence: .monthly)))
        #expect(try next(goal, ny, now: now).trigger == calendarTrigger(day: 1, 8, 15, repeats: true))
    }

    @Test func aReminderSetWithoutAWeekdayReturnsToTheFirstWeekday() throws {
        var goal = ReminderGoal(cadence: .weekly, reminder: saturday)
        goal.apply(.reminderSet(ReminderSet(goal: goal.id, hour: 8, minute: 15)))
        #expect(goal.state.reminder?.value == hm(8, 15))
        #expect(
            try next(goal, repeating("UTC", firstWeekday: 2), now: "2026-06-10T12:00:00Z").trigger
                == calendarTrigger(weekday: 2, 8, 15, repeats: true))
    }
}

/// A chosen weekday through a store: the stored pending table, the reconciler, the gate, the
/// forms of the events and the digest.
struct ReminderWeekdayStoreTests {
    let now = instant("2026-06-10T12:00:00Z")  // Wednesday
    let goal = goalID(7)
    var rid: String { "goal-reminder-" + goal.uuidString }

    func store(strategy: String = "repeating", firstWeekday: Int = 2) throws -> TemporaryStore {
        let t = try TemporaryStore()
        try t.store.append(
            try drafts([
                #"{"type":"deviceConfigured","timeZone":"Europe/Berlin","firstWeekday":\#(firstWeekday),"strategy":"\#(strategy)","windowDays":14,"at":"2026-06-01T00:00:00Z"}"#,
                #"{"type":"notificationAuthorization","status":"authorized","at":"2026-06-01T00:00:00Z"}"#,
                #"{"type":"goalCreated","goal":"\#(goal.uuidString)","title":"Swim","cadence":"weekly","reminder":{"hour":8,"minute":15,"weekday":7}}"#,
            ]), now: now)
        return t
    }

    @Test func theStoredTablePlansTheChosenWeekdayAndVerifies() throws {
        let t = try store()
        let plan = try t.store.pendingPlan(device: "phone", now: now).1
        #expect(plan.requests.map(\.id) == [rid])
        #expect(plan.requests.first?.trigger == calendarTrigger(weekday: 7, 8, 15, repeats: true))
        #expect(plan.requests.first?.nextFireAt == instant("2026-06-13T06:15:00Z"))
        #expect(try t.store.verify().isClean)
        try t.store.rebuild()
        #expect(try t.store.pendingPlan(device: "phone", now: now).1 == plan)
    }

    /// The stored table reads entries by day from the first period that can hold a request:
    /// for a Saturday in a week that began on Monday, that is before today.
    @Test func theStoredWindowSeesAWeekCompletedBeforeToday() throws {
        let t = try store(strategy: "window")
        let thursday = instant("2026-06-11T12:00:00Z")
        #expect(try t.store.pendingPlan(device: "phone", now: thursday).1.requests.map(\.id) == [rid + "-20260613", rid + "-20260620"])
        try t.store.append(
            try drafts([#"{"type":"progressRecorded","goal":"\#(goal.uuidString)","completed":true,"day":"2026-06-09"}"#]), now: thursday)
        #expect(try t.store.pendingPlan(device: "phone", now: thursday).1.requests.map(\.id) == [rid + "-20260620"])
        let replayed = try t.store.goalState(goal)
        let pure = ReminderPlan.plan(goals: [replayed], device: try t.store.deviceState("phone"), now: thursday)
        #expect(pure.requests.map(\.id) == [rid + "-20260620"])
    }

    @Test func changingTheWeekdayReplacesTheRepeatingRequest() async throws {
        let t = try store()
        let center = InMemoryReminderCenter()
        let reconciler = Reconciler(store: t.store, centerID: "test")
        _ = try await reconciler.reconcile(center: center, now: now)
        #expect(center.requests.map(\.trigger) == [calendarTrigger(weekday: 7, 8, 15, repeats: true)])
        center.withState { $0.calls = [] }
        try t.store.setReminder(goal, at: try ReminderTime(weekday: 1, hour: 8, minute: 15), now: now)
        let r = try await reconciler.reconcile(center: center, now: now)
        #expect(r.scheduled == [rid] && r.cancelled.isEmpty)
        #expect(center.requests.map(\.trigger) == [calendarTrigger(weekday: 1, 8, 15, repeats: true)])
        #expect(center.withState { $0.calls } == ["add \(rid)"])
        // An unchanged weekday changes nothing.
        let again = try await reconciler.reconcile(center: center, now: now, full: true)
        #expect(again.scheduled.isEmpty && again.cancelled.isEmpty && again.unchanged == 1)
    }

    @Test func changingTheWeekdaySchedulesTheNewDaysBeforeCancellingTheOld() async throws {
        let t = try store(strategy: "window")
        let center = InMemoryReminderCenter()
        let reconciler = Reconciler(store: t.store, centerID: "test")
        _ = try await reconciler.reconcile(center: center, now: now)
        #expect(center.requests.map(\.id).sorted() == [rid + "-20260613", rid + "-20260620"])
        center.withState { $0.calls = [] }
        try t.store.append(
            try drafts([#"{"type":"reminderSet","goal":"\#(goal.uuidString)","weekday":1}"#]), now: now)
        let r = try await reconciler.reconcile(center: center, now: now)
        let sundays = [rid + "-20260614", rid + "-20260621"]
        let saturdays = [rid + "-20260613", rid + "-20260620"]
        #expect(r.scheduled.sorted() == sundays && r.cancelled.sorted() == saturdays)
        #expect(center.requests.map(\.id).sorted() == sundays)
        let calls = center.withState { $0.calls }
        let lastAdd = try #require(calls.lastIndex { $0.hasPrefix("add ") })
        let firstRemove = try #require(calls.firstIndex { $0.hasPrefix("remove ") })
        #expect(lastAdd < firstRemove, "\(calls)")
        // The reminderSet kept the time (omitted parts keep it) and chose Sunday.
        #expect(try t.store.goalState(goal).reminder?.value == ReminderTime(unchecked: 8, 15, weekday: 1))
    }

    @Test(arguments: [
        (#""weekday":0"#, #"field "weekday": must be between 1 and 7, got 0"#),
        (#""weekday":8"#, #"field "weekday": must be between 1 and 7, got 8"#),
        (#""weekday":"saturday""#, #"field "weekday""#),
        (#""weekday":"7""#, #"field "weekday""#),
        (#""weekday":6.5"#, #"field "weekday""#),
    ])
    func theGateRefusesABadWeekdayNamingItAndChangesNothing(member: String, message: String) throws {
        let t = try store()
        let before = try t.store.digest()
        let set = #"{"type":"reminderSet","goal":"\#(goal.uuidString)",\#(member)}"#
        let create = #"{"type":"goalCreated","goal":"\#(goalID(8).uuidString)","title":"Run","cadence":"weekly","reminder":{\#(member)}}"#
        for (line, field) in [
            (set, message), (create, message.replacingOccurrences(of: #"field "weekday""#, with: #"field "reminder.weekday""#)),
        ] {
            let error = ledgerError { try t.store.append([try EventDraft(line: line, number: 3)], now: now) }
            #expect(error?.message.hasPrefix("line 3: " + field) == true, "\(error?.message ?? "accepted")")
        }
        #expect(try t.store.digest() == before)
        #expect(try t.store.goalState(goal).reminder?.value == ReminderTime(unchecked: 8, 15, weekday: 7))
    }

    @Test func typedValuesWithABadWeekdayAreRefusedNamingTheField() throws {
        #expect(throws: FieldError("weekday", "must be between 1 and 7, got 0")) { try ReminderTime(weekday: 0, hour: 8, minute: 0) }
        #expect(throws: FieldError("weekday", "must be between 1 and 7, got 8")) { try ReminderTime(weekday: 8, hour: 8, minute: 0) }
        #expect(try ReminderTime(hour: 8, minute: 0).weekday == nil)
        let t = try store()
        let typed = ledgerError { try t.store.append([EventDraft(payload: .reminderSet(ReminderSet(goal: goal, weekday: 9)))], now: now) }
        #expect(typed?.message == #"event 1 of the batch: field "weekday": must be between 1 and 7, got 9"#)
        let created = ledgerError {
            try t.store.append(
                [
                    EventDraft(
                        payload: .goalCreated(
                            GoalCreated(goal: goalID(9), title: "Run", reminder: ReminderTime(unchecked: 8, 0, weekday: -1))))
                ],
                now: now)
        }
        #expect(created?.message == #"event 1 of the batch: field "reminder.weekday": must be between 1 and 7, got -1"#)
    }

    @Test func theTypedCallsCarryTheWeekday() throws {
        let t = try TemporaryStore()
        let swim = try t.store.createGoal(
            title: "Swim", cadence: .weekly, reminder: try ReminderTime(weekday: 7, hour: 8, minute: 15), now: now)
        #expect(try t.store.goal(swim)?.reminder?.weekday == 7)
        try t.store.setReminder(swim, at: try ReminderTime(weekday: 3, hour: 18, minute: 0), now: now)
        #expect(try t.store.goal(swim)?.reminder == (try ReminderTime(weekday: 3, hour: 18, minute: 0)))
        try t.store.setReminder(swim, at: try ReminderTime(hour: 18, minute: 0), now: now)
        #expect(try t.store.goal(swim)?.reminder?.weekday == nil)
        // The Codable form of a goal carries it only when chosen.
        try t.store.setReminder(swim, at: try ReminderTime(weekday: 3, hour: 18, minute: 0), now: now)
        let goal = try #require(try t.store.goal(swim))
        let data = try JSONEncoder().encode(goal)
        #expect(String(decoding: data, as: UTF8.self).contains(#""weekday":3"#))
        #expect(try JSONDecoder().decode(Goal.self, from: data) == goal)
    }

    @Test func jsonAndRecordFormsRoundTrip() throws {
        let lines = [
            #"{"type":"goalCreated","goal":"\#(goal.uuidString)","title":"Swim","cadence":"weekly","reminder":{"hour":8,"minute":15,"weekday":7,"devices":["phone"]}}"#,
            #"{"type":"reminderSet","goal":"\#(goal.uuidString)","hour":18,"minute":0,"weekday":1}"#,
        ]
        for (i, line) in lines.enumerated() {
            let draft = try EventDraft(line: line, number: 1)
            let event = Event(
                id: goalID(100 + i), origin: "phone", sequence: 1, hlc: HLC(milliseconds: 1_000, counter: 0),
                at: Instant(milliseconds: 1_000),
                schema: 2, payload: draft.payload)
            let decoded = try EventCodec.decode(EventCodec.encode(event))
            #expect(decoded == event)
            #expect(EventCodec.encode(decoded) == EventCodec.encode(event))
            let printed = try JSONWriter.string(decoded.json())
            #expect(
                printed.contains(
                    i == 0 ? #""reminder":{"hour":8,"minute":15,"weekday":7,"devices":["phone"]}"# : #""minute":0,"weekday":1"#))
        }
    }

    @Test func aRecordsWeekdayTakesANewPresenceBitAndOneByte() throws {
        func record(_ p: Payload) -> String {
            EventCodec.encode(
                Event(
                    id: goal, origin: "phone", sequence: 1, hlc: HLC(milliseconds: 1_000, counter: 0), at: Instant(milliseconds: 1_000),
                    schema: 2, payload: p)
            ).dropFirst(5).map { String(format: "%02x", $0) }.joined()
        }
        let id = goal.uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let envelope = id + "0000000003e80000" + "d00f" + "01" + "0570686f6e65" + "02"
        // reminderSet: presence bit 16 (after hour 1, minute 2, replaces 4, devices 8), the weekday last.
        #expect(
            record(.reminderSet(ReminderSet(goal: goal, hour: 18, minute: 0, weekday: 7))) == envelope + "05" + "13" + id + "12" + "00"
                + "07")
        #expect(record(.reminderSet(ReminderSet(goal: goal, hour: 18, minute: 0))) == envelope + "05" + "03" + id + "12" + "00")
        // goalCreated: presence bit 128, the weekday right after the reminder's time.
        #expect(
            record(
                .goalCreated(GoalCreated(goal: goal, title: "Run", cadence: .weekly, reminder: ReminderTime(unchecked: 7, 30, weekday: 6))))
                == envelope + "01" + "9001" + id + "0352756e" + "02" + "00" + "071e06" + "00")
        // A weekday without a reminder is a damaged record, refused, never folded.
        let forged = forgedCreation(flags: [0x80, 0x01])
        #expect(throws: RecordDecodingError.self) { try EventCodec.decode(forged) }
    }

    /// A goalCreated record whose presence flags are `flags` and that carries no reminder.
    func forgedCreation(flags: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 96)
        w.u8(1)
        for _ in 0..<4 { w.u8(0) }
        w.uuid(goal)
        w.u64BE(HLC(milliseconds: 1_000, counter: 0).rawValue)
        w.instant(Instant(milliseconds: 1_000))
        w.varint(1)
        w.string("phone")
        w.u8(2)
        w.u8(EventType.goalCreated.rawValue)
        w.bytes += flags
        w.uuid(goal)
        w.string("Run")
        w.u8(Cadence.weekly.storedCode)
        w.u8(ProgressKind.outcome.storedCode)
        w.u8(7)  // what a reader taking it for a weekday would read
        w.varint(0)
        let crc = w.bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[5...])) }
        for i in 0..<4 { w.bytes[1 + i] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * i)) }
        return w.bytes
    }

    @Test func theWeekdayCountsInTheDigestOnlyWhenChosen() throws {
        let t = try TemporaryStore()
        try t.store.append(
            try drafts([
                #"{"type":"goalCreated","goal":"\#(goal.uuidString)","title":"Swim","cadence":"weekly","reminder":{"hour":8,"minute":15}}"#
            ]),
            now: now)
        let plain = try t.store.digest()
        #expect(plain == (try DigestTests.reference(try t.store.replay())))
        try t.store.setReminder(goal, at: try ReminderTime(weekday: 7, hour: 8, minute: 15), now: now)
        let saturday = try t.store.digest()
        #expect(saturday != plain)
        #expect(saturday == (try DigestTests.reference(try t.store.replay())))
        #expect(saturday == (try t.store.replay().digest))
        #expect(try JSONWriter.string(t.store.goalState(goal).json).contains(#""reminder":{"hour":8,"minute":15,"weekday":7},"tags""#))
        try t.store.setReminder(goal, at: try ReminderTime(hour: 8, minute: 15), now: now)
        #expect(try t.store.digest() == plain)
        #expect(try t.store.verify().isClean)
    }
}
