import Foundation
import Testing

@testable import GoalLedger

struct ReminderJSONTests {
    @Test func requestShape() throws {
        let goal = ReminderGoal(goalID(7), title: "Read \"Dune\"", cadence: .daily)
        let r = try #require(
            ReminderPlan.requests(for: goal.state, device: device("America/New_York"), now: instant("2026-06-10T12:00:00Z")).first)
        #expect(
            try JSONWriter.string(r.json)
                == #"{"id":"goal-reminder-00000000-0000-4000-8000-000000000007","goal":"00000000-0000-4000-8000-000000000007","title":"Read \"Dune\"","body":"Time for today's goal","sound":"default","trigger":{"type":"calendar","components":{"hour":9,"minute":0},"repeats":true},"nextFireAt":"2026-06-10T13:00:00Z"}"#
        )
        let windowed = try #require(
            ReminderPlan.requests(
                for: goal.state, device: device("America/New_York", strategy: .window), now: instant("2026-03-07T15:00:00Z")
            ).first)
        #expect(
            try JSONWriter.string(windowed.json)
                == #"{"id":"goal-reminder-00000000-0000-4000-8000-000000000007-20260308","goal":"00000000-0000-4000-8000-000000000007","title":"Read \"Dune\"","body":"Time for today's goal","sound":"default","trigger":{"type":"date","fireAt":"2026-03-08T13:00:00Z","repeats":false},"nextFireAt":"2026-03-08T13:00:00Z"}"#
        )
    }

    @Test func triggerShapes() throws {
        #expect(
            try JSONWriter.string(calendarTrigger(year: 2027, month: 5, day: 31, 9, 0, repeats: false).json)
                == #"{"type":"calendar","components":{"year":2027,"month":5,"day":31,"hour":9,"minute":0},"repeats":false}"#)
        #expect(
            try JSONWriter.string(calendarTrigger(weekday: 2, 7, 45, repeats: true).json)
                == #"{"type":"calendar","components":{"weekday":2,"hour":7,"minute":45},"repeats":true}"#)
        #expect(
            try JSONWriter.string(calendarTrigger(month: 1, day: 1, 9, 0, repeats: true).json)
                == #"{"type":"calendar","components":{"month":1,"day":1,"hour":9,"minute":0},"repeats":true}"#)
        #expect(
            try JSONWriter.string(NotificationTrigger(kind: .date(instant("2026-03-08T07:00:00Z")), repeats: false).json)
                == #"{"type":"date","fireAt":"2026-03-08T07:00:00Z","repeats":false}"#)
    }

    @Test func triggersRoundTripThroughJSONText() throws {
        let triggers = [
            calendarTrigger(year: 2027, month: 5, day: 31, 9, 0, repeats: false),
            calendarTrigger(0, 0, repeats: true),
            calendarTrigger(weekday: 7, 23, 59, repeats: true),
            calendarTrigger(day: 1, 9, 0, repeats: true),
            calendarTrigger(month: 1, day: 1, 9, 0, repeats: true),
            calendarTrigger(month: 2, day: 29, 9, 0, repeats: true),
            NotificationTrigger(kind: .date(instant("2026-11-01T05:30:00Z")), repeats: false),
            NotificationTrigger(kind: .date(instant("2026-11-01T05:30:00.250Z")), repeats: false),
        ]
        for t in triggers {
            #expect(try NotificationTrigger(json: t.json) == t)
            #expect(try NotificationTrigger(json: JSONParser.parse(try JSONWriter.string(t.json))) == t)
        }
        // Any RFC 3339 spelling of the instant reads; it is written back in UTC.
        let offset = try NotificationTrigger(
            json: JSONParser.parse(#"{"type":"date","fireAt":"2026-11-01T01:30:00-04:00","repeats":false}"#))
        #expect(offset.kind == .date(instant("2026-11-01T05:30:00Z")))
    }

    @Test func badTriggersAreRefusedNamingTheField() throws {
        let cases: [(String, String?)] = [
            ("[]", nil),
            (#"{"components":{"hour":9,"minute":0},"repeats":true}"#, "type"),
            (#"{"type":"interval","seconds":60,"repeats":true}"#, "type"),
            (#"{"type":7,"repeats":true}"#, "type"),
            (#"{"type":"calendar","repeats":true}"#, "components"),
            (#"{"type":"calendar","components":[9,0],"repeats":true}"#, "components"),
            (#"{"type":"calendar","components":{"minute":0},"repeats":true}"#, "components.hour"),
            (#"{"type":"calendar","components":{"hour":9},"repeats":true}"#, "components.minute"),
            (#"{"type":"calendar","components":{"hour":24,"minute":0},"repeats":true}"#, "components.hour"),
            (#"{"type":"calendar","components":{"hour":9,"minute":1.5},"repeats":true}"#, "components.minute"),
            (#"{"type":"calendar","components":{"hour":"9","minute":0},"repeats":true}"#, "components.hour"),
            (#"{"type":"calendar","components":{"weekday":0,"hour":9,"minute":0},"repeats":true}"#, "components.weekday"),
            (#"{"type":"calendar","components":{"month":13,"hour":9,"minute":0},"repeats":true}"#, "components.month"),
            (#"{"type":"calendar","components":{"year":0,"hour":9,"minute":0},"repeats":true}"#, "components.year"),
            (#"{"type":"calendar","components":{"month":4,"day":31,"hour":9,"minute":0},"repeats":true}"#, "components.day"),
            (#"{"type":"calendar","components":{"year":2027,"month":2,"day":29,"hour":9,"minute":0},"repeats":false}"#, "components.day"),
            (#"{"type":"calendar","components":{"hour":9,"minute":0,"second":0},"repeats":true}"#, "components.second"),
            (#"{"type":"calendar","components":{"hour":9,"minute":0}}"#, "repeats"),
            (#"{"type":"calendar","components":{"hour":9,"minute":0},"repeats":"yes"}"#, "repeats"),
            (#"{"type":"calendar","components":{"hour":9,"minute":0},"repeats":true,"sound":"default"}"#, "sound"),
            (#"{"type":"date","repeats":false}"#, "fireAt"),
            (#"{"type":"date","fireAt":"tomorrow","repeats":false}"#, "fireAt"),
            (#"{"type":"date","fireAt":"2026-03-08T07:00:00Z"}"#, "repeats"),
            (#"{"type":"date","fireAt":"2026-03-08T07:00:00Z","repeats":true}"#, "repeats"),
            (#"{"type":"date","fireAt":"2026-03-08T07:00:00Z","repeats":false,"components":{"hour":9,"minute":0}}"#, "components"),
        ]
        for (text, field) in cases {
            let error = triggerError(try JSONParser.parse(text))
            #expect(error != nil, "\(text)")
            #expect(error?.field == field, "\(text): \(error?.message ?? "")")
        }
        #expect(
            triggerError(try JSONParser.parse(#"{"type":"date","fireAt":"2026-03-08T07:00:00Z","repeats":true}"#))?.message
                == "must be false for a date trigger")
    }
}
